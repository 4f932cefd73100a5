import Foundation
import JSONLedger

// jsonledger-bench [--objects N] [--batches B] [--json] [--instructions [--instruction-objects M]]
// jsonledger-bench --check-thresholds FILE | --record-thresholds FILE   (instruction counts, CI)
// jsonledger-bench --write-model PATH | --write-albums[-without-producers] N PATH   (memory test inputs)
var objects = 100_000
var historyBatches = 10_000
var emitJSON = false
var countInstructions = false
var instructionObjects: Int?
var arguments = CommandLine.arguments.dropFirst().makeIterator()

/// Runs one of the modes below, and ends the process: an error (a workload or contender the
/// bench does not know, a path it cannot write) is printed, not raised to the top level,
/// where Swift would trap on it.
func runMode(_ body: () throws -> Void) -> Never {
  do {
    try body()
  } catch {
    FileHandle.standardError.write(Data("jsonledger-bench: \(error)\n".utf8))
    removeScratchDirectories()
    exit(1)
  }
  removeScratchDirectories()
  exit(0)
}

/// The whole number given to `flag`, at least `minimum`; else the bench says so and exits 2.
/// (A dataset needs a band and an album: 2 objects.)
func wholeNumber(_ flag: String, _ text: String?, atLeast minimum: Int) -> Int {
  guard let text, let number = Int(text), number >= minimum else {
    FileHandle.standardError.write(
      Data("jsonledger-bench: \(flag) takes a whole number of at least \(minimum), not \(text ?? "nothing")\n".utf8))
    exit(2)
  }
  return number
}

while let argument = arguments.next() {
  switch argument {
  case "--objects": objects = wholeNumber(argument, arguments.next(), atLeast: 2)
  case "--batches": historyBatches = wholeNumber(argument, arguments.next(), atLeast: 2)
  case "--json": emitJSON = true
  case "--instructions": countInstructions = true
  case "--instruction-objects": instructionObjects = wholeNumber(argument, arguments.next(), atLeast: 2)
  case "--count-instructions":
    // A child of `--instructions`, under callgrind: one workload of one contender counted.
    guard let workload = arguments.next(), let contender = arguments.next() else { exit(2) }
    if let flag = arguments.next() {
      guard flag == "--objects" else {
        FileHandle.standardError.write(Data("jsonledger-bench: \(argument) takes only --objects N, not \(flag)\n".utf8))
        exit(2)
      }
      objects = wholeNumber(flag, arguments.next(), atLeast: 2)
    }
    runMode { try Instructions.runChild(workload: workload, contender: contender, dataset: Dataset(objects: objects)) }
  case "--check-thresholds":
    // CI: counts the guarded workloads and fails (exit 1) when one costs more than allowed.
    guard let path = arguments.next() else { exit(2) }
    runMode { if try !Thresholds.check(against: path) { throw ThresholdFailure("over a threshold") } }
  case "--record-thresholds":
    guard let path = arguments.next() else { exit(2) }
    runMode { try Thresholds.record(to: path) }
  case "--single-batch-import-rss":
    // A child of the main run: imports FILE (albums) as one batch, as the CLI does, through
    // `jsonledger` or `grdb`, and prints its peak RSS in bytes.
    guard let contender = arguments.next(), let path = arguments.next() else { exit(2) }
    runMode {
      try singleBatchImport(contender: contender, path: path)
      print(Int(peakResidentMegabytes() * 1024 * 1024))
    }
  case "--write-model":
    guard let path = arguments.next() else { exit(2) }
    runMode { try Data(Dataset.model.utf8).write(to: URL(fileURLWithPath: path)) }
  case "--write-albums", "--write-albums-without-producers":
    let albums = wholeNumber(argument, arguments.next(), atLeast: 1)
    guard let path = arguments.next() else {
      FileHandle.standardError.write(Data("usage: jsonledger-bench \(argument) N PATH\n".utf8))
      exit(2)
    }
    runMode { try Dataset.writeAlbums(albums, to: path, withProducers: argument == "--write-albums") }
  default:
    FileHandle.standardError.write(
      Data(
        "usage: jsonledger-bench [--objects N] [--batches B] [--json] [--instructions [--instruction-objects M]] | --check-thresholds FILE | --record-thresholds FILE | --write-model PATH | --write-albums[-without-producers] N PATH\n"
          .utf8))
    exit(2)
  }
}

