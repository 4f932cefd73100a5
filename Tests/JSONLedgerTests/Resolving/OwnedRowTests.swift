import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Rows a relationship owns (`"owns": true`) and identities through a relationship: nested
/// rows without ids change only when the backend changed them.
@Suite("Owned rows and identities through a relationship")
struct OwnedRowTests {
  static let modelText = #"""
    {"keyCase": "snake_case", "entities": {
      "Item": {"identity": "id", "attributes": {"id": "string", "title": "string"},
        "relationships": {
          "steps": {"to": "Step", "many": true, "ordered": true, "owns": true},
          "tags": {"to": "TagUse", "many": true, "owns": true},
          "slots": {"to": "Slot", "many": true, "inverse": "item", "owns": true},
          "cover": {"to": "Image", "owns": true}}},
      "Step": {"attributes": {"text": "string", "minutes": "int64"},
        "relationships": {"notes": {"to": "Note", "many": true, "ordered": true, "owns": true}}},
      "Note": {"attributes": {"text": "string"}},
      "TagUse": {"attributes": {"weight": "int64"}, "relationships": {"tag": {"to": "Tag"}}},
      "Tag": {"identity": "name", "attributes": {"name": "string"}},
      "Slot": {"identity": ["item", "position"], "attributes": {"position": "int64", "label": "string"},
        "relationships": {"item": {"to": "Item", "inverse": "slots"}}},
      "Image": {"attributes": {"url": "string"}}
    }}
    """#

  static func ledger(_ directory: TemporaryDirectory) throws -> Ledger {
    try Ledger.open(at: directory.storePath, model: try Model(json: JSONParser.parse(Array(Self.modelText.utf8))))
  }

  static let item: JSONValue = [
    "id": "i-1", "title": "Soup",
    "steps": [
      ["text": "chop", "minutes": 5, "notes": [["text": "small"], ["text": "even"]]],
      ["text": "boil", "minutes": 20],
    ],
    "tags": [["weight": 1, "tag": "veg"], ["weight": 2, "tag": "hot"]],
    "slots": [["position": 1, "label": "a"], ["position": 2, "label": "b"]],
    "cover": ["url": "soup.png"],
  ]

  static func apply(_ ledger: Ledger, _ payload: JSONValue) throws -> BatchSummary {
    var batch = ledger.makeBatch()
    try batch.stage([payload], as: "Item")
    return try ledger.applySynchronously(batch)
  }

  static func changed(_ payload: JSONValue, _ change: (inout JSONObject) -> Void) -> JSONValue {
    var object = payload.objectValue ?? [:]
    change(&object)
    return .object(object)
  }

  static func fields(_ ledger: Ledger, _ batch: UInt64) throws -> [String] {
    try ledger.describe(try ledger.record(batch)).flatMap { described in
      described.attributes.map {
        "\(described.key) \($0.name): \($0.old?.description ?? "nil") → \($0.new?.description ?? "nil")"
      }
        + described.links.map { "\(described.key) \($0.relationship)" }
    }
  }

  @Test func theSameItemTwiceWritesOneRecord() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    #expect(try Self.apply(ledger, Self.item).wroteRecord)
    #expect(try !Self.apply(ledger, Self.item).wroteRecord)
    // Every row is there once.
    #expect(try ledger.read { view in try view.count("Step") + view.count("Note") + view.count("TagUse") } == 6)
    _ = try ledger.verify()
  }

  @Test func anOrderedRowChangedInPlaceIsAFieldOfItsOwner() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    _ = try Self.apply(ledger, Self.item)
    let longer = Self.changed(Self.item) { item in
      item["steps"] = [
        ["text": "chop", "minutes": 5, "notes": [["text": "small"], ["text": "even"]]],
        ["text": "boil", "minutes": 25],
      ]
    }
    let summary = try Self.apply(ledger, longer)
    #expect(try Self.fields(ledger, summary.batchID) == [#"Item "i-1" steps[1].minutes: 20 → 25"#])
    // Dropping the first step: by position, the second row takes the first one's values.
    let shorter = Self.changed(Self.item) { item in item["steps"] = [["text": "boil", "minutes": 25]] }
    let dropped = try Self.apply(ledger, shorter)
    let fields = try Self.fields(ledger, dropped.batchID)
    #expect(fields.contains(#"Item "i-1" steps[0].text: "chop" → "boil""#), "\(fields)")
    #expect(fields.contains(#"Item "i-1" steps[0].notes[0].text: "small" → nil"#), "\(fields)")
    #expect(try ledger.read { view in try view.count("Step") } == 1)
    #expect(try ledger.read { view in try view.count("Note") } == 0)
    _ = try ledger.verify()
  }

  @Test func unorderedRowsAreMatchedByTheirValues() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    _ = try Self.apply(ledger, Self.item)
    // The same tags in another order: nothing changed.
    let reordered = Self.changed(Self.item) { item in
      item["tags"] = [["weight": 2, "tag": "hot"], ["weight": 1, "tag": "veg"]]
    }
    #expect(try !Self.apply(ledger, reordered).wroteRecord)
    let heavier = Self.changed(Self.item) { item in
      item["tags"] = [["weight": 2, "tag": "hot"], ["weight": 3, "tag": "veg"]]
    }
    let summary = try Self.apply(ledger, heavier)
    let fields = try Self.fields(ledger, summary.batchID)
    #expect(fields.count == 1 && fields[0].hasSuffix(".weight: 1 → 3"), "\(fields)")
    _ = try ledger.verify()
  }

  @Test func rowsGoWithTheirOwnerAndAreExportedInlineInEveryMode() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    _ = try Self.apply(ledger, Self.item)
    for mode in [RelationshipExport.none, .ids, .nested(depth: 1), .rails(depth: 1)] {
      let exported = try ledger.read { view in try view.exportJSON("Item", options: ExportOptions(relationships: mode))
      }
      let item = try #require(exported.arrayValue?.first?.objectValue)
      let steps = item["steps"]?.arrayValue ?? item["steps_attributes"]?.objectValue.map { $0.map(\.value) } ?? []
      #expect(steps.count == 2, "\(mode): \(item)")
      #expect(steps.allSatisfy { $0.objectValue?["text"] != nil }, "\(mode): \(item)")
      #expect(item["cover"]?.objectValue?["url"] == "soup.png" || item["cover_attributes"] != nil, "\(mode)")
    }
    // A whole-store export lists no collection of rows: they are inside their owners.
    let document = try ledger.read { view in try view.exportDocument() }
    #expect(document.objectValue?.keys.sorted() == ["items", "tags"])
    var delete = ledger.makeBatch()
    try delete.delete("Item", key: "i-1")
    _ = try ledger.applySynchronously(delete)
    #expect(
      try ledger.read { view in
        try view.count("Step") + view.count("Note") + view.count("TagUse") + view.count("Slot") + view.count("Image")
      } == 0)
    #expect(try ledger.read { view in try view.count("Tag") } == 2)
    _ = try ledger.verify()
  }

  @Test func aRowKeyedThroughItsOwnerTakesTheOwnersKey() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    _ = try Self.apply(ledger, Self.item)
    let slot = try ledger.read { view in try view.object("Slot", key: ["i-1", 2] as JSONValue) }
    #expect(slot?.string("label") == "b")
    let relabelled = Self.changed(Self.item) { item in
      item["slots"] = [["position": 1, "label": "a"], ["position": 2, "label": "c"]]
    }
    let summary = try Self.apply(ledger, relabelled)
    #expect(try Self.fields(ledger, summary.batchID) == [#"Item "i-1" slots[1].label: "b" → "c""#])
    _ = try ledger.verify()
  }

  @Test func rowsAreRefusedByKeyOrAtTheTop() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(directory)
    var batch = ledger.makeBatch()
    try batch.stage([["id": "i-2", "steps": ["chop"]]], as: "Item")
    #expect(batch.problems.contains { $0.reason.contains("owns its Step objects: give each as an object") })
    var top = ledger.makeBatch()
    #expect(throws: LedgerError.self) { try top.stage([["text": "chop"]], as: "Step") }
    #expect(throws: LedgerError.self) { try top.stageDocument(["steps": [["text": "chop"]]]) }
  }

  @Test(
    arguments: [
      (
        #"{"entities": {"A": {"identity": ["bs"], "relationships": {"bs": {"to": "B", "many": true}}}, "B": {}}}"#,
        "is a to-many relationship"
      ),
      (
        #"{"entities": {"A": {"identity": ["b"], "relationships": {"b": {"to": "B"}}}, "#
          + #""B": {"identity": ["a"], "relationships": {"a": {"to": "A"}}}}}"#,
        "goes round through relationships"
      ),
      (
        #"{"entities": {"A": {"identity": "id", "attributes": {"id": "string"}, "#
          + #""relationships": {"b": {"to": "B", "inverse": "a", "owns": true}}}, "#
          + #""B": {"identity": "id", "attributes": {"id": "string"}, "#
          + #""relationships": {"a": {"to": "A", "inverse": "b", "owns": true}}}}}"#,
        "only one side can own the other"
      ),
      (
        #"{"entities": {"A": {"identity": ["b"], "relationships": {"b": {"to": "B"}}}, "B": {}}}"#,
        "which has no identity"
      ),
    ])
  func aModelThatCannotSayWhichObjectIsWhichIsRefused(text: String, reason: String) throws {
    #expect {
      try Model(json: JSONParser.parse(Array(text.utf8)))
    } throws: { error in
      "\(error)".contains(reason)
    }
  }
}
