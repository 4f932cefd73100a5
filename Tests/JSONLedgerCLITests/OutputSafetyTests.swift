import Foundation
import JSONLedgerTestSupport
import Testing

@Suite("CLI output: never a failure that looks like success, never raw control characters")
struct OutputSafetyTests {
  let directory: TemporaryDirectory
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    store = try CLIFixtures.storeWithFirstImport(in: directory)
    let second = try directory.write("second.json", CLIFixtures.second)
    #expect(try CommandRunner.run(["import", store, second]).status == 0)
  }

  /// Runs the command with stdout on /dev/full (every write fails: no space left).
  func runIntoAFullDevice(_ arguments: [String]) throws -> (status: Int32, error: String) {
    let process = Process()
    process.executableURL = CommandRunner.executable
    process.arguments = arguments
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
    let error = Pipe()
    process.standardError = error
    try process.run()
    let errData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: errData, as: UTF8.self))
  }

  /// - Reliability: Commands whose stdout cannot be written (`/dev/full`): `export`, `log`, `show`, `diff`,
  ///   `get`, `verify`, `stats` exit 1 with `error: cannot write the output`
  /// - Size: 9 command forms
  @Test(
    .tags(.reliability),
    arguments: [
      ["export"], ["export", "--entity", "Album"], ["log"], ["show", "2"], ["diff", "1", "2"],
      ["get", "Album", "Tin Drum"], ["verify"], ["stats"], ["log", "--json"],
    ])
  func aCommandWhoseOutputCannotBeWrittenFails(arguments: [String]) throws {
    guard FileManager.default.fileExists(atPath: "/dev/full") else { return }
    let result = try runIntoAFullDevice([arguments[0], store] + arguments.dropFirst())
    #expect(result.status != 0)
    #expect(result.error.contains("cannot write the output"))
  }

  /// - Reliability: Control characters from payloads, `--message`, `--author` and keys are escaped (`\u{1B}`)
  ///   in text output and errors
  /// - Size: ESC, BEL, C1
  @Test(.tags(.reliability)) func controlCharactersFromPayloadsAndMessagesAreEscaped() throws {
    let escape = "\u{1B}[2J\u{7}"
    let payload = try directory.write(
      "evil.json", #"[{"name": "Tin Drum", "label": "\u001b[2J\u0007red"}]"#)
    let imported = try CommandRunner.run([
      "import", store, payload, "--entity", "Album", "--message", "msg\(escape)", "--author", "\u{9B}31m",
    ])
    #expect(imported.status == 0, "\(imported.error)")
    for arguments in [
      ["log", store], ["show", store, "3"], ["diff", store, "2", "3"], ["get", store, "Album", "Tin Drum"],
    ] {
      let result = try CommandRunner.run(arguments)
      #expect(result.status == 0)
      #expect(!result.output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{7}" || $0 == "\u{9B}" })
      #expect(result.output.contains("\\u{1B}"), "\(arguments[0]) shows the escape")
    }
    // JSON output stays valid JSON: C0 escaped by the writer, DEL and C1 as \u00XX.
    let c1 = try directory.write("c1.json", "[{\"name\": \"Quiet Life\", \"label\": \"a\u{9B}b\u{7F}c\"}]")
    #expect(try CommandRunner.run(["import", store, c1, "--entity", "Album"]).status == 0)
    for name in ["Tin Drum", "Quiet Life"] {
      let json = try CommandRunner.run(["get", store, "Album", name, "--json"])
      #expect(!json.output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" || $0 == "\u{7F}" })
      let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
      #expect((object?["label"] as? String)?.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x1B } == true)
    }
    let missing = try CommandRunner.run(["get", store, "Album", "no\u{1B}such"])
    #expect(missing.status != 0)
    #expect(!missing.error.unicodeScalars.contains("\u{1B}"))
  }
}

@Suite("CLI conventions: --version, --json everywhere, options only where they mean something")
struct CLIConventionTests {
  @Test func versionNamesTheToolAndItsStoreFormat() throws {
    let result = try CommandRunner.run(["--version"])
    #expect(result.status == 0)
    #expect(result.output.hasPrefix("jsonledger "))
    #expect(result.output.contains("store format"))
  }

  @Test(arguments: ["export", "log", "get", "show", "diff", "verify", "stats"])
  func readOnlyCommandsDoNotOfferDurability(command: String) throws {
    let help = try CommandRunner.run([command, "--help"])
    #expect(!help.output.contains("--durability"))
  }

  @Test(arguments: ["import", "revert", "rewind"])
  func writingCommandsOfferDurability(command: String) throws {
    let help = try CommandRunner.run([command, "--help"])
    #expect(help.output.contains("--durability"))
  }