let dataset = Dataset(objects: objects)
let document = dataset.document()
let changed = dataset.document(changedEvery: 10)
var rows: [ResultRow] = []
func log(_ text: String) { FileHandle.standardError.write(Data("… \(text)\n".utf8)) }

let ledger = try JSONLedgerContender(dataset: dataset)
let grdb = try GRDBContender()
let audit = try AuditTrailContender()
let floor = try FloorContender()
let megabytes = Double(document.count) / 1_000_000

log("parse \(String(format: "%.1f", megabytes)) MB")
let parseOurs = try seconds { _ = try JSONParser.parse(document) }
let parseFoundation = try seconds { _ = try JSONSerialization.jsonObject(with: Data(document)) }
rows.append(
  ResultRow(
    name: "JSON parse (our parser; grdb column: JSONSerialization)", unit: "MB/s", jsonledger: megabytes / parseOurs,
    grdb: megabytes / parseFoundation, floor: nil))

if ProcessInfo.processInfo.environment["JSONLEDGER_BENCH_PROFILE_IMPORT"] != nil {
  // Profiling aid: import into a fresh store, print the split, and stop.
  // JSONLEDGER_BENCH_PROFILE_IMPORT=reimport: the split of the re-import with 10% changed.
  let again = try JSONLedgerContender(dataset: dataset)
  if ProcessInfo.processInfo.environment["JSONLEDGER_BENCH_PROFILE_IMPORT"] == "revert" {
    // JSONLEDGER_BENCH_PROFILE_IMPORT=revert: a 10k-album batch on top of the dataset, its
    // import and its revert timed.
    _ = try again.importDocument(document)
    var extra = again.ledger.makeBatch()
    try extra.stage(
      .array(
        (0..<10_000).map {
          [
            "name": .string("extra album \($0)"), "band": .string(dataset.bandName($0 % dataset.bandCount)),
            "label": "Extra",
          ]
        }), as: "Album")
    var id: UInt64 = 0
    let importTime = try seconds { id = try again.ledger.applySynchronously(extra).batchID }
    let target = again.ledger
    let revertID = id
    let revertTime = seconds {
      let semaphore = DispatchSemaphore(value: 0)
      Task.detached {
        _ = try? await target.revert(revertID)
        semaphore.signal()
      }
      semaphore.wait()
    }
    print("import \(importTime)s, revert \(revertTime)s")
    removeScratchDirectories()
    exit(0)
  }
  if ProcessInfo.processInfo.environment["JSONLEDGER_BENCH_PROFILE_IMPORT"] == "reads" {
    // JSONLEDGER_BENCH_PROFILE_IMPORT=reads: the dataset imported, then the scan and the export timed.
    _ = try again.importDocument(document)
    let scan = try seconds { _ = try again.readAllAlbumsWithBand() }
    let export = try seconds { _ = try again.exportAll() }
    let keys = (0..<20_000).map { dataset.albumName($0 * 7_919 % dataset.albumCount) }
    let byKey = try seconds { try again.readByKey(keys) }
    print("read all albums with band \(scan)s, export \(export)s, 20,000 reads by key \(byKey)s")
    removeScratchDirectories()
    exit(0)
  }
  let reimport = ProcessInfo.processInfo.environment["JSONLEDGER_BENCH_PROFILE_IMPORT"] == "reimport"
  if reimport { _ = try again.importDocument(document) }
  var batch = again.ledger.makeBatch()
  let parse = try seconds { _ = try JSONParser.parse(reimport ? changed : document) }
  let stage = try seconds { try batch.stageDocument(json: reimport ? changed : document) }
  let apply = try seconds { _ = try again.ledger.applySynchronously(batch) }
  let free = seconds { batch = again.ledger.makeBatch() }
  print(
    "parse alone \(parse)s; stage (skim, parse and map what changed) \(stage)s, "
      + "apply (resolve, record, project, commit) \(apply)s; letting go of the batch \(free)s")
  removeScratchDirectories()
  exit(0)
}
// The machine's speed drifts between runs (by a third at times); rounds that take turns between
// the contenders, and their medians, keep one slow moment from deciding a ratio.
let rounds = objects >= 1_000_000 ? 1 : 3
log("fresh import of \(objects) objects, \(rounds) round(s)")
var freshLedger: [Double] = []
var freshGRDB: [Double] = []
var freshFloor: [Double] = []
var freshAudit: [Double] = []
// The same document as a file, imported as `jsonledger import` imports one: streamed, resolved
// a thousand objects at a time.
var freshFile: [Double] = []
let documentFile = try scratchDirectory("file") + "/document.json"
try Data(document).write(to: URL(fileURLWithPath: documentFile))
for round in 0..<rounds {
  // Earlier rounds import into stores of their own; the last fills those the later workloads use.
  let isLast = round == rounds - 1
  let roundLedger = isLast ? ledger : try JSONLedgerContender(dataset: dataset)
  let roundGRDB = isLast ? grdb : try GRDBContender()
  let roundFloor = isLast ? floor : try FloorContender()
  let roundAudit = isLast ? audit : try AuditTrailContender()
  freshLedger.append(try seconds { _ = try roundLedger.importDocument(document) })
  freshGRDB.append(try seconds { try roundGRDB.importDocument(document) })
  freshFloor.append(try seconds { try roundFloor.importDocument(document) })
  freshAudit.append(try seconds { try roundAudit.importDocument(document) })
  let fileLedger = try JSONLedgerContender(dataset: dataset)
  freshFile.append(try seconds { _ = try fileLedger.ledger.importFile(at: documentFile) })
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let importLedger = median(freshLedger)
let importGRDB = median(freshGRDB)
let importFloor = median(freshFloor)
rows.append(
  ResultRow(
    name: rounds > 1 ? "fresh import (median of \(rounds))" : "fresh import", unit: "objects/s",
    jsonledger: Double(objects) / importLedger, grdb: Double(objects) / importGRDB,
    floor: Double(objects) / importFloor,
    audit: Double(objects) / median(freshAudit)))
rows.append(
  ResultRow(
    name: rounds > 1 ? "fresh import of a file, streamed (median of \(rounds))" : "fresh import of a file, streamed",
    unit: "objects/s", jsonledger: Double(objects) / median(freshFile), grdb: Double(objects) / importGRDB,
    floor: nil))

log("store bytes after the fresh import")
let megabyte = 1_048_576.0
rows.append(
  ResultRow(
    name: "store on disk after the fresh import (log included)", unit: "MB",
    jsonledger: Double(try ledger.storeBytes()) / megabyte,
    grdb: Double(try grdb.storeBytes()) / megabyte, floor: Double(document.count) / megabyte,
    audit: Double(try audit.storeBytes()) / megabyte))

// Each round changes the same 10% of the albums (their label) back and forth: the changed
// document, then the original, then the changed one again, so that every round is a re-import
// with 10% changed and the store ends with the changed document for the reads below.
log("re-import with 10% changed, \(rounds) round(s)")
var reimportsLedger: [Double] = []
var reimportsGRDB: [Double] = []
var reimportsAudit: [Double] = []
for round in 0..<rounds {
  let next = round % 2 == 0 ? changed : document
  reimportsLedger.append(try seconds { _ = try ledger.importDocument(next) })
  reimportsGRDB.append(try seconds { try grdb.importDocument(next) })
  reimportsAudit.append(try seconds { try audit.importDocument(next) })
}
let reimportLedger = median(reimportsLedger)
let reimportGRDB = median(reimportsGRDB)
rows.append(
  ResultRow(
    name: rounds > 1 ? "re-import, 10% changed (median of \(rounds))" : "re-import, 10% changed", unit: "objects/s",
    jsonledger: Double(objects) / reimportLedger, grdb: Double(objects) / reimportGRDB, floor: nil,
    audit: Double(objects) / median(reimportsAudit)))

log("single-object reads")
var generator = SystemRandomNumberGenerator()
let lookups = min(20_000, dataset.albumCount)
let indices = (0..<lookups).map { _ in Int.random(in: 0..<dataset.albumCount, using: &generator) }
let keys = indices.map(dataset.albumName)
let readLedger = try seconds { try ledger.readByKey(keys) }
let readGRDB = try seconds { try grdb.readByKey(keys) }
let readFloor = try seconds { try floor.readByKey(indices.map { $0 + dataset.bandCount }) }
rows.append(
  ResultRow(
    name: "read one object by key", unit: "µs/op", jsonledger: readLedger / Double(lookups) * 1e6,
    grdb: readGRDB / Double(lookups) * 1e6, floor: readFloor / Double(lookups) * 1e6))

log("read all albums with their band")
var albumCount = 0
let scanLedger = try seconds { albumCount = try ledger.readAllAlbumsWithBand() }
let scanGRDB = try seconds { _ = try grdb.readAllAlbumsWithBand() }
rows.append(
  ResultRow(
    name: "read all of one entity with one relationship", unit: "objects/s",
    jsonledger: Double(albumCount) / scanLedger, grdb: Double(albumCount) / scanGRDB, floor: nil))

log("full export, three rounds")
// Alternating, medians reported: one export of each moved by half between runs.
var exportsLedger: [Double] = []
var exportsGRDB: [Double] = []
for _ in 0..<3 {
  exportsLedger.append(try seconds { _ = try ledger.exportAll() })
  exportsGRDB.append(try seconds { _ = try grdb.exportAll() })
}
rows.append(
  ResultRow(
    name: "full export to JSON (median of 3)", unit: "objects/s", jsonledger: Double(objects) / median(exportsLedger),
    grdb: Double(objects) / median(exportsGRDB), floor: nil))

log("import and revert of a 10k-object batch, three rounds")
// One round is too noisy to compare two numbers this close (a commit's writeback can land in
// either): each round imports 10k new albums and reverts them; the medians are reported.
var importTimes: [Double] = []
var revertTimes: [Double] = []
var auditImportTimes: [Double] = []
var auditRollbackTimes: [Double] = []
for round in 0..<3 {
  let tenThousand = (0..<10_000).map { index -> JSONValue in
    [
      "name": .string("extra album \(round)-\(index)"), "band": .string(dataset.bandName(index % dataset.bandCount)),
      "label": "Extra",
    ]
  }
  var extraBatch = ledger.ledger.makeBatch()
  try extraBatch.stage(.array(tenThousand), as: "Album")
  var extraID: UInt64 = 0
  importTimes.append(try seconds { extraID = try ledger.ledger.applySynchronously(extraBatch).batchID })
  revertTimes.append(
    seconds {
      let semaphore = DispatchSemaphore(value: 0)
      let target = ledger.ledger
      let id = extraID
      Task.detached {
        _ = try? await target.revert(id)
        semaphore.signal()
      }
      semaphore.wait()
    })
  let tenThousandAlbums = JSONWriter().bytes(from: ["albums": .array(tenThousand)])
  var auditBatch: Int64 = 0
  auditImportTimes.append(try seconds { auditBatch = try audit.importDocument(tenThousandAlbums) })
  auditRollbackTimes.append(try seconds { try audit.rollback(auditBatch) })
}
let importTen = median(importTimes)
let revertTen = median(revertTimes)
rows.append(
  ResultRow(
    name: "import of a 10k-object batch (same store, median of 3)", unit: "objects/s", jsonledger: 10_000 / importTen,
    grdb: nil, floor: nil, audit: 10_000 / median(auditImportTimes)))
rows.append(
  ResultRow(
    name: "revert of that 10k-object batch (median of 3; audit: rollback from the audit table)", unit: "objects/s",
    jsonledger: 10_000 / revertTen, grdb: nil, floor: nil, audit: 10_000 / median(auditRollbackTimes)))

log("verify")
// The full replay first: on a store that keeps its digest it writes nothing, so the default
// verify after it finds the store as the import left it.
let fullVerifySeconds = try seconds { _ = try ledger.ledger.verify(.fullReplay) }
rows.append(
  ResultRow(
    name: "verify, full (replay whole log, compare)", unit: "objects/s",
    jsonledger: Double(objects) / fullVerifySeconds, grdb: nil, floor: nil))
let verifySeconds = try seconds { _ = try ledger.ledger.verify() }
rows.append(
  ResultRow(
    name: "verify (read each entry once, against the kept digest)", unit: "objects/s",
    jsonledger: Double(objects) / verifySeconds, grdb: nil, floor: nil))

log("small batches: one album each, in stores of their own, five rounds of 200 taking turns")
// What a form posted, a webhook or a page of a pull writes: a batch of one album (with its
// producer, its band one of ten), each its own transaction and, for JSONLedger, its own
// record, into a store holding the dataset. Two durabilities, each on both sides: a commit
// that survives a machine crash (JSONLedger's default; SQLite's `synchronous = FULL`), and one
// that a machine crash may roll back, the store staying whole (`noMetaSync`; SQLite's default
// in WAL mode here, which flushes at checkpoints only). Rounds take turns between the
// contenders so that a slow moment hits all of them. Then the same batches from eight threads
// at once, as a server's requests or a pool of workers apply them: JSONLedger's applies that
// wait for the writer together commit together (one transaction, each batch in a transaction
// nested in it, one flush); GRDB's writes wait for its one writer connection and commit one by
// one.
for (flushed, writers) in [(true, 1), (false, 1), (true, 8)] {
  let smallStore = try JSONLedgerContender(dataset: dataset, durability: flushed ? .full : .noMetaSync)
  let smallGRDB = try GRDBContender(flushingEachCommit: flushed)
  _ = try smallStore.importDocument(document)
  try smallGRDB.importDocument(document)
  var (ledgerSeconds, grdbSeconds) = (0.0, 0.0)
  for round in 0..<5 {
    let batches = (round * 200..<(round + 1) * 200).map(dataset.smallBatch)
    ledgerSeconds += try seconds { try concurrently(writers, batches) { _ = try smallStore.importDocument($0) } }
    grdbSeconds += try seconds { try concurrently(writers, batches) { try smallGRDB.importDocument($0) } }
  }
  let name =
    switch (flushed, writers) {
    case (true, 1):
      "apply a batch of one album, 1,000 batches, each commit flushed (default; SQLite synchronous = FULL)"
    case (false, _): "the same, a machine crash may undo the last commits (noMetaSync; SQLite's WAL default)"
    default: "apply a batch of one album from \(writers) writers at once, 1,000 batches, each commit flushed"
    }
  rows.append(
    ResultRow(name: name, unit: "batches/s", jsonledger: 1_000 / ledgerSeconds, grdb: 1_000 / grdbSeconds, floor: nil))
}

log("migrate")
// Four versions of the model after the dataset's: Album gains an attribute (in place), then
// Album.label is renamed and Album.sales becomes a string (each album's states rewritten),
// then Album.released is removed (rewritten again), then the producers' links (a replay of the
// whole log).
ledger.ledger.close()
let store = ledger.path + "/store"
let gained = try Model(json: JSONParser.parse(Dataset.modelGainingAnAttribute))
let renamed = try Model(json: JSONParser.parse(Dataset.modelRenamingAndRetyping))
let removed = try Model(json: JSONParser.parse(Dataset.modelRenamingThenRemoving))
let unlinked = try Model(json: JSONParser.parse(Dataset.modelRemovingARelationship))
var methods: [MigrationPlan.Method?] = [nil, nil, nil, nil]
let migrateInPlace = try seconds { methods[0] = try Ledger.migrate(at: store, to: gained).plan.method }
let migrateRewrite = try seconds { methods[1] = try Ledger.migrate(at: store, to: renamed).plan.method }
let migrateRemoval = try seconds { methods[2] = try Ledger.migrate(at: store, to: removed).plan.method }
let migrateReplay = try seconds { methods[3] = try Ledger.migrate(at: store, to: unlinked).plan.method }
if methods != [.inPlace, .rewrite, .rewrite, .replay] {
  log("warning: the migrations did not take the expected paths: \(methods)")
}
let grdbMigration = try grdb.migrate()
rows.append(
  ResultRow(
    name: "migrate in place (every album gains an attribute; grdb: ADD COLUMN)", unit: "objects/s",
    jsonledger: Double(objects) / migrateInPlace, grdb: Double(objects) / grdbMigration.added, floor: nil))
rows.append(
  ResultRow(
    name: "migrate a rename and a type change (states rewritten; grdb: table copy)", unit: "objects/s",
    jsonledger: Double(objects) / migrateRewrite, grdb: Double(objects) / grdbMigration.rebuilt, floor: nil))
rows.append(
  ResultRow(
    name: "migrate removing an attribute (states rewritten; grdb: DROP COLUMN)", unit: "objects/s",
    jsonledger: Double(objects) / migrateRemoval, grdb: Double(objects) / grdbMigration.dropped, floor: nil))
rows.append(
  ResultRow(
    name: "migrate by replaying the log (a relationship removed; grdb: the table copy above)", unit: "objects/s",
    jsonledger: Double(objects) / migrateReplay, grdb: Double(objects) / grdbMigration.rebuilt, floor: nil))

log("\(historyBatches) small batches for point-in-time reads")
let history = try JSONLedgerContender.manyBatches(historyBatches)
let probes = (0..<5_000).map { _ in
  (
    UInt64.random(in: 1...UInt64(historyBatches), using: &generator),
    "album \(Int.random(in: 0..<1000, using: &generator))"
  )
}
let currentSeconds = try seconds {
  try history.read { view in for (_, key) in probes { _ = try view.object("Album", key: .string(key)) } }
}
let currentEachSeconds = try seconds {
  for (_, key) in probes { _ = try history.read { view in try view.object("Album", key: .string(key)) } }
}
let asOfSeconds = try seconds {
  for (batch, key) in probes {
    _ = try history.read(asOf: batch) { view in try view.object("Album", key: .string(key)) }
  }
}
let asOfOneTxn = try seconds {
  try history.read(asOf: UInt64(historyBatches / 2)) { view in
    for (_, key) in probes { _ = try view.object("Album", key: .string(key)) }
  }
}
rows.append(
  ResultRow(
    name: "read by key, \(historyBatches)-batch store, current (one view)", unit: "µs/op",
    jsonledger: currentSeconds / 5000 * 1e6, grdb: nil, floor: nil))
rows.append(
  ResultRow(
    name: "read by key, \(historyBatches)-batch store, current (a view each)", unit: "µs/op",
    jsonledger: currentEachSeconds / 5000 * 1e6, grdb: nil, floor: nil))
rows.append(
  ResultRow(
    name: "read by key, as of a batch (one view)", unit: "µs/op", jsonledger: asOfOneTxn / 5000 * 1e6, grdb: nil,
    floor: nil))
rows.append(
  ResultRow(
    name: "read by key, as of a random batch (a view each)", unit: "µs/op", jsonledger: asOfSeconds / 5000 * 1e6,
    grdb: nil, floor: nil))

log("peak RSS of a single-batch import, each in a process of its own")
let albumsFile = try scratchDirectory("rss") + "/albums.json"
try Dataset.writeAlbums(objects, to: albumsFile, withProducers: true)
let albumsBytes = Double(fileBytes([albumsFile]))
// A 10-album import's peak is the process's fixed part: the Swift runtime's and Foundation's
// pages, resident whatever the input (about 25 MB here).
let tinyAlbumsFile = try scratchDirectory("rss") + "/albums-10.json"
try Dataset.writeAlbums(10, to: tinyAlbumsFile, withProducers: true)
func childPeak(_ contender: String, _ file: String) throws -> Double {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
  process.arguments = ["--single-batch-import-rss", contender, file]
  let output = Pipe()
  process.standardOutput = output
  try process.run()
  let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  guard process.terminationStatus == 0, let bytes = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
    throw LedgerError.invalidArgument("the \(contender) import child failed (\(process.terminationStatus))")
  }
  return bytes
}
let (peakLedger, peakGRDB) = (try childPeak("jsonledger", albumsFile), try childPeak("grdb", albumsFile))
let (fixedLedger, fixedGRDB) = (try childPeak("jsonledger", tinyAlbumsFile), try childPeak("grdb", tinyAlbumsFile))
rows.append(
  ResultRow(
    name: "peak RSS of a single-batch import of \(objects) albums per input byte", unit: "× input",
    jsonledger: peakLedger / albumsBytes, grdb: peakGRDB / albumsBytes, floor: nil))
