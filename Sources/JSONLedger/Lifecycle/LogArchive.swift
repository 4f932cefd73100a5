import Foundation

/// The file `compact` writes the records before the log's new first batch to, and `restore-log` reads.
/// Format 2, written now:
///
/// ```
/// "JSONLedger log archive 2\n"  model length (UInt32 BE)  model JSON  model CRC-32 (UInt32 BE)
/// then per record: batch id (UInt64 BE)  length (UInt32 BE)  the record as the log held it
/// then the end: UInt64.max  record count (UInt64 BE)  CRC-32 of every byte before it (UInt32 BE)
/// ```
/// Each record keeps its own checksum, so a damaged record names its batch; the model's
/// checksum catches a changed model before it reads anything; the end marker, the count and
/// the checksum over the whole catch an archive cut short (at a record boundary too) or
/// missing a record. The file is written under a temporary name and renamed at the end, so
/// an archive cut short by a crash never has the name asked for.
///
/// Format 1 (jsonledger 0.6 and 0.7) had neither checksum nor end: it is still read, and
/// only each record's own checksum is checked.
enum LogArchive {
  static let magic = Array("JSONLedger log archive 2\n".utf8)
  static let magic1 = Array("JSONLedger log archive 1\n".utf8)
  private static let endMarker = UInt64.max

  /// The temporary name an archive is written under.
  static func partialPath(_ path: String) -> String { path + ".partial" }

  /// Writes a new archive at `path` (refusing an existing file), flushed to disk before it
  /// returns: `records` is called with a function that appends one record. On failure no
  /// file is left at `path`.
  static func write(
    to path: String, model: [UInt8], _ records: ((UInt64, [UInt8]) throws -> Void) throws -> Void
  ) throws {
    guard !FileManager.default.fileExists(atPath: path) else {
      throw LedgerError.destinationExists("\(path) exists: an archive is written to a new file", path: path)
    }
    let partial = partialPath(path)
    let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      let reason = errno == EEXIST ? "it exists (an archive cut short; remove it)" : SystemError.reason(errno)
      throw LedgerError.fileSystem("cannot create the archive's temporary file \(partial): \(reason)", path: partial)
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    do {
      var checksum: UInt32 = 0
      var count: UInt64 = 0
      var buffer = magic + [UInt8](bigEndian: UInt32(model.count)) + model
      buffer += [UInt8](bigEndian: Checksum.crc32(model))
      func flush() throws {
        checksum = Checksum.crc32(buffer[...], continuing: checksum)
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
      }
      try records { batchID, bytes in
        buffer += [UInt8](bigEndian: batchID) + [UInt8](bigEndian: UInt32(bytes.count)) + bytes
        count += 1
        if buffer.count > 1 << 20 { try flush() }
      }
      buffer += [UInt8](bigEndian: endMarker) + [UInt8](bigEndian: count)
      checksum = Checksum.crc32(buffer[...], continuing: checksum)
      buffer += [UInt8](bigEndian: checksum)
      try handle.write(contentsOf: buffer)
      try handle.synchronize()
      try handle.close()
      // The name asked for appears only now, whole; `link` refuses a file made meanwhile.
      guard link(partial, path) == 0 else {
        throw LedgerError.fileSystem("cannot name the archive \(path): \(SystemError.reason(errno))", path: path)
      }
      unlink(partial)
    } catch {
      try? handle.close()
      unlink(partial)
      if let error = error as? LedgerError { throw error }
      throw LedgerError.fileSystem("cannot write the archive \(path): \(SystemError.describe(error))", path: path)
    }
  }

  /// Reads an archive record by record: memory holds one record (and a read buffer), never
  /// the whole file.
  final class Reader {
    let path: String
    /// The archive's model (every version of it), checked against its checksum.
    private(set) var model: [UInt8] = []
    /// The archive's format: 1 or 2.
    private(set) var format = 0
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var position = 0
    /// Bytes consumed before `buffer`.
    private var offset = 0
    /// The CRC-32 of every byte consumed before `buffer[..<summed]`.
    private var checksum: UInt32 = 0
    private var summed = 0
    private var records: UInt64 = 0
    private var ended = false

    init(_ path: String) throws {
      self.path = path
      handle = try Self.openForReading(path)
      (format, model) = try readHeader()
    }

