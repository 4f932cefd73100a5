import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Mutated JSON text staged as text and, where it parses, as the parsed value, into two stores
/// that hold the same history: the text's skimming fast path must leave what the parsed value
/// leaves, and text that does not parse must be refused with nothing written.
@Suite("Fuzzing text staging against the parsed value")
struct TextFuzzTests {
  /// Bytes spliced into a document: tokens its keys and values are made of, and breakage.
  static let splices = [
    "\"name\"", "\"band\"", "\"producer\"", "\"label\"", "\"country\"", "\"formed\"", "\"bands\"", "\"albums\"",
    "\"a1\"", "\"b2\"", "\"p0\"", "\"\\u0061\"", "\"n\\u0061me\"", "\"\\\"\"", ":", ",", "{", "}", "[", "]", "null",
    "true", "1", "-0", "1e400", "1.5", "\"\"", " ", "\n", "{\"name\":\"p1\"}", "[\"b0\"]", "\"name\":\"a2\",",
    "\"producer\":{\"name\":\"p2\",\"country\":\"c9\"},", "\u{FEFF}", "\"\u{E9}\"", "/", "\\",
  ]

  static func mutated(_ text: [UInt8], _ generator: inout SeededGenerator) -> [UInt8] {
    var bytes = text
    for _ in 0..<Int.random(in: 1...3, using: &generator) {
      let position = Int.random(in: 0...bytes.count, using: &generator)
      let length = Int.random(in: 0...min(4, bytes.count - position), using: &generator)
      switch Int.random(in: 0..<5, using: &generator) {
      case 0 where length > 0:
        bytes.removeSubrange(position..<position + length)
      case 1 where position < bytes.count:
        bytes[position] = UInt8.random(in: 0...255, using: &generator)
      default:
        bytes.replaceSubrange(
          position..<position + length, with: Array(splices.randomElement(using: &generator)!.utf8))
      }
    }
    return bytes
  }

  /// What applying did, in words both stores can be compared by.
  static func outcome(_ body: () throws -> BatchSummary) -> String {
    do {
      let summary = try body()
      return "applied \(summary.created) \(summary.updated) \(summary.deleted) \(summary.unchanged)"
    } catch {
      return "refused \(error)"
    }
  }

  @Test func mutatedTextLeavesWhatItsParsedValueLeaves() throws {
    // More rounds, or another seed, from the environment for a longer search.
    let environment = ProcessInfo.processInfo.environment
    var generator = SeededGenerator(seed: UInt64(environment["JSONLEDGER_TEXT_FUZZ_SEED"] ?? "") ?? 1129)
    let rounds = Int(environment["JSONLEDGER_TEXT_FUZZ_ROUNDS"] ?? "") ?? 150
    let directory = try TemporaryDirectory()
    let model = try Model(json: JSONParser.parse(TextStagingTests.model))
    let text = try Ledger.open(at: directory.path + "/text", model: model)
    let parsed = try Ledger.open(at: directory.path + "/parsed", model: model)
    var agreed = 0
    for round in 0..<rounds {
      let base = TextStagingTests.document(Int.random(in: 0..<4_096, using: &generator))
      let bytes = round % 5 == 0 ? base : Self.mutated(base, &generator)
      let value = try? JSONParser.parse(bytes)
      let head = try text.head
      // Every third round through a file, read in chunks (`JSONFileChunks`).
      let file = directory.path + "/round.json"
      if round % 3 == 0 { try Data(bytes).write(to: URL(fileURLWithPath: file)) }
      let byText = Self.outcome {
        if round % 3 == 0 { return try text.importFile(at: file) }
        var batch = text.makeBatch()
        try batch.stageDocument(json: bytes)
        return try text.applySynchronously(batch)
      }
      guard let value else {
        #expect(byText.hasPrefix("refused"), "round \(round): text that does not parse was applied")
        #expect(try text.head == head, "round \(round)")
        continue
      }
      let byValue = Self.outcome {
        var batch = parsed.makeBatch()
        try batch.stageDocument(value)
        return try parsed.applySynchronously(batch)
      }
      #expect(byText == byValue, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
      let expected = try parsed.read { view in try view.exportDocument() }
      let found = try text.read { view in try view.exportDocument() }
      #expect(found == expected, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
      if byText == byValue, found == expected { agreed += 1 } else { break }
    }
    #expect(agreed > 0)
    _ = try text.verify()
  }
}