rows.append(
  ResultRow(
    name: "the same above a 10-album import's peak (the process's fixed part) per input byte", unit: "× input",
    jsonledger: (peakLedger - fixedLedger) / albumsBytes, grdb: (peakGRDB - fixedGRDB) / albumsBytes, floor: nil))

// Instructions per object, beside the times: callgrind's counts do not drift as times do.
var instructionCounts: [String: [String: Double]]?
let countedObjects = instructionObjects ?? min(objects, 20_000)
if countInstructions {
  log("instructions per object under callgrind (\(countedObjects) objects, each workload in a process of its own)")
  instructionCounts = try Instructions.count(objects: countedObjects)
  if instructionCounts == nil { log("valgrind is not installed: no instruction counts") }
}

let peak = peakResidentMegabytes()
/// The CPU's last-level cache ("L3 260 MiB"), from Linux's sysfs; nil elsewhere. Ratios against
/// SQLite depend on it: a cache that holds SQLite's pages at 1M objects takes a third off the
/// fresh import's ratio (RESULTS.md, 2026-11-28 evening).
func lastLevelCache() -> String? {
  var best: (level: Int, kilobytes: Int)?
  for index in 0..<8 {
    let directory = "/sys/devices/system/cpu/cpu0/cache/index\(index)/"
    guard let level = try? String(contentsOfFile: directory + "level", encoding: .utf8),
      let size = try? String(contentsOfFile: directory + "size", encoding: .utf8),
      let levelNumber = Int(level.trimmingCharacters(in: .whitespacesAndNewlines)),
      let kilobytes = Int(size.trimmingCharacters(in: .whitespacesAndNewlines).dropLast())
    else { continue }
    if best.map({ levelNumber > $0.level }) ?? true { best = (levelNumber, kilobytes) }
  }
  return best.map { "L\($0.level) \($0.kilobytes >> 10) MiB" }
}