  @Test func aRefusedRevertAnswersInJSONAndExitsThree() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let model = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    for (index, text) in [CLIFixtures.first, CLIFixtures.second].enumerated() {
      let file = try directory.write("batch-\(index).json", text)
      #expect(try CommandRunner.run(["import", store, file]).status == 0)
    }
    let result = try CommandRunner.run(["revert", store, "1", "--json"])
    #expect(result.status == 3)
    let document = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
    #expect(document?["refused"] as? Bool == true)
    #expect((document?["conflicts"] as? [[String: Any]])?.isEmpty == false)
    #expect(try CommandRunner.run(["export", store, "--json"]).status == 0)
  }

  /// A conflict has the shape of a diff's change: the key as its values, values typed (it was
  /// `"key": "Album Tin Drum"`, `"valueNow": "\"Virgin Records\""`).
  @Test func revertConflictsInJSONAreTypedAsADiffIs() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let model = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let third = #"{"albums": [{"name": "Tin Drum", "label": "Another Label"}, {"name": "Assemblage", "band": null}]}"#
    for (index, text) in [CLIFixtures.first, CLIFixtures.second, third].enumerated() {
      let file = try directory.write("batch-\(index).json", text)
      #expect(try CommandRunner.run(["import", store, file]).status == 0)
    }
    func label(in list: Any?) -> [String: Any]? {
      (list as? [[String: Any]])?.first { $0["field"] as? String == "label" }
    }
    let refused = try CommandRunner.run(["revert", store, "2", "--json"])
    let document = try JSONSerialization.jsonObject(with: Data(refused.output.utf8)) as? [String: Any]
    let conflict = label(in: document?["conflicts"])
    #expect(conflict?["entity"] as? String == "Album")
    #expect(conflict?["key"] as? [String] == ["Tin Drum"])
    #expect(conflict?["setByBatch"] as? String == "Virgin Records")
    #expect(conflict?["now"] as? String == "Another Label")
    #expect(conflict?["changedBy"] as? Int == 3)
    #expect(
      conflict?["description"] as? String
        == #"Album "Tin Drum" label: batch set "Virgin Records", now "Another Label" (changed by batch 3)"#)
    let links = (document?["conflicts"] as? [[String: Any]])?.first { $0["field"] as? String == "albums" }
    #expect((links?["key"] as? [String]) == ["Japan"], "\(refused.output)")
    let assemblage = ["Album \"Assemblage\""]
    #expect((links?["setByBatch"] as? [String: Any])?["linked"] as? [String] == assemblage, "\(refused.output)")
    #expect((links?["now"] as? [String: Any])?["unlinked"] as? [String] == assemblage, "\(refused.output)")
    let kept = try CommandRunner.run(["revert", store, "2", "--keep-later", "--json"])
    #expect(kept.status == 0, "\(kept.error)")
    let keptDocument = try JSONSerialization.jsonObject(with: Data(kept.output.utf8)) as? [String: Any]
    #expect(label(in: keptDocument?["kept"])?["now"] as? String == "Another Label", "\(kept.output)")
  }
}

@Suite("CLI --json output is typed and one shape")
struct TypedJSONOutputTests {
  @Test func showAndDiffGiveTypedValuesAndImportsOneSummaryShape() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let model = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let first = try directory.write("first.json", CLIFixtures.first)
    let single = try CommandRunner.run(["import", store, first, "--json"])
    let update = try directory.write("update.json", #"{"bands": [{"name": "Japan", "formed": 1975, "shoe_size": 9}]}"#)
    let chunked = try CommandRunner.run(["import", store, update, "--chunk-size", "1", "--json"])
    for output in [single.output, chunked.output] {
      let summary = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
      #expect(
        Set(summary.keys) == [
          "batch", "batches", "created", "updated", "deleted", "unchanged", "alreadyApplied", "batchesAlreadyApplied",
          "ignoredKeys", "deletedAll", "changedNothing", "placeholdersKept",
        ])
    }
    #expect(chunked.output.contains("Band.shoe_size"))
    for arguments in [["show", store, "2", "--json"], ["diff", store, "1", "2", "--json"]] {
      let result = try CommandRunner.run(arguments)
      #expect(result.status == 0)
      let document = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
      let changes = try #require(document["changes"] as? [[String: Any]])
      let fields = try #require(changes.first?["fields"] as? [String: [String: Any]])
      #expect(fields["formed"]?["old"] as? Int == 1974)
      #expect(fields["formed"]?["new"] as? Int == 1975)
      #expect(changes.first?["key"] as? [String] == ["Japan"])
    }
  }
}
