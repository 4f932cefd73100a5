import Foundation
import JSONLedgerTestSupport
import LMDB
import Testing

/// Store files that are not what they should be: refused with an error naming the store,
/// never a crash, never a write somewhere else.
@Suite("Store files: symlinks, truncation, foreign environments, races, a deleted lock file")
struct StoreFileSafetyTests {
  let directory: TemporaryDirectory
  let store: String
  let model: String

  init() throws {
    directory = try TemporaryDirectory()
    store = try CLIFixtures.storeWithFirstImport(in: directory)
    model = directory.path + "/model.json"
  }

  /// Run as another user (`setpriv`, when the tests run as root): a store that user cannot
  /// read is named as unreadable, with the reason, not as missing.
  ///
  /// - Reliability: A store the user cannot read (run as another user with `setpriv`) is named as unreadable,
  ///   with the reason, not as missing
  /// - Size: as root
  @Test(.tags(.reliability), .enabled(if: CLIFixtures.canRunAsAnotherUser))
  func anUnreadableStoreSaysItCannotBeReadNotThatItIsMissing() throws {
    let (status, message) = try CLIFixtures.runAsAnotherUser(["stats", store], in: directory)
    #expect(status == 1)
    #expect(message.contains("cannot be read (Permission denied)"), "\(message)")
    #expect(!message.contains("no store"), "\(message)")
  }

  /// - Reliability: A symlinked `lock.mdb` or `data.mdb` is refused (the link's target untouched); a dangling
  ///   symlink as the store is named
  /// - Size: 3 cases
  @Test(.tags(.reliability)) func aSymlinkedLockFileIsRefusedAndItsTargetLeftAlone() throws {
    let target = try directory.write("precious.txt", "keep me")
    try FileManager.default.removeItem(atPath: store + "/lock.mdb")
    try FileManager.default.createSymbolicLink(atPath: store + "/lock.mdb", withDestinationPath: target)
    let result = try CommandRunner.run(["log", store])
    #expect(result.status != 0)
    #expect(result.error.contains("lock.mdb is a symbolic link"))
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
  }

  @Test func aSymlinkedDataFileIsRefused() throws {
    let elsewhere = directory.path + "/elsewhere.mdb"
    try FileManager.default.moveItem(atPath: store + "/data.mdb", toPath: elsewhere)
    try FileManager.default.createSymbolicLink(atPath: store + "/data.mdb", withDestinationPath: elsewhere)
    let result = try CommandRunner.run(["stats", store])
    #expect(result.status != 0)
    #expect(result.error.contains("data.mdb is a symbolic link"))
  }

  /// - Reliability: A `data.mdb` shorter than its last page is refused before LMDB maps it (no SIGBUS)
  /// - Size: 3 sizes × 4 commands
  @Test(.tags(.reliability), arguments: [4096, 8192, 20000])
  func aTruncatedDataFileIsAnErrorNotASignal(keptBytes: Int) throws {
    let handle = try #require(FileHandle(forUpdatingAtPath: store + "/data.mdb"))
    try handle.truncate(atOffset: UInt64(keptBytes))
    try handle.close()
    for arguments in [["log", store], ["verify", store], ["export", store], ["stats", store]] {
      let result = try CommandRunner.run(arguments)
      #expect(result.status == 1, "\(arguments[0]) exited \(result.status)")
      #expect(result.error.contains("truncated") || result.error.contains("not an LMDB"), "\(result.error)")
    }
  }

