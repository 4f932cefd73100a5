import Foundation
import JSONLedgerTestSupport
import Testing

/// A small bands model and payloads, written for these tests.
enum CLIFixtures {
  static let model = """
    {"keyCase": "snake_case", "entities": {
      "Band": {"identity": "name", "collectionKey": "bands",
        "attributes": {"name": "string", "formed": "int32", "bandDescription": "string"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
      "Album": {"identity": "name",
        "attributes": {"name": "string", "label": "string", "released": "date"},
        "relationships": {"band": {"to": "Band", "inverse": "albums"}}}
    }}
    """
  static let first = """
    {"bands": [{"name": "Japan", "formed": 1974, "description": "new wave"}],
     "albums": [{"name": "Tin Drum", "band": "Japan", "label": "Virgin", "released": "1981-11-13"},
                {"name": "Quiet Life", "band": "Japan", "label": "Hansa"}]}
    """
  static let second = """
    {"albums": [{"name": "Tin Drum", "label": "Virgin Records"}, {"name": "Assemblage", "band": "Japan"}]}
    """
  static let third = """
    [{"name": "Tin Drum", "label": "Another Label"}]
    """

  /// Makes the store `directory/store` with `model` and imports `first`: where most suites
  /// start. Returns the store's path.
  static func storeWithFirstImport(in directory: TemporaryDirectory) throws -> String {
    let store = directory.path + "/store"
    let model = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    let payload = try directory.write("first.json", CLIFixtures.first)
    #expect(try CommandRunner.run(["import", store, payload]).status == 0)
    return store
  }

  /// Whether the tests can run the tool as another user: they run as root, with `setpriv`.
  static let canRunAsAnotherUser = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

  /// Runs the tool with `arguments` as user and group 65534 (nobody), from a copy in
  /// `directory` (made reachable to that user); its exit status and standard error.
  static func runAsAnotherUser(_ arguments: [String], in directory: TemporaryDirectory) throws
    -> (status: Int32, error: String)
  {
    let executable = directory.path + "/jsonledger"
    if !FileManager.default.fileExists(atPath: executable) {
      try FileManager.default.copyItem(atPath: CommandRunner.executable.path, toPath: executable)
    }
    chmod(directory.path, 0o755)
    chmod(executable, 0o755)
    defer { chmod(directory.path, 0o700) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", executable] + arguments
    let error = Pipe()
    process.standardError = error
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, message)
  }
}