let machine =
  "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB, "
  + (lastLevelCache().map { "\($0), " } ?? "") + ProcessInfo.processInfo.operatingSystemVersionString

func number(_ value: Double?) -> JSONValue { value.map { .number(JSONNumber(($0 * 100).rounded() / 100)) } ?? .null }

if emitJSON {
  let workloads: [JSONValue] = rows.map { row in
    [
      "name": .string(row.name), "unit": .string(row.unit), "jsonledger": number(row.jsonledger),
      "grdb": number(row.grdb), "floor": number(row.floor), "grdbWithAuditTrail": number(row.audit),
    ]
  }
  print(
    JSONWriter(options: [.prettyPrinted]).string(from: [
      "machine": .string(machine), "objects": .number(JSONNumber(objects)), "documentMegabytes": number(megabytes),
      "peakResidentMegabytes": number(peak), "workloads": .array(workloads),
      "instructionsPerObject": instructionCounts.map { counts in
        .object(
          JSONObject(
            counts.sorted { $0.key < $1.key }.map { workload, byContender in
              JSONObject.Member(
                key: workload,
                value: .object(
                  JSONObject(
                    byContender.sorted { $0.key < $1.key }.map {
                      JSONObject.Member(key: $0.key, value: number($0.value))
                    }
                  )))
            }))
      } ?? .null,
    ]))
} else {
  func format(_ value: Double?) -> String {
    guard let value else { return "—" }
    return value >= 1000 ? String(format: "%.0f", value) : String(format: "%.2f", value)
  }
  func ratio(_ row: ResultRow, _ other: Double?) -> String {
    guard let ours = row.jsonledger, let other, other > 0 else { return "—" }
    // > 1 means JSONLedger is better: less time, bytes or memory; more throughput.
    let value = row.isLowerBetter ? other / ours : ours / other
    return String(format: "%.2f×", value)
  }
  print(
    "machine: \(machine); \(objects) objects, \(String(format: "%.1f", megabytes)) MB of JSON; peak RSS \(String(format: "%.0f", peak)) MB"
  )
  print(
    "| workload | unit | JSONLedger | GRDB | GRDB + audit trail | floor | vs GRDB | vs GRDB + audit | vs floor |")
  print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
  for row in rows {
    print(
      "| \(row.name) | \(row.unit) | \(format(row.jsonledger)) | \(format(row.grdb)) | \(format(row.audit)) | \(format(row.floor)) | \(ratio(row, row.grdb)) | \(ratio(row, row.audit)) | \(ratio(row, row.floor)) |"
    )
  }
  print(
    "Ratios are better-is-higher: throughput ÷ theirs, or their µs/op, MB or RSS ÷ ours. The floor of the store row is the JSON's own size."
  )
  if let instructionCounts {
    print("")
    print("Instructions per object (callgrind, \(countedObjects) objects; lower is better, ratios their count ÷ ours):")
    print("| workload | JSONLedger | GRDB | floor | vs GRDB | vs floor |")
    print("|---|---:|---:|---:|---:|---:|")
    var printed: Set<String> = []
    for (workload, _) in Instructions.workloads where printed.insert(workload).inserted {
      guard let byContender = instructionCounts[workload], let ours = byContender["jsonledger"] else { continue }
      func ratio(_ other: Double?) -> String { other.map { String(format: "%.2f×", $0 / ours) } ?? "—" }
      func count(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "—" }
      print(
        "| \(workload) | \(count(ours)) | \(count(byContender["grdb"])) | \(count(byContender["floor"])) | \(ratio(byContender["grdb"])) | \(ratio(byContender["floor"])) |"
      )
    }
  }
}
removeScratchDirectories()
