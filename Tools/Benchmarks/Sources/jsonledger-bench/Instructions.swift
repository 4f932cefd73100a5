import CCallgrind
import Foundation
import JSONLedger

/// Instructions per object, counted by callgrind: a figure that stays put between runs where
/// wall-clock time here moves by a third. Each workload runs in a child process of its own
/// under `valgrind --tool=callgrind --collect-atstart=no`; the child sets its store up with
/// counting off and counts only the workload (`jl_callgrind_start` … `jl_callgrind_stop`).
enum Instructions {
  /// The workloads counted, each by one contender: (workload, contender, objects it handles).
  static let workloads: [(name: String, contender: String)] = [
    ("fresh import", "jsonledger"), ("fresh import", "grdb"), ("fresh import", "floor"),
    ("re-import, 10% changed", "jsonledger"), ("re-import, 10% changed", "grdb"),
    ("read one object by key", "jsonledger"), ("read one object by key", "grdb"), ("read one object by key", "floor"),
    ("read all of one entity with one relationship", "jsonledger"),
    ("read all of one entity with one relationship", "grdb"),
    ("full export to JSON", "jsonledger"), ("full export to JSON", "grdb"),
    ("read by key in a 2,000-batch store, a view each", "jsonledger"),
    ("read by key as of a random batch, a view each", "jsonledger"),
    ("verify", "jsonledger"), ("verify, full", "jsonledger"),
    ("migrate a rename and a type change", "jsonledger"), ("migrate a rename and a type change", "grdb"),
    ("migrate removing an attribute", "jsonledger"), ("migrate removing an attribute", "grdb"),
    ("migrate by replaying the log", "jsonledger"),
    ("restore a log whose to-many lists grow", "jsonledger"),
    ("apply a batch of one album, a thousand times", "jsonledger"),
    ("apply a batch of one album, a thousand times", "grdb"),
  ]

  /// How many batches the small-write workload applies (each counted as one).
  static let smallBatches = 1_000

  /// The glibc tunable that turns off the processor features its string routines are chosen by.
  static let baselineStringRoutines =
    "glibc.cpu.hwcaps=-AVX2,-AVX,-ERMS,-FSRM,-AVX512F,-AVX512VL,-AVX512BW,-SSE4_2,-SSSE3,-SSE4_1,-AVX_Fast_Unaligned_Load"

  /// The probes of the point-in-time workloads: (batch, album key) pairs, the same in every run.
  static func historyProbes(batches: Int) -> [(UInt64, String)] {
    (0..<2_000).map { index in (UInt64(1 + index * 7_919 % batches), "album \(index * 104_729 % 1000)") }
  }