@Suite("jsonledger command line")
struct CLITests {
  let directory: TemporaryDirectory
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path + "/store"
    let model = try directory.write("model.json", CLIFixtures.model)
    let result = try CommandRunner.run(["init", store, "--model", model])
    #expect(result.status == 0, "\(result.error)")
  }

  func importing(_ text: String, _ extra: [String] = []) throws -> CommandRunner.Result {
    let file = try directory.write("payload-\(UUID().uuidString).json", text)
    return try CommandRunner.run(["import", store, file] + extra)
  }

  @Test func importJSONReportsTheBatchAndCounts() throws {
    let result = try importing(CLIFixtures.first, ["--json"])
    #expect(result.status == 0)
    #expect(result.output.contains("\"batch\": 1"))
    #expect(result.output.contains("\"created\": 3"))
  }

  @Test func aPipedImportShowsNoProgress() throws {
    let result = try importing(CLIFixtures.first)
    #expect(result.status == 0)
    #expect(result.error.isEmpty, "\(result.error)")
  }

  @Test func importFromStandardInputWithAnEntity() throws {
    let result = try CommandRunner.run(
      ["import", store, "-", "--entity", "Band"], input: #"[{"name": "Roxy Music", "formed": "1971"}]"#)
    #expect(result.status == 0, "\(result.error)")
    let get = try CommandRunner.run(["get", store, "Band", "Roxy Music", "--json"])
    #expect(get.output.contains("\"formed\": 1971"))
  }

  /// Standard input is staged as text, as a file is: the same document again changes
  /// nothing, and a syntax error names the input with its line and column.
  @Test func standardInputIsStagedAsAFileIs() throws {
    _ = try importing(CLIFixtures.first)
    let again = try CommandRunner.run(["import", store, "-", "--json"], input: CLIFixtures.first)
    #expect(again.status == 0, "\(again.error)")
    #expect(again.output.contains("\"created\": 0"))
    #expect(again.output.contains("\"updated\": 0"))
    let broken = try CommandRunner.run(["import", store, "-"], input: #"{"bands": [{"name": "X",}"#)
    #expect(broken.status != 0)
    #expect(broken.error.hasPrefix("error: stdin: malformed JSON at line 1, column 26"), "\(broken.error)")
  }

  @Test func exportWritesSnakeCaseAndReservedWordsBack() throws {
    _ = try importing(CLIFixtures.first)
    let result = try CommandRunner.run(["export", store, "--entity", "Band"])
    #expect(result.status == 0)
    #expect(result.output.contains("\"description\": \"new wave\""))
    #expect(result.output.contains("\"albums\": ["))
  }

  @Test func exportIsDeterministic() throws {
    _ = try importing(CLIFixtures.first)
    let one = try CommandRunner.run(["export", store])
    let two = try CommandRunner.run(["export", store])
    #expect(one.output == two.output)
    #expect(one.output.contains("\"bands\""))
  }

  @Test func unknownCollectionIsAnErrorListingTheKnownOnes() throws {
    let result = try importing(#"{"bandz": []}"#)
    #expect(result.status != 0)
    #expect(result.error.hasPrefix("error: unknown collection \"bandz\""))
    #expect(result.error.contains("bands"))
  }

  @Test func malformedJSONNamesLineAndColumnAndWritesNothing() throws {
    let result = try importing("{\n  \"bands\": [\n    {\"name\": }\n  ]\n}")
    #expect(result.status != 0)
    #expect(result.error.contains("line 3, column 14"))
    let log = try CommandRunner.run(["log", store])
    #expect(log.output.contains("(no batches)"))
  }

  @Test func badValueIsAnErrorWithEntityPathAndValue() throws {
    let result = try importing(#"{"bands": [{"name": "A", "formed": 1}, {"name": "B", "formed": "20x"}]}"#)
    #expect(result.status != 0)
    #expect(result.error.contains("Band at bands[1].formed"))
    #expect(result.error.contains("20x"))
  }

  @Test func asOfReadsShowTheEarlierState() throws {
    _ = try importing(CLIFixtures.first)
    _ = try importing(CLIFixtures.second)
    let then = try CommandRunner.run(["get", store, "Album", "Tin Drum", "--as-of", "1", "--json"])
    let now = try CommandRunner.run(["get", store, "Album", "Tin Drum", "--json"])
    #expect(then.output.contains("\"label\": \"Virgin\""))
    #expect(now.output.contains("\"label\": \"Virgin Records\""))
  }

  /// The library's message, with the key written as JSON: an empty key shows as `""`.
  @Test func anObjectNotFoundIsNamedByItsQuotedKeyAndTheBatchItWasReadAsOf() throws {
    _ = try importing(CLIFixtures.first)
    let missing = try CommandRunner.run(["get", store, "Album", ""])
    #expect(missing.status == 1)
    #expect(missing.error.contains(#"no Album with key """#), "\(missing.error)")
    let then = try CommandRunner.run(["get", store, "Album", "Nope", "--as-of", "1"])
    #expect(then.status == 1)
    #expect(then.error.contains(#"no Album with key "Nope" as of batch 1"#), "\(then.error)")
  }

  @Test func revertRefusedWithExitThreeThenForced() throws {
    _ = try importing(CLIFixtures.first)
    _ = try importing(CLIFixtures.second)
    _ = try importing(CLIFixtures.third, ["--entity", "Album"])
    let refused = try CommandRunner.run(["revert", store, "2"])
    #expect(refused.status == 3)
    #expect(refused.error.contains("Tin Drum"))
    #expect(refused.error.contains("changed by batch 3"))
    let forced = try CommandRunner.run(["revert", store, "2", "--force"])
    #expect(forced.status == 0, "\(forced.error)")
    #expect(forced.output.contains("overrode 1 later change"))
    let get = try CommandRunner.run(["get", store, "Album", "Tin Drum", "--json"])
    #expect(get.output.contains("\"label\": \"Virgin\""))
    #expect(try CommandRunner.run(["get", store, "Album", "Assemblage"]).status != 0)
    let again = try CommandRunner.run(["revert", store, "2"])
    #expect(again.error.contains("already reverted by batch 4"))
    #expect(try CommandRunner.run(["verify", store]).status == 0)
  }

  @Test func rewindMakesExportEqualToExportAsOf() throws {
    _ = try importing(CLIFixtures.first)
    _ = try importing(CLIFixtures.second)
    _ = try importing(CLIFixtures.third, ["--entity", "Album"])
    let asOf = try CommandRunner.run(["export", store, "--as-of", "1"])
    #expect(try CommandRunner.run(["rewind", store, "1"]).status == 0)
    let now = try CommandRunner.run(["export", store])
    #expect(now.output == asOf.output)
    #expect(try CommandRunner.run(["verify", store]).status == 0)
  }

  @Test func idempotencyKeyMakesTheSecondImportANoOp() throws {
    let first = try importing(CLIFixtures.first, ["--idempotency-key", "nightly-1", "--json"])
    let second = try importing(CLIFixtures.first, ["--idempotency-key", "nightly-1", "--json"])
    #expect(first.output.contains("\"batch\": 1"))
    #expect(second.output.contains("\"batch\": 1"))
    #expect(second.output.contains("\"alreadyApplied\": true"))
    #expect(try CommandRunner.run(["log", store, "--json"]).output.components(separatedBy: "\"batch\"").count == 2)
  }

  @Test func logAndShowAndDiffDescribeChanges() throws {
    _ = try importing(CLIFixtures.first, ["--message", "first import", "--author", "ci"])
    _ = try importing(CLIFixtures.second)
    let log = try CommandRunner.run(["log", store])
    #expect(log.output.hasPrefix("batch 2"))
    #expect(log.output.contains("\"first import\"  by ci"))
    let show = try CommandRunner.run(["show", store, "2"])
    #expect(show.output.contains("label: \"Virgin\" → \"Virgin Records\""))
    let diff = try CommandRunner.run(["diff", store, "2", "1", "--json"])
    #expect(diff.status == 0)
    #expect(diff.output.contains("\"deleted\""))
    let objectLog = try CommandRunner.run(["log", store, "--entity", "Album", "--key", "Tin Drum"])
    #expect(objectLog.output.contains("batch 2"))
    #expect(objectLog.output.contains("batch 1"))
  }

  @Test func aDirectoryThatIsNotAStoreIsRefusedWithoutWritingIntoIt() throws {
    let other = directory.path + "/not-a-store"
    try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
    _ = try directory.write("not-a-store/notes.txt", "hello")
    let result = try CommandRunner.run(["log", other])
    #expect(result.status != 0)
    #expect(result.error.contains("is not a JSONLedger store"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: other) == ["notes.txt"])
  }

  @Test func missingStoreSaysHowToCreateOne() throws {
    let result = try CommandRunner.run(["log", directory.path + "/nothing-here"])
    #expect(result.status == 1)
    #expect(result.error.contains("jsonledger init"))
  }

  @Test func demoRunsEndToEnd() throws {
    let result = try CommandRunner.run(["demo", directory.path + "/demo"])
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output.contains("10. Verify"), "\(result.output)")
    // A live API of the demo's own, pulled twice: nothing, then only the one real change.
    #expect(result.output.contains("read 4 pages: nothing changed, no batch written"), "\(result.output)")
    #expect(result.output.contains("4 of 4 pages not modified (304): no batch written"), "\(result.output)")
    #expect(result.output.contains("read 4 pages: batch 3: 0 created, 1 updated, 0 deleted"), "\(result.output)")
    #expect(result.output.contains("Virgin Records Ltd"), "\(result.output)")
    #expect(result.output.contains("as of batch 1: \"Virgin\"; now: \"Virgin Records\""))
  }

  @Test func statsAndVerifyReport() throws {
    _ = try importing(CLIFixtures.first)
    let stats = try CommandRunner.run(["stats", store, "--json"])
    #expect(stats.output.contains("\"Album\": 2"))
    let verify = try CommandRunner.run(["verify", store])
    #expect(verify.output.hasPrefix("ok: 1 batches checked"), "\(verify.output)")
    #expect(verify.output.contains("match their kept digest"))
    let full = try CommandRunner.run(["verify", store, "--full", "--json"])
    #expect(full.output.contains("\"mode\": \"fullReplay\""), "\(full.output)")
  }

  @Test func badArgumentsGoToStandardErrorAsErrors() throws {
    let result = try CommandRunner.run(["export", store, "--relationships", "sideways"])
    #expect(result.status != 0)
    #expect(result.error.hasPrefix("error: "))
  }
}

@Suite("jsonledger import --chunk-size")
struct ChunkedImportTests {
  @Test func chunkedImportGivesTheSameStateAsOneBatchAndResumes() throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    var albums: [String] = []
    for index in 0..<25 { albums.append(#"{"name": "album \#(index)", "band": "band \#(index % 3)", "label": "L"}"#) }
    let file = try directory.write("albums.json", "[\n" + albums.joined(separator: ",\n") + ",\n]")
    for store in ["one", "chunks"] {
      #expect(try CommandRunner.run(["init", directory.path + "/" + store, "--model", model]).status == 0)
    }
    #expect(try CommandRunner.run(["import", directory.path + "/one", file, "--entity", "Album"]).status == 0)
    let chunked = try CommandRunner.run([
      "import", directory.path + "/chunks", file, "--entity", "Album", "--chunk-size", "10", "--idempotency-key", "k",
    ])
    #expect(chunked.status == 0, "\(chunked.error)")
    #expect(chunked.output.contains("batches 1–3: 28 created"))
    let one = try CommandRunner.run(["export", directory.path + "/one"])
    let chunks = try CommandRunner.run(["export", directory.path + "/chunks"])
    #expect(one.output == chunks.output)
    let again = try CommandRunner.run([
      "import", directory.path + "/chunks", file, "--entity", "Album", "--chunk-size", "10", "--idempotency-key", "k",
      "--json",
    ])
    #expect(again.output.contains("\"created\": 0"))
    #expect(again.output.contains("\"batchesAlreadyApplied\": 3"))
    #expect(try CommandRunner.run(["verify", directory.path + "/chunks"]).status == 0)
  }

  @Test func chunkedImportReportsErrorsAtTheirPlaceInTheFile() throws {
    let directory = try TemporaryDirectory()
    let model = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", directory.path + "/s", "--model", model]).status == 0)
    let file = try directory.write(
      "bad.json", #"{"albums": [{"name": "a"}, {"name": "b"}, {"name": "c", "released": "never"}]}"#)
    let result = try CommandRunner.run(["import", directory.path + "/s", file, "--chunk-size", "2"])
    #expect(result.status != 0)
    #expect(result.error.contains("Album at albums[2].released"))
  }
}
