import Foundation
import JSONLedgerTestSupport
import Testing

/// Messages a new user meets first say what happened in plain words.
@Suite("CLI messages a new user meets")
struct CLIPolishTests {
  @Test func aMissingModelFileIsNotFoundAndAnEntityInTheWrongCaseIsSuggested() throws {
    let directory = try TemporaryDirectory()
    let missing = try CommandRunner.run(["init", directory.storePath, "--model", directory.path + "/nomodel.json"])
    #expect(missing.status == 1)
    #expect(missing.error.contains("nomodel.json: not found"), "\(missing.error)")
    #expect(!missing.error.contains("is invalid"), "\(missing.error)")
    let store = directory.path + "/store2"
    _ = try CommandRunner.run(["stress", store, "--batches", "2", "--objects", "2"])
    let wrongCase = try CommandRunner.run(["export", store, "--entity", "album"])
    #expect(wrongCase.status == 1)
    #expect(wrongCase.error.contains("did you mean Album?"), "\(wrongCase.error)")
    let spaced = try CommandRunner.run(["export", store, "--entity", "Album", "--where", "label = round 2"])
    #expect(spaced.status == 0, "\(spaced.error)")
    #expect(spaced.output.contains("album 1"), "\(spaced.output)")
  }
}