  /// Runs every workload under callgrind with `objects` objects and returns instructions per
  /// object by workload and contender; nil when valgrind is not installed.
  static func count(
    objects: Int, workloads: [(name: String, contender: String)] = workloads
  ) throws -> [String: [String: Double]]? {
    guard
      let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first(where: {
        FileManager.default.isExecutableFile(atPath: $0)
      })
    else { return nil }
    var counts: [String: [String: Double]] = [:]
    let directory = try scratchDirectory("callgrind")
    for (name, contender) in workloads {
      let output = directory + "/\(contender)-\(counts.count)-\(UUID().uuidString.prefix(6)).out"
      let process = Process()
      process.executableURL = URL(fileURLWithPath: valgrind)
      process.arguments = [
        "--tool=callgrind", "--collect-atstart=no", "--callgrind-out-file=\(output)",
        CommandLine.arguments[0], "--count-instructions", name, contender, "--objects", "\(objects)",
      ]
      var environment = ProcessInfo.processInfo.environment
      // Swift seeds its hashing afresh in each process: counts of one build would differ by a
      // few percent between runs.
      environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
      // The C library picks its string routines (memcpy, strlen, …) by the features the
      // processor reports, whose instruction counts differ: pinned to the baseline ones, counts
      // do not move with the machine that takes them (a CI machine other than the one that
      // recorded the thresholds).
      environment["GLIBC_TUNABLES"] = Self.baselineStringRoutines
      process.environment = environment
      let result = Pipe()
      process.standardOutput = result
      process.standardError = FileHandle.nullDevice
      try process.run()
      let handled =
        Double(
          String(decoding: result.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
      process.waitUntilExit()
      guard process.terminationStatus == 0, handled > 0, let total = try totalInstructions(output) else {
        FileHandle.standardError.write(Data("… callgrind: \(name) (\(contender)) failed\n".utf8))
        continue
      }
      counts[name, default: [:]][contender] = Double(total) / handled
    }
    return counts
  }

  /// The instructions a callgrind output file counts (its `summary:` or `totals:` line).
  static func totalInstructions(_ path: String) throws -> UInt64? {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    for line in text.split(separator: "\n").reversed() where line.hasPrefix("summary:") || line.hasPrefix("totals:") {
      return line.split(separator: " ").dropFirst().first.flatMap { UInt64($0) }
    }
    return nil
  }

  /// In the child: sets up, counts `workload` of `contender` alone, prints how many objects
  /// it handled.
  static func runChild(workload: String, contender: String, dataset: Dataset) throws {
    let document = dataset.document()
    let keyCount = min(20_000, dataset.albumCount)
    // Every 7,919th album: spread over the store, the same in every run.
    let indices = (0..<keyCount).map { $0 * 7_919 % dataset.albumCount }
    let keys = indices.map(dataset.albumName)
    var handled = 0
    switch (workload, contender) {
    case ("fresh import", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      try counted { _ = try ledger.importDocument(document) }
      handled = dataset.objects
    case ("fresh import of a file", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      let file = try scratchDirectory("file") + "/document.json"
      try Data(document).write(to: URL(fileURLWithPath: file))
      try counted { _ = try ledger.ledger.importFile(at: file) }
      handled = dataset.objects
    case ("fresh import", "grdb"):
      let grdb = try GRDBContender()
      try counted { try grdb.importDocument(document) }
      handled = dataset.objects
    case ("fresh import", "floor"):
      let floor = try FloorContender()
      try counted { try floor.importDocument(document) }
      handled = dataset.objects
    case ("re-import, 10% changed", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      _ = try ledger.importDocument(document)
      let changed = dataset.document(changedEvery: 10)
      try counted { _ = try ledger.importDocument(changed) }
      handled = dataset.objects
    case ("re-import, 10% changed", "grdb"):
      let grdb = try GRDBContender()
      try grdb.importDocument(document)
      let changed = dataset.document(changedEvery: 10)
      try counted { try grdb.importDocument(changed) }
      handled = dataset.objects
    case ("read one object by key", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      _ = try ledger.importDocument(document)
      try counted { try ledger.readByKey(keys) }
      handled = keys.count
    case ("read one object by key", "grdb"):
      let grdb = try GRDBContender()
      try grdb.importDocument(document)
      try counted { try grdb.readByKey(keys) }
      handled = keys.count
    case ("read one object by key", "floor"):
      let floor = try FloorContender()
      try floor.importDocument(document)
      let floorIndices = indices.map { $0 + dataset.bandCount }
      try counted { try floor.readByKey(floorIndices) }
      handled = keys.count
    case ("read all of one entity with one relationship", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      _ = try ledger.importDocument(document)
      try counted { handled = try ledger.readAllAlbumsWithBand() }
    case ("read all of one entity with one relationship", "grdb"):
      let grdb = try GRDBContender()
      try grdb.importDocument(document)
      try counted { handled = try grdb.readAllAlbumsWithBand() }
    case ("full export to JSON", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      _ = try ledger.importDocument(document)
      try counted { _ = try ledger.exportAll() }
      handled = dataset.objects
    case ("full export to JSON", "grdb"):
      let grdb = try GRDBContender()
      try grdb.importDocument(document)
      try counted { _ = try grdb.exportAll() }
      handled = dataset.objects
    case ("read by key in a 2,000-batch store, a view each", "jsonledger"):
      let history = try JSONLedgerContender.manyBatches(2_000)
      let probes = historyProbes(batches: 2_000)
      try counted {
        for (_, key) in probes { _ = try history.read { view in try view.object("Album", key: .string(key)) } }
      }
      handled = probes.count
    case ("read by key as of a random batch, a view each", "jsonledger"):
      let history = try JSONLedgerContender.manyBatches(2_000)
      let probes = historyProbes(batches: 2_000)
      try counted {
        for (batch, key) in probes {
          _ = try history.read(asOf: batch) { view in try view.object("Album", key: .string(key)) }
        }
      }
      handled = probes.count
    case ("verify", "jsonledger"), ("verify, full", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      _ = try ledger.importDocument(document)
      let mode: VerificationMode = workload == "verify" ? .keptDigest : .fullReplay
      try counted { _ = try ledger.ledger.verify(mode) }
      handled = dataset.objects
    case ("migrate a rename and a type change", "jsonledger"), ("migrate removing an attribute", "jsonledger"),
      ("migrate by replaying the log", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      _ = try ledger.importDocument(document)
      ledger.ledger.close()
      let store = ledger.path + "/store"
      _ = try Ledger.migrate(at: store, to: Model(json: JSONParser.parse(Dataset.modelGainingAnAttribute)))
      let next =
        switch workload {
        case "migrate removing an attribute": Dataset.modelRemovingAnAttribute
        case "migrate by replaying the log": Dataset.modelRemovingARelationship
        default: Dataset.modelRenamingAndRetyping
        }
      let model = try Model(json: JSONParser.parse(next))
      try counted { _ = try Ledger.migrate(at: store, to: model) }
      handled = dataset.objects
    case ("restore a log whose to-many lists grow", "jsonledger"):
      // At most 10,000 albums: each band's list reaches 1,000, and the count takes a minute.
      let albums = min(dataset.objects, 10_000)
      let archive = try JSONLedgerContender.growingListsArchive(albums: albums)
      let restored = try scratchDirectory("restored") + "/store"
      try counted { try Ledger.restoreLog(from: archive, to: restored).close() }
      handled = albums
    case ("apply a batch of one album, a thousand times", "jsonledger"):
      let ledger = try JSONLedgerContender(dataset: dataset)
      _ = try ledger.importDocument(document)
      let batches = (0..<smallBatches).map(dataset.smallBatch)
      try counted { for batch in batches { _ = try ledger.importDocument(batch) } }
      handled = batches.count
    case ("apply a batch of one album, a thousand times", "grdb"):
      let grdb = try GRDBContender()
      try grdb.importDocument(document)
      let batches = (0..<smallBatches).map(dataset.smallBatch)
      try counted { for batch in batches { try grdb.importDocument(batch) } }
      handled = batches.count
    case ("migrate a rename and a type change", "grdb"):
      let grdb = try GRDBContender()
      try grdb.importDocument(document)
      try grdb.addAnAttribute()
      try counted { try grdb.renameAndRetype() }
      handled = dataset.objects
    case ("migrate removing an attribute", "grdb"):
      let grdb = try GRDBContender()
      try grdb.importDocument(document)
      try grdb.addAnAttribute()
      try counted { try grdb.dropAnAttribute() }
      handled = dataset.objects
    default:
      throw LedgerError.invalidArgument("no workload \(workload) for \(contender)")
    }
    print(handled)
  }

  private static func counted(_ body: () throws -> Void) throws {
    let faultsBefore = minorPageFaults()
    let start = ContinuousClock.now
    jl_callgrind_start()
    defer {
      jl_callgrind_stop()
      let elapsed = ContinuousClock.now - start
      let faults = minorPageFaults() - faultsBefore
      FileHandle.standardError.write(Data("counted region: \(elapsed), \(faults) page faults\n".utf8))
    }
    try body()
  }
}
