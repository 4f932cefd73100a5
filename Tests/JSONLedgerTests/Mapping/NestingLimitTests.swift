import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Nesting is bounded: a deep payload is an error, a deep export writes keys")
struct NestingLimitTests {
  static func model() throws -> Model {
    try Model {
      Entity("Node", identity: ["id"]) {
        Attribute("id", .int64)
        Relationship("next", to: "Node", inverse: "previous")
        Relationship("previous", to: "Node", inverse: "next")
      }
    }
  }

  static func chain(_ count: Int) -> JSONValue {
    var node: JSONValue = ["id": .number(JSONNumber(count - 1))]
    for id in stride(from: count - 2, through: 0, by: -1) { node = ["id": .number(JSONNumber(id)), "next": node] }
    return [node]
  }

  /// - Reliability: Objects nested deeper than 100 in a payload are a mapping error (1,000 and 10,000 levels
  ///   crashed before); a nested export stops at 100
  /// - Size: —
  @Test(.tags(.reliability)) func objectsNestedBeyondTheLimitAreAnErrorNotACrash() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var deep = ledger.makeBatch()
    try deep.stage(Self.chain(NestingLimit.objects + 2), as: "Node")
    #expect(deep.problems.contains { $0.reason.contains("nested more than \(NestingLimit.objects) deep") })
    #expect(throws: LedgerError.self) { try ledger.applySynchronously(deep) }
    for count in [1_000, 10_000] {
      var deeper = ledger.makeBatch()
      try deeper.stage(Self.chain(count), as: "Node")
      #expect(throws: LedgerError.self) { try ledger.applySynchronously(deeper) }
    }
    #expect(try ledger.head == 0)
    var batch = ledger.makeBatch()
    try batch.stage(Self.chain(NestingLimit.objects + 1), as: "Node")
    #expect(try ledger.applySynchronously(batch).created == NestingLimit.objects + 1)
  }

  @Test func aNestedExportStopsAtTheLimitWhateverDepthIsAsked() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var batch = ledger.makeBatch()
    // A chain of 3,000 by keys: nothing nested in the payload, a long chain in the store.
    try batch.stage(
      .array((0..<3_000).map { ["id": .number(JSONNumber($0)), "next": .number(JSONNumber($0 + 1))] }), as: "Node")
    _ = try ledger.applySynchronously(batch)
    let exported = try ledger.read { view in
      try view.exportJSON(
        try #require(try view.object("Node", key: 0)), options: .init(relationships: .nested(depth: 5_000)))
    }
    var depth = 0
    var node = exported
    while case .object(let object) = node["next"] ?? .null {
      depth += 1
      node = .object(object)
    }
    #expect(depth == NestingLimit.objects)
  }
}
