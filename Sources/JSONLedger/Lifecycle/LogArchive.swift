import Foundation

/// The file `compact` writes the records before its horizon to, and `restore-log` reads:
///
/// ```
/// "JSONLedger log archive 1\n"  model length (UInt32 BE)  model JSON
/// then per record: batch id (UInt64 BE)  length (UInt32 BE)  the record as the log held it
/// ```
/// Each record keeps its own checksum, so a damaged archive names the batch.
enum LogArchive {
  static let magic = Array("JSONLedger log archive 1\n".utf8)

  /// Writes a new archive at `path` (refusing an existing file), flushed to disk before it
  /// returns: `records` is called with a function that appends one record.
  static func write(
    to path: String, model: [UInt8], _ records: ((UInt64, [UInt8]) throws -> Void) throws -> Void
  ) throws {
    guard !FileManager.default.fileExists(atPath: path) else {
      throw LedgerError.invalidArgument("\(path) exists: an archive is written to a new file")
    }
    guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
      let handle = FileHandle(forWritingAtPath: path)
    else {
      throw LedgerError.storage("cannot create the archive \(path)")
    }
    do {
      defer { try? handle.close() }
      var buffer = magic + [UInt8](bigEndian: UInt32(model.count)) + model
      try records { batchID, bytes in
        buffer += [UInt8](bigEndian: batchID) + [UInt8](bigEndian: UInt32(bytes.count)) + bytes
        if buffer.count > 1 << 20 {
          try handle.write(contentsOf: buffer)
          buffer.removeAll(keepingCapacity: true)
        }
      }
      try handle.write(contentsOf: buffer)
      try handle.synchronize()
    } catch {
      try? FileManager.default.removeItem(atPath: path)
      throw LedgerError.storage("cannot write the archive \(path): \(error)")
    }
  }

  /// The model of the archive at `path` and a reader of its records (batch id, stored bytes).
  static func read(_ path: String) throws -> (model: [UInt8], records: [(UInt64, [UInt8])]) {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw LedgerError.invalidArgument("cannot read the archive \(path)")
    }
    let bytes = [UInt8](data)
    func failure(_ reason: String) -> LedgerError {
      .invalidArgument("\(path) is not a whole log archive: \(reason)")
    }
    guard bytes.starts(with: magic), bytes.count >= magic.count + 4 else { throw failure("it does not start as one") }
    var position = magic.count
    func take(_ count: Int) throws -> ArraySlice<UInt8> {
      guard count >= 0, bytes.count - position >= count else { throw failure("it ends at byte \(position)") }
      defer { position += count }
      return bytes[position..<(position + count)]
    }
    let modelLength = Int(UInt32(bigEndianBytes: try take(4)))
    let model = Array(try take(modelLength))
    var records: [(UInt64, [UInt8])] = []
    while position < bytes.count {
      let batchID = UInt64(bigEndianBytes: try take(8))
      let length = Int(UInt32(bigEndianBytes: try take(4)))
      records.append((batchID, Array(try take(length))))
    }
    return (model, records)
  }
}
