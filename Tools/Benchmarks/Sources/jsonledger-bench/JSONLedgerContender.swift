import Foundation
import JSONLedger

/// The workloads through JSONLedger's public API.
struct JSONLedgerContender {
  let dataset: Dataset
  let model: Model
  let path: String
  let ledger: Ledger

  init(dataset: Dataset, durability: Ledger.Durability = .full) throws {
    self.dataset = dataset
    model = try Model(json: JSONParser.parse(Dataset.model))
    path = try scratchDirectory("ledger")
    var options = Ledger.Options()
    options.durability = durability
    ledger = try Ledger.open(at: path + "/store", model: model, options: options)
  }

  /// The document staged as text, as `jsonledger import` and `stage(fileAt:)` stage a file:
  /// an album whose text the store already holds is not parsed.
  func importDocument(_ bytes: [UInt8]) throws -> BatchSummary {
    var batch = ledger.makeBatch()
    try batch.stageDocument(json: bytes)
    return try ledger.applySynchronously(batch)
  }

  /// Each album read in place and its label decoded (as GRDB reads the label of its row).
  func readByKey(_ keys: [String]) throws {
    for chunk in stride(from: 0, to: keys.count, by: 1000) {
      try ledger.read { view in
        for key in keys[chunk..<min(chunk + 1000, keys.count)] {
          guard try view.withObject("Album", key: key, { album in try album["label"] }) != nil else {
            throw LedgerError.invalidArgument("missing \(key)")
          }
        }
      }
    }
  }

  /// Each album read in place, with its band's key.
  func readAllAlbumsWithBand() throws -> Int {
    try ledger.read { view in
      var count = 0
      try view.forEachObjectInPlace("Album") { album in
        if try album.relatedKeys("band").first != nil { count += 1 }
      }
      return count
    }
  }

  /// The whole store as JSON text, key-sorted, written as it is read.
  func exportAll() throws -> Int {
    try ledger.read { view in
      var written = 0
      try view.writeJSON(nil) { written += $0.count }
      return written
    }
  }

  /// A store of `batches` small batches, each changing one album's label.
  static func manyBatches(_ batches: Int) throws -> Ledger {
    var options = Ledger.Options()
    options.durability = .noSync
    let ledger = try Ledger.open(
      at: try scratchDirectory("history") + "/store", model: try Model(json: JSONParser.parse(Dataset.model)),
      options: options)
    var batch = ledger.makeBatch()
    try batch.stage(.array((0..<1000).map { ["name": .string("album \($0)"), "label": "L0"] }), as: "Album")
    _ = try ledger.applySynchronously(batch)
    for index in 1..<batches {
      var small = ledger.makeBatch()
      try small.stage([["name": .string("album \(index % 1000)"), "label": .string("L\(index)")]], as: "Album")
      _ = try ledger.applySynchronously(small)
    }
    return ledger
  }
}

extension JSONLedgerContender {
  /// The log of `albums` albums added 25 a batch to the same ten bands, archived: what a
  /// follower, a clone by replay or a writer catching up folds when a to-many list grows
  /// with every batch (each band's albums reach a tenth of them). Returns the archive's path.
  static func growingListsArchive(albums: Int) throws -> String {
    var options = Ledger.Options()
    options.durability = .noSync
    let directory = try scratchDirectory("growing")
    let ledger = try Ledger.open(
      at: directory + "/store", model: try Model(json: JSONParser.parse(Dataset.model)), options: options)
    var bands = ledger.makeBatch()
    try bands.stage(.array((0..<10).map { ["name": .string("band \($0)")] }), as: "Band")
    _ = try ledger.applySynchronously(bands)
    for first in stride(from: 0, to: albums, by: 25) {
      var batch = ledger.makeBatch()
      let added = (first..<min(albums, first + 25)).map { index -> JSONValue in
        ["name": .string("album \(index)"), "band": .string("band \(index % 10)"), "label": "L"]
      }
      try batch.stage(.array(added), as: "Album")
      _ = try ledger.applySynchronously(batch)
    }
    _ = try ledger.compact(keepingBatches: 0, archive: directory + "/archive")
    ledger.close()
    return directory + "/archive"
  }

  /// Bytes the store's files take on disk (allocated blocks).
  func storeBytes() throws -> Int { fileBytes([path + "/store/data.mdb", path + "/store/lock.mdb"]) }
}

/// The single-batch import of the memory measurement: the file imported as one batch as the
/// command line tool does (`jsonledger import STORE FILE`: streamed, `Ledger.importFile`), or
/// read, parsed and upserted through GRDB.
func singleBatchImport(contender: String, path: String) throws {
  switch contender {
  case "grdb":
    guard let data = FileManager.default.contents(atPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
    try GRDBContender().importDocument(Array(data))
  default:
    let ledger = try JSONLedgerContender(dataset: Dataset(objects: 1))
    _ = try ledger.ledger.importFile(at: path)
  }
}
