import Foundation
@testable import JSONLedger

/// A fresh directory under the system's temporary folder, removed when the test ends.
final class TemporaryDirectory: @unchecked Sendable {
  // Safety: `path` is immutable; the class exists only to remove the folder in deinit.
  let path: String

  init() throws {
    path = FileManager.default.temporaryDirectory.appendingPathComponent("jsonledger-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  /// A path inside the directory that does not exist yet.
  var storePath: String { path + "/store" }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}

enum Fixtures {
  static func url(_ name: String) throws -> URL {
    guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
      throw LedgerError.invalidArgument("no fixture \(name)")
    }
    return url
  }

  static func json(_ name: String) throws -> JSONValue {
    try JSONParser.parse(try Data(contentsOf: url(name)))
  }

  static func bandsModel() throws -> Model {
    try Model(jsonFile: try url("bands-model.json").path)
  }
}

/// Opens a store in `directory` with `model` and applies each document as one batch.
func makeLedger(in directory: TemporaryDirectory, model: Model, documents: [JSONValue] = []) throws -> Ledger {
  let ledger = try Ledger.open(at: directory.storePath, model: model)
  for document in documents {
    var batch = ledger.makeBatch()
    try batch.stageDocument(document)
    _ = try ledger.applySynchronously(batch)
  }
  return ledger
}
