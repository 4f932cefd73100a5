import Foundation
import JSONLedgerTestSupport
import Testing

/// `jsonledger serve` refuses the settings that would expose writes, before it binds anything.
@Suite("jsonledger serve's arguments")
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
}
