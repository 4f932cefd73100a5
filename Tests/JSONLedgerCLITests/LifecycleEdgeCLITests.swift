import Foundation
import JSONLedgerTestSupport
import LMDB
import Testing

/// strace holds a process at a chosen system call (a delay, or SIGKILL): the races and crashes
/// below happen at the one dangerous step, in real processes, every run.
private let strace: String? = ["/usr/bin/strace", "/bin/strace"].first {
  FileManager.default.isExecutableFile(atPath: $0)
}

private let format3Fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().appendingPathComponent("JSONLedgerTests/Fixtures/Format3Store/data.mdb")

/// Regression tests, through the command line tool, for the lifecycle commands at their
/// edges (reliability, round three): each names its finding.
@Suite("jsonledger lifecycle commands at their edges")
struct LifecycleEdgeCLITests {
  /// Runs `jsonledger` under strace with `straceArguments`, in the background.
  static func startTraced(_ straceArguments: [String], _ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: strace ?? "/usr/bin/strace")
    process.arguments = ["-f", "-o", "/dev/null"] + straceArguments + [CommandRunner.executable.path] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }

  static func format3Store(_ path: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: format3Fixture.path, toPath: path + "/data.mdb")
  }

  /// Flips one byte in the middle of the log record of `batch`, through LMDB (the file stays
  /// a sound LMDB file; only the record's checksum fails).
  static func damageRecord(_ batch: UInt64, of store: String) throws {
    let environment = try Environment(path: store)
    let log = try environment.database(named: "log")
    let key = (0..<8).map { UInt8(truncatingIfNeeded: batch >> (56 - 8 * UInt64($0))) }
    try environment.write { txn in
      guard var value = try txn.value(forKey: key, in: log) else { return }
      value[value.count / 2] ^= 0x20
      try txn.put(value, forKey: key, in: log)
    }
  }

  /// A store that keeps no digest of its projections (written before 0.14): `verify` replays
  /// and says how to keep one, `--keep-digest` keeps the one its replay proves, and the next
  /// `verify` reads the store once.
  @Test func aStoreWithoutADigestIsReplayedAndKeepsOneWhenAsked() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    #expect(try CommandRunner.run(["stress", store, "--batches", "3", "--objects", "20"]).status == 0)
    do {
      let environment = try Environment(path: store)
      let meta = try environment.database(named: "meta")
      let deleted = try environment.write { txn in try txn.delete(Array("projectionDigest".utf8), in: meta) }
      #expect(deleted)
    }
    let replayed = try CommandRunner.run(["verify", store])
    #expect(replayed.status == 0, "\(replayed.error)")
    #expect(replayed.output.contains("batches replayed"), "\(replayed.output)")
    #expect(replayed.output.contains("jsonledger verify --keep-digest"))
    let kept = try CommandRunner.run(["verify", store, "--keep-digest", "--json"])
    #expect(kept.output.contains("\"mode\": \"fullReplay\""), "\(kept.output)")
    let again = try CommandRunner.run(["verify", store])
    #expect(again.output.contains("match their kept digest"), "\(again.output)")
  }

  // MARK: G1, G19: two operators at once

  /// - Reliability: Two `compact`s at once, and a `compact` racing a `migrate` (the first held 2.5 s after its
  ///   archive with strace): one wins, the other exits 1 and leaves no archive; the store verifies
  ///   and takes imports
  /// - Size: 2 races
  @Test(.tags(.reliability), .enabled(if: strace != nil, "needs strace"))
  func twoCompactsAtOnceLeaveOneCompactionAndAStoreThatKeepsWorking() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "10", "--objects", "20"])
    // The first compact is held for 2.5 s after its archive is written (its first fsync).
    let first = try Self.startTraced(
      ["-e", "trace=fsync", "-e", "inject=fsync:delay_exit=2500000:when=1"],
      ["compact", store, "--keep-batches", "3", "--archive", directory.path + "/first"])
    usleep(800_000)
    let second = try CommandRunner.run([
      "compact", store, "--keep-batches", "0", "--archive", directory.path + "/second",
    ])
    first.waitUntilExit()
    #expect(second.status == 0, "\(second.error)")
    #expect(first.terminationStatus == 1)
    // The loser leaves no archive of a compaction that did not happen.
    #expect(!FileManager.default.fileExists(atPath: directory.path + "/first"))
    let verify = try CommandRunner.run(["verify", store])
    #expect(verify.status == 0, "\(verify.error)")
    let more = try CommandRunner.run(["stress", store, "--batches", "1", "--objects", "5"])
    #expect(more.status == 0, "\(more.error)")
    #expect(try CommandRunner.run(["verify", store]).status == 0)
  }

  @Test(.enabled(if: strace != nil, "needs strace"))
  func aCompactThatLosesARaceWithAMigrationSaysSoAndLeavesNoArchive() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "6", "--objects", "10"])
    let model = try directory.write(
      "model.json",
      #"""
      {"entities": {
        "Band": {"identity": "name", "attributes": {"name": "string", "country": "string"},
                 "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
        "Album": {"identity": "name", "attributes": {"name": "string", "label": "string"},
                  "relationships": {"band": {"to": "Band", "inverse": "albums"}}}
      }}
      """#)
    let archive = directory.path + "/archive"
    let compact = try Self.startTraced(
      ["-e", "trace=fsync", "-e", "inject=fsync:delay_exit=2500000:when=1"],
      ["compact", store, "--keep-batches", "2", "--archive", archive])
    usleep(800_000)
    let migrate = try CommandRunner.run(["migrate", store, "--model", model])
    compact.waitUntilExit()
    #expect(migrate.status == 0, "\(migrate.error)")
    #expect(compact.terminationStatus == 1)
    #expect(!FileManager.default.fileExists(atPath: archive))
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    // A retry does not trip over a leftover archive.
    let retry = try CommandRunner.run(["compact", store, "--keep-batches", "2", "--archive", archive])
    #expect(retry.status == 0, "\(retry.error)")
  }

  // MARK: A writer killed while it creates a store

  /// Killed at each system call of a store's creation (LMDB makes lock.mdb before data.mdb,
  /// then writes the meta pages and the first commit): `verify` says there is no store, or that
  /// its creation was cut short, or checks what was committed; the next writer finishes it.
  @Test(.enabled(if: strace != nil, "needs strace"))
  func aWriterKilledAtEachStepOfCreatingAStoreLeavesOneTheNextWriterFinishes() throws {
    let directory = try TemporaryDirectory()
    let steps: [(call: String, file: String, when: Int)] = [
      ("mkdir", "", 1), ("openat", "/lock.mdb", 1), ("openat", "/data.mdb", 1),
      ("pwrite64", "/data.mdb", 1), ("pwrite64", "/data.mdb", 2), ("fdatasync", "/data.mdb", 1),
      ("fdatasync", "/data.mdb", 2),
    ]
    for (index, step) in steps.enumerated() {
      let store = directory.path + "/store-\(index)"
      let writer = try Self.startTraced(
        [
          "-P", store + step.file, "-e", "trace=\(step.call)", "-e",
          "inject=\(step.call):signal=KILL:when=\(step.when)",
        ],
        ["stress", store, "--batches", "3", "--objects", "5"])
      writer.waitUntilExit()
      #expect(writer.terminationReason == .uncaughtSignal, "\(step): the writer was not killed")
      let verify = try CommandRunner.run(["verify", store])
      #expect(
        verify.status == 0 || verify.error.contains("no store at") || verify.error.contains("cut short"),
        "\(step): \(verify.error)")
      let next = try CommandRunner.run(["stress", store, "--batches", "1", "--objects", "5"])
      #expect(next.status == 0, "\(step): \(next.error)")
      let after = try CommandRunner.run(["verify", store])
      #expect(after.status == 0, "\(step): \(after.error)")
    }
  }

  // MARK: G3

  @Test func aModelWithoutEntitiesAndAMigrationThatRemovesDataAreRefused() throws {
    let directory = try TemporaryDirectory()
    let empty = try directory.write("empty.json", #"{"entities": {}}"#)
    let initialize = try CommandRunner.run(["init", directory.path + "/new", "--model", empty])
    #expect(initialize.status == 1)
    #expect(initialize.error.contains("at least one entity"), "\(initialize.error)")
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "2", "--objects", "4"])
    let refused = try CommandRunner.run(["migrate", store, "--model", empty])
    #expect(refused.status == 1)
    let bandsOnly = try directory.write(
      "bands.json", #"{"entities": {"Band": {"identity": "name", "attributes": {"name": "string"}}}}"#)
    let dryRun = try CommandRunner.run(["migrate", store, "--model", bandsOnly, "--dry-run"])
    #expect(dryRun.status == 0, "\(dryRun.error)")
    #expect(dryRun.output.contains("would remove Album with its 6 objects"), "\(dryRun.output)")
    let withoutFlag = try CommandRunner.run(["migrate", store, "--model", bandsOnly])
    #expect(withoutFlag.status == 1)
    #expect(withoutFlag.error.contains("--allow-removals"), "\(withoutFlag.error)")
    #expect(try CommandRunner.run(["export", store, "--entity", "Album"]).output.contains("album 3"))
    let allowed = try CommandRunner.run(["migrate", store, "--model", bandsOnly, "--allow-removals"])
    #expect(allowed.status == 0, "\(allowed.error)")
  }

  // MARK: G4, G5, G6, G21, G22: upgrade

  /// - Reliability: `upgrade` of another program's LMDB: refused, `data.mdb` byte for byte unchanged; a refused
  ///   upgrade (a damaged record) leaves no `STORE.upgrading`; `STORE/` and `.` work; a user's
  ///   `STORE.upgrading` is left alone
  /// - Size: 4 cases
  @Test(.tags(.reliability)) func upgradeOfAnotherProgramsLMDBWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let path = directory.storePath
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    do {
      let environment = try Environment(path: path)
      let database = try environment.database(named: "sessions")
      try environment.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: database) }
    }
    let before = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
    let upgrade = try CommandRunner.run(["upgrade", path])
    #expect(upgrade.status == 1)
    #expect(upgrade.error.contains("belongs to another program"), "\(upgrade.error)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == before)
    #expect(!FileManager.default.fileExists(atPath: path + ".upgrading"))
  }

  /// - Reliability: An `upgrade` killed (strace, SIGKILL) at the rename that moves the new store into place:
  ///   commands name the state, nothing is created over it, a re-run finishes; a `restore-log`
  ///   killed at random moments and at its rename never leaves a store that looks whole
  /// - Size: 4 kills
  @Test(.tags(.reliability), .enabled(if: strace != nil, "needs strace"))
  func anUpgradeKilledBetweenItsRenamesIsFinishedByARerun() throws {
    let directory = try TemporaryDirectory()
    let reference = directory.path + "/reference"
    try Self.format3Store(reference)
    #expect(try CommandRunner.run(["upgrade", reference]).status == 0)
    let expected = try CommandRunner.run(["export", reference]).output
    let store = directory.storePath
    try Self.format3Store(store)
    // SIGKILL at the rename that would move the new store into place: the old one is moved
    // away already.
    let killed = try Self.startTraced(
      ["-e", "trace=rename", "-P", store + ".upgrading/store", "-e", "inject=rename:signal=KILL:when=1"],
      ["upgrade", store])
    killed.waitUntilExit()
    #expect(!FileManager.default.fileExists(atPath: store))
    #expect(FileManager.default.fileExists(atPath: store + ".format3/data.mdb"))
    let read = try CommandRunner.run(["export", store])
    #expect(read.status == 1)
    #expect(read.error.contains("run `jsonledger upgrade \(store)`"), "\(read.error)")
    // Nothing is created over it meanwhile.
    #expect(try CommandRunner.run(["stress", store, "--batches", "1"]).status == 1)
    let rerun = try CommandRunner.run(["upgrade", store])
    #expect(rerun.status == 0, "\(rerun.error)")
    #expect(try CommandRunner.run(["export", store]).output == expected)
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: store + ".upgrading"))
  }

  /// H17 (round four): killed at each of its flushes, an upgrade leaves the store at its path,
  /// old or new, or a re-run of the same command finishes it; never nothing a re-run fixes.
  ///
  /// - Reliability: An `upgrade` killed (strace, SIGKILL) at each of its fsyncs in turn: whatever is left, the
  ///   same command finishes it, its export equal to an upgrade never killed (H17)
  /// - Size: up to 12 kill points
  @Test(.tags(.reliability), .enabled(if: strace != nil, "needs strace"))
  func anUpgradeKilledAtEachFlushIsLeftWholeOrFinishedByARerun() throws {
    let directory = try TemporaryDirectory()
    let reference = directory.path + "/reference"
    try Self.format3Store(reference)
    #expect(try CommandRunner.run(["upgrade", reference]).status == 0)
    let expected = try CommandRunner.run(["export", reference]).output
    for when in 1...12 {
      let store = directory.path + "/store-\(when)"
      try Self.format3Store(store)
      let killed = try Self.startTraced(
        ["-e", "trace=fsync,fdatasync", "-e", "inject=fsync,fdatasync:signal=KILL:when=\(when)"], ["upgrade", store])
      killed.waitUntilExit()
      // Whatever was left, the same command finishes it.
      let rerun = try CommandRunner.run(["upgrade", store])
      #expect(rerun.status == 0, "flush \(when): \(rerun.error)")
      #expect(try CommandRunner.run(["export", store]).output == expected, "flush \(when)")
      #expect(try CommandRunner.run(["verify", store]).status == 0, "flush \(when)")
      if killed.terminationReason != .uncaughtSignal { break }
    }
  }

  @Test func upgradeNeverRemovesADirectoryItDidNotMake() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    try Self.format3Store(store)
    try FileManager.default.createDirectory(atPath: store + ".upgrading", withIntermediateDirectories: true)
    let mine = try directory.write("store.upgrading/notes.txt", "mine")
    let upgrade = try CommandRunner.run(["upgrade", store])
    #expect(upgrade.status == 1)
    #expect(upgrade.error.contains("was not made by JSONLedger"), "\(upgrade.error)")
    #expect(try String(contentsOfFile: mine, encoding: .utf8) == "mine")
    #expect(FileManager.default.fileExists(atPath: store + "/data.mdb"))
  }

  /// Killed between creating its build directory and writing the marker in it, a restore
  /// leaves an empty directory, or one holding only the marker's temporary file (under the
  /// name it is written to, or a temporary name of Foundation's atomic write): nothing of the
  /// user's, so a rerun takes it as its own (one CI run in about five hit this window).
  ///
  /// - Reliability: `restore-log` and `upgrade` killed between creating their build directory and writing its
  ///   marker, or while removing an earlier one: the rerun takes the directory again (it refused
  ///   it before)
  /// - Size: 5 leftovers; 60 kills at 0–150 ms by hand
  @Test(
    .tags(.reliability),
    arguments: [
      "", "jsonledger-build.new=", "jsonledger-build.new=building\n", "jsonledger-build.new=buil",
      ".jsonledger-build.new.x7Yq2a=build",
    ])
  func aBuildDirectoryCutShortBeforeItsMarkerIsTakenAgain(leftover: String) throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "3", "--objects", "2"])
    let archive = directory.path + "/archive"
    #expect(try CommandRunner.run(["compact", store, "--keep-batches", "0", "--archive", archive]).status == 0)
    let restored = directory.path + "/restored"
    try FileManager.default.createDirectory(atPath: restored + ".restoring", withIntermediateDirectories: false)
    if let split = leftover.firstIndex(of: "=") {
      _ = try directory.write(
        "restored.restoring/" + leftover[..<split], String(leftover[leftover.index(after: split)...]))
    }
    let rerun = try CommandRunner.run(["restore-log", restored, archive])
    #expect(rerun.status == 0, "\(rerun.error)")
    #expect(try CommandRunner.run(["verify", restored]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: restored + ".restoring"))
  }

  @Test func upgradeTakesATrailingSlashAndTheCurrentDirectory() throws {
    let directory = try TemporaryDirectory()
    let slashed = directory.path + "/slashed"
    try Self.format3Store(slashed)
    let first = try CommandRunner.run(["upgrade", slashed + "/"])
    #expect(first.status == 0, "\(first.error)")
    #expect(FileManager.default.fileExists(atPath: slashed + ".format3/data.mdb"))
    #expect(try CommandRunner.run(["verify", slashed]).status == 0)
    let here = directory.path + "/here"
    try Self.format3Store(here)
    let second = try CommandRunner.run(["upgrade", "."], directory: here)
    #expect(second.status == 0, "\(second.error)")
    #expect(FileManager.default.fileExists(atPath: here + ".format3/data.mdb"))
    #expect(try CommandRunner.run(["verify", here]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: here + "/.upgrading"))
  }

  @Test func aRefusedUpgradeLeavesNoHalfBuiltStore() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    try Self.format3Store(store)
    try Self.damageRecord(4, of: store)
    let before = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
    let upgrade = try CommandRunner.run(["upgrade", store])
    #expect(upgrade.status == 1)
    #expect(upgrade.error.contains("batch 4"), "\(upgrade.error)")
    #expect(!FileManager.default.fileExists(atPath: store + ".upgrading"))
    #expect(!FileManager.default.fileExists(atPath: store + ".format3"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == before)
  }

  // MARK: G9, G11, G13: restore-log

  @Test(.enabled(if: strace != nil, "needs strace"))
  func aRestoreKilledAtAnyMomentLeavesNoStoreThatLooksWhole() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "1200", "--objects", "2", "--durability", "noSync"])
    let archive = directory.path + "/archive"
    #expect(try CommandRunner.run(["compact", store, "--keep-batches", "0", "--archive", archive]).status == 0)
    let restored = directory.path + "/restored"
    for milliseconds in [30, 120, 400] {
      try CommandRunner.runKilled(["restore-log", restored, archive], afterMilliseconds: milliseconds)
      if FileManager.default.fileExists(atPath: restored) {
        // Only a whole store ever has the name.
        #expect(try CommandRunner.run(["log", restored, "--limit", "1"]).output.contains("batch 1200"))
        try FileManager.default.removeItem(atPath: restored)
      }
    }
    // Killed at the last step, the rename into place.
    let killed = try Self.startTraced(
      ["-e", "trace=rename", "-P", restored + ".restoring/store", "-e", "inject=rename:signal=KILL:when=1"],
      ["restore-log", restored, archive])
    killed.waitUntilExit()
    #expect(!FileManager.default.fileExists(atPath: restored))
    let rerun = try CommandRunner.run(["restore-log", restored, archive])
    #expect(rerun.status == 0, "\(rerun.error)")
    #expect(rerun.output.contains("batches up to 1200"), "\(rerun.output)")
    #expect(try CommandRunner.run(["verify", restored]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: restored + ".restoring"))
  }

  /// - Reliability: `restore-log` memory does not grow with the archive (peak RSS of a 3.7 MB and an 11 MB
  ///   archive)
  /// - Size: 2 archives
  @Test(.tags(.reliability)) func restoreLogsMemoryDoesNotGrowWithTheArchive() throws {
    let directory = try TemporaryDirectory()
    /// An archive of `batches` batches of 2,000 changes each, and its size.
    func archive(_ batches: Int) throws -> (path: String, bytes: Int) {
      let store = directory.path + "/store-\(batches)"
      _ = try CommandRunner.run([
        "stress", store, "--batches", "\(batches)", "--objects", "2000", "--durability", "noSync",
      ])
      let path = directory.path + "/archive-\(batches)"
      #expect(try CommandRunner.run(["compact", store, "--keep-batches", "0", "--archive", path]).status == 0)
      return (path, (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
    }
    let (smaller, larger) = (try archive(40), try archive(120))
    let smallerPeak = try CommandRunner.peakMemory(["restore-log", directory.path + "/r1", smaller.path])
    let largerPeak = try CommandRunner.peakMemory(["restore-log", directory.path + "/r2", larger.path])
    #expect(try CommandRunner.run(["verify", directory.path + "/r2"]).status == 0)
    // Reading the archive whole, as restore-log once did, held it three times over: the peak
    // grew by at least three times the difference in size. Read record by record, what still
    // grows with the store (LMDB's free list, the heap's fragments) stays well under twice it.
    let grown = largerPeak - smallerPeak
    #expect(
      grown < 2 * (larger.bytes - smaller.bytes),
      "peaks \(smallerPeak) and \(largerPeak) for \(smaller.bytes) and \(larger.bytes) bytes")
  }

  // MARK: G12, G18, G20: backup

  /// - Reliability: A backup of a store with a damaged record exits 1 and writes nothing (kept with
  ///   `--allow-damaged`); a backup inside the store is refused
  /// - Size: 2 cases
  @Test(.tags(.reliability)) func aBackupOfADamagedStoreIsAnErrorUnlessAllowed() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "5", "--objects", "5"])
    try Self.damageRecord(3, of: store)
    let copy = directory.path + "/copy"
    let refused = try CommandRunner.run(["backup", store, copy])
    #expect(refused.status == 1)
    #expect(refused.error.contains("does not verify"), "\(refused.error)")
    #expect(refused.error.contains("batch 3"), "\(refused.error)")
    #expect(!FileManager.default.fileExists(atPath: copy))
    let allowed = try CommandRunner.run(["backup", store, copy, "--allow-damaged"])
    #expect(allowed.status == 0, "\(allowed.error)")
    #expect(allowed.error.contains("the copy is damaged"), "\(allowed.error)")
  }

  @Test func aBackupInsideTheStoreIsRefusedAndABackupNamesTheBatchesItHolds() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "40", "--objects", "2", "--durability", "noSync"])
    let inside = try CommandRunner.run(["backup", store, store + "/copy"])
    #expect(inside.status == 1)
    #expect(inside.error.contains("inside the store"), "\(inside.error)")
    #expect(try CommandRunner.run(["compact", store, "--keep-batches", "2", "--discard"]).status == 0)
    let backup = try CommandRunner.run(["backup", store, directory.path + "/copy"])
    #expect(backup.output.contains("batches 38 to 40"), "\(backup.output)")
    let asOf = try CommandRunner.run(["get", store, "Album", "album 1", "--as-of", "0"])
    #expect(asOf.error.contains("the log holds batches 38 to 40"), "\(asOf.error)")
  }

  // MARK: G15, G17: compact arguments and output

  @Test func compactBeforeReadsTheWholeArgumentAsImportsReadDates() throws {
    let directory = try TemporaryDirectory()
    let store = directory.storePath
    _ = try CommandRunner.run(["stress", store, "--batches", "3", "--objects", "2"])
    for junk in ["2026-01-01T00:00:00Zjunk", "2026-01-01T00:00:00ZZZ", "yesterday"] {
      let refused = try CommandRunner.run(["compact", store, "--before", junk, "--discard"])
      #expect(refused.status != 0, "\(junk)")
      #expect(refused.error.contains("ISO 8601"), "\(refused.error)")
    }
    #expect(try CommandRunner.run(["log", store]).output.contains("batch 1 "))
    for accepted in ["2020-01-01", "2020-01-01T00:00:00.250Z", "2020-01-01T02:00:00+02:00"] {
      let result = try CommandRunner.run(["compact", store, "--before", accepted, "--discard", "--json"])
      #expect(result.status == 0, "\(accepted): \(result.error)")
      // Nothing is that old: nothing compacted, and no archive named.
      #expect(result.output.contains("\"archive\": null"), "\(result.output)")
    }
  }
}
