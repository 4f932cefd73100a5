import Foundation
import JSONLedger
import LMDB

/// The physical floor: the same parser, then raw LMDB `MDB_APPEND` puts of each object's JSON
/// bytes under sequential keys, in one transaction; reads are raw gets.
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

  func readByKey(_ indices: [Int]) throws {
    for chunk in stride(from: 0, to: indices.count, by: 1000) {
      try environment.read { txn in
        for index in indices[chunk..<min(chunk + 1000, indices.count)] {
          guard try txn.value(forKey: Self.key(index), in: database) != nil else {
            throw LedgerError.invalidArgument("missing")
          }
        }
      }
    }
  }

  func parseOnly(_ bytes: [UInt8]) throws { _ = try JSONParser.parse(bytes) }
}