    deinit { try? handle.close() }

    private static func openForReading(_ path: String) throws -> FileHandle {
      var status = stat()
      guard stat(path, &status) == 0 else {
        throw LedgerError.unreadableFile("cannot read the archive \(path): \(SystemError.reason(errno))", path: path)
      }
      if (status.st_mode & S_IFMT) == S_IFDIR {
        throw LedgerError.unreadableFile("cannot read the archive \(path): it is a directory, not a file", path: path)
      }
      let descriptor = open(path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        throw LedgerError.unreadableFile("cannot read the archive \(path): \(SystemError.reason(errno))", path: path)
      }
      return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    private func failure(_ reason: String) -> LedgerError {
      .invalidArchive("\(path) is not a whole log archive: \(reason)", path: path)
    }

    /// The next `count` bytes, or nil at the end of the file (an error when some are missing).
    private func take(_ count: Int, atEnd: Bool = false) throws -> ArraySlice<UInt8>? {
      while buffer.count - position < count {
        if position > 0 {
          checksum = Checksum.crc32(buffer[summed..<position], continuing: checksum)
          buffer.removeFirst(position)
          offset += position
          summed = 0
          position = 0
        }
        let chunk: Data?
        do { chunk = try handle.read(upToCount: min(max(1 << 20, count - buffer.count), 1 << 26)) } catch {
          throw LedgerError.unreadableFile(
            "cannot read the archive \(path): \(SystemError.describe(error))", path: path)
        }
        guard let chunk, !chunk.isEmpty else {
          if atEnd, buffer.count == position { return nil }
          throw failure("it ends at byte \(offset + buffer.count), in the middle of an entry: it was cut short")
        }
        buffer.append(contentsOf: chunk)
      }
      defer { position += count }
      return buffer[position..<(position + count)]
    }

    /// The CRC-32 of every byte read so far.
    private func checksumSoFar() -> UInt32 {
      let value = Checksum.crc32(buffer[summed..<position], continuing: checksum)
      checksum = value
      summed = position
      return value
    }

    private func readHeader() throws -> (Int, [UInt8]) {
      // Both formats' magic lines have one length.
      guard let head = try? take(magic.count), head.elementsEqual(magic) || head.elementsEqual(magic1) else {
        throw failure("it does not start as one")
      }
      let format = head.elementsEqual(magic) ? 2 : 1
      guard let length = try take(4) else { throw failure("it has no model") }
      guard let model = try take(Int(UInt32(bigEndianBytes: length))).map(Array.init) else {
        throw failure("it has no model")
      }
      if format == 2 {
        guard let stored = try take(4).map({ UInt32(bigEndianBytes: $0) }) else { throw failure("it has no model") }
        guard stored == Checksum.crc32(model) else {
          throw failure("its model does not match its checksum: the file was changed or damaged")
        }
      }
      return (format, model)
    }

    /// The next record (batch id, stored bytes), or nil after the last: in format 2, once the
    /// end marker, the count and the checksum over the whole are checked.
    func next() throws -> (batchID: UInt64, bytes: [UInt8])? {
      guard !ended else { return nil }
      guard let idBytes = try take(8, atEnd: format == 1) else {
        ended = true
        return nil
      }
      let batchID = UInt64(bigEndianBytes: idBytes)
      if format == 2, batchID == endMarker {
        guard let countBytes = try take(8) else { throw failure("it has no record count") }
        let count = UInt64(bigEndianBytes: countBytes)
        let computed = checksumSoFar()
        guard let stored = try take(4).map({ UInt32(bigEndianBytes: $0) }) else { throw failure("it has no checksum") }
        guard stored == computed else {
          throw failure("its checksum does not match its contents: a record is missing or changed")
        }
        guard count == records else {
          throw failure("it says it holds \(count) records, but \(records) were read")
        }
        guard try take(1, atEnd: true) == nil else { throw failure("bytes follow its end") }
        ended = true
        return nil
      }
      guard let lengthBytes = try take(4), let bytes = try take(Int(UInt32(bigEndianBytes: lengthBytes))) else {
        throw failure("it ends in the middle of batch \(batchID)")
      }
      records += 1
      return (batchID, Array(bytes))
    }
  }
}
