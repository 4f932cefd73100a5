import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Deletion rules on explicit deletes and prunes")
struct DeletionRuleTests {
  static func ledger(in directory: TemporaryDirectory) throws -> Ledger {
    let model = try Model(json: [
      "entities": [
        "Folder": [
          "identity": "id", "attributes": ["id": "string"],
          "relationships": [
            "items": ["to": "Item", "many": true, "inverse": "folder", "deletionRule": "cascade"],
            "pins": ["to": "Pin", "many": true, "inverse": "folder", "deletionRule": "deny"],
          ],
        ],
        "Item": [
          "identity": "id", "attributes": ["id": "string"],
          "relationships": [
            "folder": ["to": "Folder", "inverse": "items"],
            "notes": ["to": "Note", "many": true, "inverse": "item", "deletionRule": "cascade"],
          ],
        ],
        "Note": [
          "identity": "id", "attributes": ["id": "string"],
          "relationships": ["item": ["to": "Item", "inverse": "notes"]],
        ],
        "Pin": [
          "identity": "id", "attributes": ["id": "string"],
          "relationships": ["folder": ["to": "Folder", "inverse": "pins"]],
        ],
      ]
    ])
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage(
      [
        ["id": "a", "items": [["id": "a1", "notes": [["id": "n1"]]], ["id": "a2"]]],
        ["id": "b", "items": [["id": "b1"]], "pins": [["id": "p1"]]],
      ], as: "Folder")
    _ = try ledger.applySynchronously(batch)
    return ledger
  }

  static func count(_ ledger: Ledger) throws -> [Int] {
    try ledger.read { view in try ["Folder", "Item", "Note", "Pin"].map { try view.count($0) } }
  }

  @Test func cascadeDeletesWhatTheRelationshipLinksAndSoOnDown() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    var batch = ledger.makeBatch()
    try batch.delete("Folder", key: "a")
    let summary = try ledger.applySynchronously(batch)
    #expect(summary.deleted == 4)
    #expect(try Self.count(ledger) == [1, 1, 0, 1])
    #expect(try ledger.verify().batches == 2)
  }

  @Test func denyRefusesTheDeleteWhileTheRelationshipLinksAnything() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    var batch = ledger.makeBatch()
    try batch.delete("Folder", key: "b")
    #expect {
      try ledger.applySynchronously(batch)
    } throws: { error in
      "\(error)".contains("pins") && "\(error)".contains("p1") && "\(error)".contains("Deny")
    }
    #expect(try ledger.head == 1)
    var unpin = ledger.makeBatch()
    try unpin.delete("Pin", key: "p1")
    try unpin.delete("Folder", key: "b")
    _ = try ledger.applySynchronously(unpin)
    #expect(try Self.count(ledger) == [1, 2, 1, 0])
  }

  @Test func aPruneHonoursTheRulesToo() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    var batch = ledger.makeBatch()
    try batch.stage([["id": "b"]], as: "Folder", options: StagingOptions(prune: true))
    _ = try ledger.applySynchronously(batch)
    #expect(try Self.count(ledger) == [1, 1, 0, 1])
  }

  @Test func nullifyOnlyUnlinks() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    var batch = ledger.makeBatch()
    try batch.delete("Item", key: "a2")
    _ = try ledger.applySynchronously(batch)
    #expect(try Self.count(ledger) == [2, 2, 1, 1])
    #expect(try ledger.read { view in try view.object("Folder", key: "a")?.relationships["items"]?.count } == 1)
  }
}
