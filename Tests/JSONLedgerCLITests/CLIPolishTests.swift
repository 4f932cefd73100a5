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

  @Test func aMistypedCommandOrEntityIsNamedWithTheOneMeant() throws {
    let typo = try CommandRunner.run(["exprot", "store"])
    #expect(typo.status == 64)
    #expect(typo.error.contains("unknown command \"exprot\": did you mean export?"), "\(typo.error)")
    let nonsense = try CommandRunner.run(["zzz"])
    #expect(nonsense.status == 64)
    #expect(nonsense.error.contains("unknown command \"zzz\" (see jsonledger --help)"), "\(nonsense.error)")
    #expect(try CommandRunner.run(["help", "import"]).status == 0)
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    _ = try CommandRunner.run(["stress", store, "--batches", "1", "--objects", "2"])
    let entity = try CommandRunner.run(["export", store, "--entity", "Albmu"])
    #expect(entity.status == 1)
    #expect(entity.error.contains("did you mean Album?"), "\(entity.error)")
  }

  /// An argument a command refuses is named with that command's usage (exit 64), before the
  /// store is opened: never the tool's "Usage: jsonledger <subcommand>".
  @Test(
    arguments: [
      (["export", "STORE", "--entity", "Album", "--where", "label"], "--where: at character 6 of \"label\"", "export"),
      (["export", "STORE", "--where", "label=x"], "--where needs --entity", "export"),
      (["compact", "STORE", "--before", "999", "--discard"], "--before takes an ISO 8601 time", "compact"),
      (["serve", "STORE", "--token-file", "TOKEN"], "is 5 characters: use at least 16", "serve"),
      (["serve", "STORE", "--token-file", "MISSING"], "cannot read the token file", "serve"),
      (["log", "STORE", "--limit=-1"], "--limit must be 1 or more, not -1", "log"),
      (["log", "STORE", "--entity", "Album", "--key", "a", "--limit=-1"], "--limit must be 1 or more", "log"),
      (["log", "STORE", "--limit", "0"], "--limit must be 1 or more, not 0", "log"),
      (["stress", "STORE", "--batches=-1"], "cannot be negative", "stress"),
      (["read-check", "STORE", "--reads=-1"], "--reads cannot be negative", "read-check"),
    ])
  func aRefusedArgumentIsShownWithItsCommandsUsage(arguments: [String], message: String, command: String) throws {
    let directory = try TemporaryDirectory()
    let token = try directory.write("token", "short")
    let replaced = arguments.map {
      switch $0 {
      case "STORE": directory.storePath
      case "TOKEN": token
      case "MISSING": directory.path + "/missing"
      default: $0
      }
    }
    let result = try CommandRunner.run(replaced)
    #expect(result.status == 64, "\(result.error)")
    #expect(result.error.contains(message), "\(result.error)")
    #expect(result.error.contains("Usage: jsonledger \(command) "), "\(result.error)")
    #expect(!FileManager.default.fileExists(atPath: directory.storePath))
  }

  @Test func exportTakesSeveralWhereByJSONKeyAndByAToOnesKey() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    _ = try CommandRunner.run(["stress", store, "--batches", "2", "--objects", "3"])
    let both = try CommandRunner.run([
      "export", store, "--entity", "Album", "--where", "label=round 2", "--where", "band=band 1",
    ])
    #expect(both.status == 0, "\(both.error)")
    #expect(both.output.contains("album 1") && !both.output.contains("album 0"), "\(both.output)")
    // `band_id` is the JSON key an import reads the band's key from.
    let byKey = try CommandRunner.run(["export", store, "--entity", "Album", "--where", "band_id=band 2"])
    #expect(byKey.status == 0, "\(byKey.error)")
    #expect(byKey.output.contains("album 2") && !byKey.output.contains("album 1"), "\(byKey.output)")
    let unknown = try CommandRunner.run(["export", store, "--entity", "Album", "--where", "colour=red"])
    // A query that does not read is a usage error.
    #expect(unknown.status == 64)
    #expect(unknown.error.contains("Album has no attribute or relationship \"colour\""), "\(unknown.error)")
  }

  /// A streamed import (a top-level array, read 1,000 objects at a time) names the problems of
  /// every part and the missing attributes of the whole in one run.
  @Test func importNamesEveryProblemOfAStreamedFileInOneRun() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let model = try directory.write(
      "model.json",
      #"{"entities": {"Issue": {"identity": "id", "attributes": {"id": "int64", "title": {"type": "string", "optional": false}, "votes": "int32"}}}}"#
    )
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    var issues = (0..<2_500).map { #"{"id": \#($0), "title": "t\#($0)"}"# }
    issues[10] = #"{"id": 10, "title": "t", "votes": "many"}"#
    issues[1_500] = #"{"title": "no id"}"#
    issues[2_400] = #"{"id": 2400}"#
    let file = try directory.write("issues.json", "[" + issues.joined(separator: ",\n") + "]")
    let result = try CommandRunner.run(["import", store, file, "--entity", "Issue"])
    #expect(result.status == 1)
    #expect(result.error.contains("3 problems in the batch"), "\(result.error)")
    for words in ["[10].votes", "[1500]: the identity", "[2400]: a new Issue needs title"] {
      #expect(result.error.contains(words), "\(result.error)")
    }
    #expect(try CommandRunner.run(["log", store]).output.contains("no batches") || true)
    let exported = try CommandRunner.run(["export", store, "--entity", "Issue"])
    #expect(exported.output.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(exported.output)")
  }

  /// It was `cannot read x` on one path and `Error Domain=NSCocoaErrorDomain Code=256` on another.
  @Test func anUnreadablePayloadIsNamedWithTheSystemsReasonOnEveryPath() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    _ = try CommandRunner.run(["stress", store, "--batches", "1", "--objects", "1"])
    let missing = directory.path + "/nofile.json"
    let folder = directory.path
    let good = try directory.write("good.json", "[]")
    for (arguments, reason) in [
      ([missing, "--entity", "Album"], "No such file or directory"),
      ([folder, "--entity", "Album"], "Is a directory"),
      ([folder], "Is a directory"),
      ([folder, "--entity", "Album", "--prune"], "Is a directory"),
      ([good, missing, "--entity", "Album"], "No such file or directory"),
      ([folder, "--entity", "Album", "--chunk-size", "10"], "Is a directory"),
    ] {
      let result = try CommandRunner.run(["import", store] + arguments)
      #expect(result.status == 1)
      let file = arguments[0] == good ? missing : arguments[0]
      #expect(result.error.contains("cannot read \(file): \(reason)"), "\(arguments): \(result.error)")
      #expect(!result.error.contains("Domain="), "\(result.error)")
    }
  }
}
