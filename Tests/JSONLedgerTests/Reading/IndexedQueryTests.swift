import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Queries on an indexed attribute read the `indexes` database; the same queries on an
/// attribute without an index scan. Both must answer alike.
@Suite("Range and prefix queries through the index")
struct IndexedQueryTests {
  static let model: Model = {
    do {
      return try Model {
        for name in ["Indexed", "Scanned"] {
          Entity(name, identity: ["key"]) {
            Attribute("key", .int64)
            Attribute("score", .int64, indexed: name == "Indexed")
            Attribute("title", .string, indexed: name == "Indexed")
            Attribute("seen", .date, indexed: name == "Indexed")
          }
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  static let words = ["", "a", "ab", "abc", "b", "é", "e\u{301}", "ée", "zz", "a\u{0}b", "Ab", "日本", "a b"]

  @Test(arguments: [1, 2, 3] as [UInt64])
  func indexedRangesAndPrefixesAnswerAsScansDo(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    for _ in 0..<3 {
      var objects: [JSONValue] = []
      for _ in 0..<60 {
        var object: [String: JSONValue] = ["key": .number(JSONNumber(Int.random(in: 0..<120, using: &generator)))]
        if Bool.random(using: &generator) {
          object["score"] = .number(JSONNumber(Int.random(in: -5...5, using: &generator)))
        }
        if Bool.random(using: &generator) {
          object["title"] = .string(Self.words.randomElement(using: &generator) ?? "")
        }
        if Bool.random(using: &generator) {
          object["seen"] = .string("20\(Int.random(in: 10...12, using: &generator))-01-01T00:00:00Z")
        }
        objects.append(
          .object(JSONObject(object.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: $0.value) })))
      }
      var batch = ledger.makeBatch()
      try batch.stage(.array(objects), as: "Indexed")
      try batch.stage(.array(objects), as: "Scanned")
      _ = try ledger.applySynchronously(batch)
    }
    let filters: [(String, Query.Filter)] =
      [
        ("score", .between(-2, 3)), ("score", .between(nil, 0)), ("score", .between(4, nil)), ("score", .equals(1)),
        ("seen", .between("2011-01-01T00:00:00Z", nil)), ("title", .between("a", "b")), ("title", .between("é", nil)),
      ] + Self.words.map { ("title", .hasPrefix($0)) } + Self.words.map { ("title", .equals(.string($0))) }
    try ledger.read { view in
      for (attribute, filter) in filters {
        let indexed = try view.objects(Query("Indexed", where: attribute, filter))
        let scanned = try view.objects(Query("Scanned", where: attribute, filter))
        #expect(
          indexed.objects.map(\.key.identity) == scanned.objects.map(\.key.identity), "\(attribute) \(filter)")
        #expect(try view.count(Query("Indexed", where: attribute, filter)) == indexed.objects.count)
        let sorted = try view.objects(Query("Indexed", where: attribute, filter).sorted(by: "title"))
        #expect(Set(sorted.objects.map(\.key.identity)) == Set(scanned.objects.map(\.key.identity)))
      }
    }
  }
}
