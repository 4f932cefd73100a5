import Foundation
import JSONLedgerTestSupport
import Testing

/// Random and mutated payloads imported through the real `jsonledger` process, against a model
/// with every attribute type: each import succeeds or fails with `error:` and exit 1, never a
/// signal, and the store verifies afterwards.
@Suite("Fuzzing whole imports through the command line")
struct ImportFuzzTests {
  static let model = #"""
    {"keyCase": "snake_case", "entities": {
      "Thing": {"identity": "id", "attributes": {
        "id": "int64", "small": "int16", "medium": "int32", "ratio": "double", "weight": "float",
        "price": "decimal", "flag": "bool", "at": "date", "uid": "uuid", "link": "url", "blob": "binary",
        "extra": "json", "title": {"type": "string", "optional": false}, "nested": {"type": "string", "jsonKey": "a.b"}},
        "relationships": {"parent": {"to": "Thing", "inverse": "children"},
                          "children": {"to": "Thing", "many": true, "inverse": "parent", "ordered": true}}}
    }}
    """#

  static let seeds = [
    #"{"id": 1, "title": "one", "small": 7, "medium": 70000, "ratio": 0.5, "weight": 1.5, "price": "12.20", "flag": "yes", "at": "2024-01-02T03:04:05Z", "uid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "link": "https://example.org", "blob": "aGVsbG8=", "extra": [1, {"x": null}], "a": {"b": "deep"}, "children": [{"id": 2, "title": "two"}, 3]}"#,
    #"{"id": "4", "title": "four", "parent": 1, "at": 1441888808000, "children_ids": [5, 6]}"#,
    #"{"id": 7, "title": "seven", "parent": {"id": 8, "title": "eight", "parent": null}, "children": null}"#,
  ]

  /// Bytes to splice into a payload: values of the wrong type and shape, edges of ranges.
  static let splices = [
    "null", "true", "-0.0", "1e400", "-1e400", "99999999999999999999", "\"\"", "\"\\u0000\"", "[]", "{}",
    "[[[[[[]]]]]]", "\"2024-13-45\"", "\"0000-01-01\"", "1e16", "32768", "\"20x\"", "\"\\ud800\"", "{\"id\": {}}",
    ",", "]", "}", "\"", ":", "\u{1B}", "0x10", "NaN", "\"12345678901234567890123456789012345678901\"",
  ]

  /// - Reliability: Random and mutated payloads imported through the `jsonledger` process against a model with
  ///   every attribute type: exit 0 or 1, never a signal; the store verifies
  /// - Size: 60 in CI, 400 by hand (`JSONLEDGER_FUZZ_TRIALS=400`); last by hand: 400: 2026-12-05
  @Test(.tags(.reliability)) func randomAndMutatedPayloadsNeverCrashTheProcess() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let model = try directory.write("model.json", Self.model)
    #expect(try CommandRunner.run(["init", store, "--model", model]).status == 0)
    var generator = SeededGenerator(seed: 24)
    let trials = Int(ProcessInfo.processInfo.environment["JSONLEDGER_FUZZ_TRIALS"] ?? "") ?? 60
    var outcomes: [Int32: Int] = [:]
    for trial in 0..<trials {
      var text = Array(Self.seeds[trial % Self.seeds.count].utf8)
      for _ in 0..<Int.random(in: 1...3, using: &generator) {
        let position = Int.random(in: 0...text.count, using: &generator)
        let length = Int.random(in: 0...min(6, text.count - position), using: &generator)
        let splice = Array(Self.splices.randomElement(using: &generator)!.utf8)
        text.replaceSubrange(position..<position + length, with: splice)
      }
      let file = directory.path + "/payload-\(trial).json"
      try Data(("[" + String(decoding: text, as: UTF8.self) + "]").utf8).write(to: URL(fileURLWithPath: file))
      let result = try CommandRunner.run(["import", store, file, "--entity", "Thing"])
      outcomes[result.status, default: 0] += 1
      #expect(result.status == 0 || result.status == 1, "payload \(trial) ended with status \(result.status)")
      if result.status == 1 { #expect(result.error.hasPrefix("error: "), "payload \(trial): \(result.error)") }
    }
    #expect(try CommandRunner.run(["verify", store]).status == 0)
    #expect(try CommandRunner.run(["export", store, "--relationships", "nested"]).status == 0)
    #expect(outcomes.keys.allSatisfy { $0 == 0 || $0 == 1 })
  }
}
