import Foundation
import JSONLedgerTestSupport
import Testing

/// `jsonledger serve` refuses the settings that would expose writes, before it binds anything,
/// and serves the store as it is when another process changes its model.
@Suite("jsonledger serve's arguments and store")
struct ServeCLITests {
  @Test func writesAreNeverOpenToAnotherAddressAndATokenMustBeLongEnough() throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", directory.storePath, "--model", model]).status == 0)
    let open = try CommandRunner.run(["serve", directory.storePath, "--host", "0.0.0.0", "--port", "0"])
    #expect(open.status != 0)
    #expect(open.error.contains("--token-file, or --read-only"), "\(open.error)")
    let short = try directory.write("token", "abc\n")
    let weak = try CommandRunner.run(["serve", directory.storePath, "--port", "0", "--token-file", short])
    #expect(weak.status != 0)
    #expect(weak.error.contains("use at least 16"), "\(weak.error)")
    let missing = try CommandRunner.run([
      "serve", directory.storePath, "--port", "0", "--token-file", directory.path + "/none",
    ])
    #expect(missing.status != 0)
    #expect(missing.error.contains("cannot read the token file"), "\(missing.error)")
    let reads = try CommandRunner.run(["serve", directory.storePath, "--token-for-reads"])
    #expect(reads.status != 0)
    #expect(reads.error.contains("--token-for-reads needs --token-file"), "\(reads.error)")
    let port = try CommandRunner.run(["serve", directory.storePath, "--port", "70000"])
    #expect(port.error.contains("--port must be from 0 to 65535"), "\(port.error)")
  }

  /// Regression: a server kept the model it opened with, and answered every request with
  /// `modelChanged` once `jsonledger migrate` (or a replica's follower) migrated the store.
  @Test func aServerReadsAndWritesUnderTheNewModelOnceAnotherProcessMigratesTheStore() async throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    let store = directory.storePath
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let first = try directory.write("first.json", CLIFixtures.first)
    #expect(try CommandRunner.run(["import", store, first]).status == 0)
    let server = try ServerProcess(store: store)
    defer { server.stop() }
    let (before, entities) = try await server.get("/v1/entities")
    #expect(before == 200, "\(entities)")
    #expect(!entities.contains("Label"), "\(entities)")

    let newModel = CLIFixtures.model.replacingOccurrences(
      of: #""Album": {"identity": "name","#,
      with: #""Label": {"identity": "name", "attributes": {"name": "string"}}, "Album": {"identity": "name","#)
    let newPath = try directory.write("model-2.json", newModel)
    let migrate = try CommandRunner.run(["migrate", store, "--model", newPath])
    #expect(migrate.status == 0, "\(migrate.error)")

    let (after, migrated) = try await server.get("/v1/entities")
    #expect(after == 200, "\(migrated)")
    #expect(migrated.contains("Label"), "\(migrated)")
    let (page, console) = try await server.get("/entities/Label")
    #expect(page == 200, "\(console)")
    let (created, answer) = try await server.post("/v1/batches?entity=Label", #"[{"name": "Virgin"}]"#)
    #expect(created == 201, "\(answer)")
    let (read, label) = try await server.get("/v1/entities/Label/objects/Virgin")
    #expect(read == 200, "\(label)")
  }
}
