import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

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

  /// A Core Data model of these `<entity>` elements, written as an `.xcdatamodel` folder in
  /// `directory` and loaded.
  static func coreDataModel(_ entities: String, in directory: TemporaryDirectory) throws -> Model {
    let folder = directory.path + "/App.xcdatamodel"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let xml =
      #"<?xml version="1.0" encoding="UTF-8"?><model type="com.apple.IDECoreDataModeler.DataModel">"#
      + entities + "</model>"
    try Data(xml.utf8).write(to: URL(fileURLWithPath: folder + "/contents"))
    return try Model(contentsOf: folder)
  }

  static func bandsModel() throws -> Model {
    try Model(jsonFile: try url("bands-model.json").path)
  }

  /// Bands (name, formed) and their albums (name): the smallest model with a to-many and its
  /// inverse.
  static func bandsAndAlbums() throws -> Model {
    try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("formed", .int32)
        Relationship("albums", to: "Album", many: true, inverse: "band")
      }
      Entity("Album", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("band", to: "Band", inverse: "albums")
      }
    }
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

/// Every link of every live object, in the current state, has its counterpart on the
/// other side (a relationship without inverse pairs with its hidden reverse).
func expectLinksAreTwoSided(_ ledger: Ledger, sourceLocation: SourceLocation = #_sourceLocation) throws {
  try ledger.environment.read { txn in
    let store = ProjectionStore(transaction: txn, layout: ledger.layout, model: ledger.model)
    var ids: [UInt64] = []
    try txn.forEach(in: ledger.layout.state, prefix: []) { entry in
      ids.append(UInt64(bigEndianBytes: entry.key))
      return true
    }
    for id in ids {
      guard let state = try store.state(of: id) else { continue }
      for (relationshipID, targets) in state.links {
        let counterpart = ledger.model.counterpart(of: relationshipID)
        for target in targets {
          let back = try store.state(of: target)?.links[counterpart] ?? []
          #expect(
            back.contains(id), "object \(id) links \(target) through \(relationshipID), which does not link back",
            sourceLocation: sourceLocation)
        }
      }
    }
  }
}