  /// - Reliability: Another program's LMDB environment is refused by `log`, `init` and `stats`, its `data.mdb`
  ///   unchanged
  /// - Size: —
  @Test(.tags(.reliability)) func anotherProgramsEnvironmentIsRefusedWithoutWritingToIt() throws {
    let foreign = directory.path + "/foreign"
    try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
    do {
      // Another program's LMDB environment: named databases of its own.
      let environment = try Environment(path: foreign)
      let settings = try environment.database(named: "settings")
      try environment.write { txn in try txn.put(Array("dark".utf8), forKey: Array("theme".utf8), in: settings) }
    }
    let before = try Data(contentsOf: URL(fileURLWithPath: foreign + "/data.mdb"))
    for arguments in [["log", foreign], ["init", foreign, "--model", model], ["stats", foreign]] {
      let result = try CommandRunner.run(arguments)
      #expect(result.status != 0)
      #expect(result.error.contains("belongs to another program"), "\(result.error)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: foreign + "/data.mdb")) == before)
  }

  /// - Reliability: Two `init`s of one directory at once: one store, the other refused; the store verifies
  /// - Size: 8 races
  @Test(.tags(.reliability)) func twoConcurrentInitsMakeOneStoreAndTheOtherSaysSo() throws {
    let other = try directory.write(
      "other.json", #"{"entities": {"Thing": {"identity": "id", "attributes": {"id": "int64"}}}}"#)
    for trial in 0..<8 {
      let target = directory.path + "/race-\(trial)"
      let processes = [model, other].map { modelPath -> (Process, Pipe) in
        let process = Process()
        process.executableURL = CommandRunner.executable
        process.arguments = ["init", target, "--model", modelPath]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        return (process, errors)
      }
      for (process, _) in processes { try process.run() }
      for (process, _) in processes { process.waitUntilExit() }
      let statuses = processes.map(\.0.terminationStatus)
      #expect(statuses.filter { $0 == 0 }.count == 1, "trial \(trial): \(statuses)")
      #expect(try CommandRunner.run(["verify", target]).status == 0)
    }
  }

  /// - Reliability: `lock.mdb` deleted under a running writer: its next write is refused (`lock.mdb was deleted
  ///   or replaced`); the store verifies
  /// - Size: 1 writer process
  @Test(.tags(.reliability)) func aWriterRefusesToWriteAfterItsLockFileWasDeleted() throws {
    let writer = Process()
    writer.executableURL = CommandRunner.executable
    let stressed = directory.path + "/stressed"
    writer.arguments = ["stress", stressed, "--batches", "100000", "--objects", "5", "--durability", "noSync"]
    let log = directory.path + "/stress.out"
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    writer.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    let errors = Pipe()
    writer.standardError = errors
    try writer.run()
    // Wait for a first commit, then delete the lock file under the running writer.
    let deadline = Date().addingTimeInterval(30)
    while writer.isRunning, Date() < deadline,
      !((try? String(contentsOfFile: log, encoding: .utf8))?.contains("committed") ?? false)
    {
      usleep(10_000)
    }
    try FileManager.default.removeItem(atPath: stressed + "/lock.mdb")
    let stop = Date().addingTimeInterval(30)
    while writer.isRunning, Date() < stop { usleep(10_000) }
    if writer.isRunning { writer.terminate() }
    writer.waitUntilExit()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(writer.terminationStatus != 0)
    #expect(message.contains("lock.mdb was deleted or replaced"))
    #expect(try CommandRunner.run(["verify", stressed]).status == 0)
  }

  @Test(.enabled(if: getuid() != 0, "root writes anywhere"))
  func anUnwritableParentIsNamedWithItsCause() throws {
    let locked = directory.path + "/locked"
    try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
    chmod(locked, 0o500)
    defer { chmod(locked, 0o700) }
    let result = try CommandRunner.run(["init", locked + "/store", "--model", model])
    #expect(result.status != 0)
    #expect(result.error.contains("cannot create the store directory"))
    #expect(!result.error.contains("file://"))
  }

  @Test func aDanglingSymlinkAsTheStoreIsNamed() throws {
    let link = directory.path + "/dangling"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.path + "/nowhere")
    let result = try CommandRunner.run(["init", link, "--model", model])
    #expect(result.status != 0)
    #expect(result.error.contains("symbolic link to nothing"))
  }

  /// - Reliability: A chunked import that fails part-way names the file, the parts applied and how to resume
  ///   with the same idempotency key
  /// - Size: 3 chunks
  @Test(.tags(.reliability)) func aChunkedImportThatStopsPartWaySaysWhatWasAppliedAndHowToResume() throws {
    let albums = (0..<5).map { #"{"name": "album \#($0)", "label": "L"}"# }
    let broken = "[" + albums.joined(separator: ", ") + #", {"name": "bad", "released": "not a date"}]"#
    let file = try directory.write("albums.json", broken)
    let result = try CommandRunner.run([
      "import", store, file, "--entity", "Album", "--chunk-size", "2", "--idempotency-key", "albums",
    ])
    #expect(result.status == 1)
    #expect(result.error.contains("importing \(file) stopped at part 3"))
    #expect(result.error.contains("parts 1 to 2 are applied as batches 2 to 3"))
    #expect(result.error.contains("same --idempotency-key"))
    let fixed = try directory.write("albums.json", broken.replacingOccurrences(of: "not a date", with: "2020-01-01"))
    let resumed = try CommandRunner.run([
      "import", store, fixed, "--entity", "Album", "--chunk-size", "2", "--idempotency-key", "albums", "--json",
    ])
    #expect(resumed.status == 0, "\(resumed.error)")
    #expect(try CommandRunner.run(["log", store, "--json"]).output.components(separatedBy: "\"batch\"").count - 1 == 4)
  }

  /// A full file system (a 2 MB tmpfs, which needs root to mount; the test runner reports the
  /// test skipped otherwise): the import fails naming the store and the free space, nothing is
  /// half-written, and an export that cannot be written fails too.
  ///
  /// - Reliability: A full file system (2 MB tmpfs, when run as root): the import fails naming the store and
  ///   its free space; what was committed verifies
  /// - Size: 60,000 objects
  @Test(.tags(.reliability), .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
  func aFullDiskIsAnErrorThatSaysSoAndLosesNothingCommitted() throws {
    let mountPoint = directory.path + "/small"
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    let mount = Process()
    mount.executableURL = URL(fileURLWithPath: "/bin/mount")
    mount.arguments = ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint]
    mount.standardError = Pipe()
    try mount.run()
    mount.waitUntilExit()
    // As root, a mount that fails is a failure of the test, not a skip.
    try #require(mount.terminationStatus == 0, "mount -t tmpfs failed")
    defer {
      let unmount = Process()
      unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
      unmount.arguments = [mountPoint]
      try? unmount.run()
      unmount.waitUntilExit()
    }
    let small = mountPoint + "/store"
    #expect(try CommandRunner.run(["init", small, "--model", model]).status == 0)
    let first = try directory.write("first.json", CLIFixtures.first)
    #expect(try CommandRunner.run(["import", small, first]).status == 0)
    let many = try directory.write(
      "many.json", "[" + (0..<60_000).map { #"{"name": "album \#($0)", "label": "L"}"# }.joined(separator: ",") + "]")
    let result = try CommandRunner.run(["import", small, many, "--entity", "Album"])
    #expect(result.status == 1)
    #expect(result.error.contains(small))
    #expect(result.error.contains("free space"))
    let verified = try CommandRunner.run(["verify", small, "--json"])
    #expect(verified.status == 0, "\(verified.error)")
    #expect(try CommandRunner.run(["get", small, "Album", "Tin Drum"]).status == 0)
  }
}
