import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Deterministic random-input tests: no crash, no hang, every rejection a typed error.
@Suite("Fuzzing the model loader and the mapper")
struct FuzzTests {
  /// A random JSON value built from pieces that matter to the code under test.
  static func randomValue(_ generator: inout SeededGenerator, depth: Int = 0, words: [String]) -> JSONValue {
    switch Int.random(in: 0..<(depth > 3 ? 6 : 9), using: &generator) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &generator))
    case 2: return .number(JSONNumber(Int.random(in: -100_000...100_000, using: &generator)))
    case 3: return .number(JSONNumber(Double.random(in: -1e6...1e6, using: &generator)))
    case 4, 5: return .string(words.randomElement(using: &generator)!)
    case 6:
      return .array(
        (0..<Int.random(in: 0..<4, using: &generator)).map { _ in
          randomValue(&generator, depth: depth + 1, words: words)
        })
    default:
      var object = JSONObject()
      for _ in 0..<Int.random(in: 0..<5, using: &generator) {
        object[words.randomElement(using: &generator)!] = randomValue(&generator, depth: depth + 1, words: words)
      }
      return .object(object)
    }
  }

  static let modelWords = [
    "keyCase", "dateFormat", "entities", "Band", "Album", "identity", "attributes", "relationships", "name",
    "string", "int64", "date", "json", "binary", "to", "many", "inverse", "ordered", "jsonKey", "parent", "band",
    "albums", "a.b", "", "snake_case", "iso8601", "export", "type", "collectionKey", "subentityKey", "deleteOrphans",
  ]

  /// - Reliability: Random and mutated model files: loaded or a `ModelError`, never a crash
  /// - Size: 3,000 models
  @Test(.tags(.reliability)) func randomModelsAreAcceptedOrRejectedWithAModelError() throws {
    var generator = SeededGenerator(seed: 2026)
    let valid = try Fixtures.bandsModel().jsonValue
    var accepted = 0
    for round in 0..<3_000 {
      var candidate = round % 2 == 0 ? Self.randomValue(&generator, words: Self.modelWords) : valid
      if round % 2 == 1 { candidate = Self.mutate(candidate, &generator, words: Self.modelWords) }
      do {
        _ = try Model(json: candidate)
        accepted += 1
      } catch {
        #expect(!error.problems.isEmpty)
      }
    }
    #expect(accepted > 0)
  }

  /// Replaces one random node of `value` with a random value.
  static func mutate(_ value: JSONValue, _ generator: inout SeededGenerator, words: [String]) -> JSONValue {
    switch value {
    case .object(var object) where !object.isEmpty && Int.random(in: 0..<4, using: &generator) > 0:
      let key = object.keys.randomElement(using: &generator)!
      if Int.random(in: 0..<5, using: &generator) == 0 {
        object[key] = nil
      } else {
        object[key] = mutate(object[key]!, &generator, words: words)
      }
      return .object(object)
    case .array(var elements) where !elements.isEmpty && Int.random(in: 0..<4, using: &generator) > 0:
      let index = Int.random(in: 0..<elements.count, using: &generator)
      elements[index] = mutate(elements[index], &generator, words: words)
      return .array(elements)
    default:
      return randomValue(&generator, words: words)
    }
  }

  /// - Reliability: Random payloads: mapped and applied, or a typed error; what was applied verifies
  /// - Size: 400 batches
  @Test(.tags(.reliability)) func randomPayloadsMapOrFailWithTypedErrorsAndAcceptedOnesVerify() throws {
    var generator = SeededGenerator(seed: 77)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Fixtures.bandsModel())
    let words = [
      "name", "formed", "description", "albums", "band", "members", "musician", "info", "founded", "city",
      "released", "label", "id", "Japan", "Tin Drum", "1981-11-13", "20x", "band_id", "albums_ids", "other_names",
      "homepage_url", "https://example.org", "not a url", "joined", "born",
    ]
    var applied = 0
    for _ in 0..<400 {
      var batch = ledger.makeBatch()
      let entity = ["Band", "Album", "BandMember", "Musician"].randomElement(using: &generator)!
      let payload = JSONValue.array(
        (0..<Int.random(in: 1..<4, using: &generator)).map { _ in
          Self.mutate(["name": .string(words.randomElement(using: &generator)!), "id": "x"], &generator, words: words)
        })
      do {
        try batch.stage(payload, as: entity, options: StagingOptions(strict: Bool.random(using: &generator)))
        // A batch that changed nothing wrote no record.
        if try ledger.applySynchronously(batch).wroteRecord { applied += 1 }
      } catch is LedgerError {
        continue
      }
    }
    #expect(applied > 0)
    #expect(try ledger.verify().batches == applied)
  }
}
