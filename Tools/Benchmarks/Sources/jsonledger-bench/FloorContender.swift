import Foundation
import JSONLedger
import LMDB

/// The physical floor: the same parser, then raw LMDB `MDB_APPEND` puts of each object's JSON
/// bytes under sequential keys, in one transaction; reads are raw gets that decode one
/// attribute.
struct FloorContender {
  let environment: Environment
  let database: Database

  init() throws {
    environment = try Environment(path: try scratchDirectory("floor"))
    database = try environment.database(named: "objects")
  }

  static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(index).bigEndian, Array.init) }

  func importDocument(_ bytes: [UInt8]) throws {
    let document = try JSONParser.parse(bytes)
    let writer = JSONWriter(options: [])
    try environment.write { txn in
      var index = 0
      for collection in ["bands", "albums"] {
        for object in document[collection]?.arrayValue ?? [] {
          try txn.put(writer.bytes(from: object), forKey: Self.key(index), in: database, flags: .append)
          index += 1
        }
      }
    }
  }

  /// Raw gets, each value copied out (as any reader must) and one attribute of it decoded:
  /// the album's label, found in its JSON bytes.
  func readByKey(_ indices: [Int]) throws {
    for chunk in stride(from: 0, to: indices.count, by: 1000) {
      try environment.read { txn in
        for index in indices[chunk..<min(chunk + 1000, indices.count)] {
          guard let value = try txn.value(forKey: Self.key(index), in: database), Self.label(in: value) != nil else {
            throw LedgerError.invalidArgument("missing")
          }
        }
      }
    }
  }

  private static let labelKey = Array(#""label":""#.utf8)

  /// The string value of `"label"` in an object's JSON bytes (no escapes in the dataset).
  static func label(in bytes: [UInt8]) -> String? {
    let key = labelKey
    guard bytes.count > key.count else { return nil }
    var start = 0
    while start + key.count <= bytes.count {
      if bytes[start] == key[0], bytes[start..<(start + key.count)].elementsEqual(key) {
        let valueStart = start + key.count
        guard let end = bytes[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: bytes[valueStart..<end], as: UTF8.self)
      }
      start += 1
    }
    return nil
  }

  func parseOnly(_ bytes: [UInt8]) throws { _ = try JSONParser.parse(bytes) }
}
