import Foundation
import JSONLedgerTestSupport
import Testing

/// A store the operator may read but not write: on a read-only mount (a snapshot, a volume
/// mounted `ro`), or owned by another user. The read commands open it read-only and read it;
/// the writing ones say why they cannot.
@Suite("A store on a read-only mount, or without write access")
struct ReadOnlyStoreTests {
  let directory: TemporaryDirectory
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    store = try CLIFixtures.storeWithFirstImport(in: directory)
  }

  /// Runs `/bin/mount` or `/bin/umount` with `arguments`; whether it succeeded.
  static func mount(_ command: String, _ arguments: [String]) throws -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/" + command)
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus == 0
  }

  /// - Reliability: A store on a read-only mount (a bind mount remounted `ro`, as root): `export` (equal to the
  ///   writable store's), `get`, `log`, `show`, `diff`, `blame`, `stats`, `verify`, `backup` and
  ///   `serve --read-only` read it; `import` exits 1 naming the read-only file system; `data.mdb`
  ///   byte for byte unchanged. A reader who cannot write `lock.mdb` (`setpriv`) is told so
  /// - Size: 10 commands, 1 server; as root
  @Test(.tags(.reliability), .enabled(if: getuid() == 0, "a read-only bind mount needs root"))
  func readCommandsAndAReadOnlyServerReadAStoreOnAReadOnlyMount() async throws {
    let expected = try CommandRunner.run(["export", store])
    let mounted = directory.path + "/snapshot"
    try FileManager.default.createDirectory(atPath: mounted, withIntermediateDirectories: false)
    // As root, a mount that fails is a failure of the test, not a skip.
    try #require(try Self.mount("mount", ["--bind", store, mounted]), "mount --bind failed")
    defer { _ = try? Self.mount("umount", [mounted]) }
    try #require(try Self.mount("mount", ["-o", "remount,bind,ro", mounted]), "remount read-only failed")
    let data = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))

    let export = try CommandRunner.run(["export", mounted])
    #expect(export.status == 0, "\(export.error)")
    #expect(export.output == expected.output)
    for command in [
      ["get", mounted, "Band", "Japan"], ["log", mounted], ["show", mounted, "1"], ["diff", mounted, "0", "1"],
      ["blame", mounted, "Band", "Japan"], ["stats", mounted], ["verify", mounted],
      ["backup", mounted, directory.path + "/copy"],
    ] {
      let result = try CommandRunner.run(command)
      #expect(result.status == 0, "\(command[0]): \(result.error)")
    }
    #expect(try CommandRunner.run(["get", directory.path + "/copy", "Band", "Japan"]).status == 0)

    let server = try ServerProcess(store: mounted, arguments: ["--read-only"])
    let (status, body) = try await server.get("/v1/entities/Band/objects/Japan")
    let (write, refusal) = try await server.post("/v1/batches?entity=Band", #"[{"name": "Can"}]"#)
    server.stop()
    #expect(status == 200, "\(body)")
    #expect(body.contains("1974"), "\(body)")
    #expect(write == 405, "\(refusal)")

    let payload = try directory.write("second.json", #"{"bands": [{"name": "Can", "formed": 1968}]}"#)
    let importing = try CommandRunner.run(["import", mounted, payload])
    #expect(importing.status == 1)
    #expect(importing.error.contains("read-only file system"), "\(importing.error)")
    #expect(importing.error.contains(mounted), "\(importing.error)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == data)
  }

  /// Run as another user (`setpriv`, when the tests run as root) who may read the store's
  /// files but not write its lock file, where every LMDB reader takes a slot.
  @Test(.enabled(if: CLIFixtures.canRunAsAnotherUser))
  func aReaderWhoCannotWriteTheLockFileIsToldWhatItNeeds() throws {
    chmod(store, 0o755)
    chmod(store + "/data.mdb", 0o644)
    chmod(store + "/lock.mdb", 0o644)
    let (status, message) = try CLIFixtures.runAsAnotherUser(["get", store, "Band", "Japan"], in: directory)
    #expect(status == 1)
    #expect(message.contains("permission denied"), "\(message)")
    #expect(message.contains("lock.mdb"), "\(message)")
    #expect(message.contains(store), "\(message)")
  }
}
