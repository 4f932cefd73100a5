import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Keys from plain Swift values, typed accessors on snapshots")
struct TypedAccessTests {
  static func model() throws -> Model {
    try Model {
      Entity("Issue", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("title", .string)
        Attribute("votes", .int32)
        Attribute("score", .double)
        Attribute("bounty", .decimal)
        Attribute("open", .bool)
        Attribute("createdAt", .date)
        Attribute("token", .uuid)
        Attribute("link", .url)
        Attribute("blob", .binary)
        Attribute("labels", .json)
      }
      Entity("Tag", identity: ["uuid"]) { Attribute("uuid", .uuid) }
    }
  }

  @Test func swiftValuesNameObjectsAndTypedAccessorsReadThem() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    let token = UUID()
    var batch = ledger.makeBatch()
    try batch.stage(
      [
        [
          "id": 1347, "title": "Crash on launch", "votes": 12, "score": 0.75, "bounty": "12.50", "open": true,
          "createdAt": "2024-05-01T12:00:00Z", "token": .string(token.uuidString), "link": "https://example.org/1347",
          "blob": "aGk=", "labels": ["bug"],
        ]
      ], as: "Issue")
    try batch.stage([.string(token.uuidString)], as: "Tag")
    _ = try ledger.applySynchronously(batch)
    let id: Int64 = 1347
    try ledger.read { view in
      let issue = try #require(try view.object("Issue", key: id))
      #expect(try view.object("Issue", key: Int(1347)) == issue)
      #expect(try view.object("Issue", key: "1347") == issue)
      #expect(issue.string("title") == "Crash on launch")
      #expect(issue.integer("votes") == 12)
      #expect(issue.double("score") == 0.75)
      #expect(issue.double("votes") == 12)
      #expect(issue.decimal("bounty") == Decimal(string: "12.50"))
      #expect(issue.bool("open") == true)
      #expect(issue.date("createdAt") == Date(timeIntervalSince1970: 1_714_564_800))
      #expect(issue.uuid("token") == token)
      #expect(issue.url("link") == URL(string: "https://example.org/1347"))
      #expect(issue.data("blob") == Data("hi".utf8))
      #expect(issue.json("labels") == ["bug"])
      #expect(issue.string("votes") == nil)
      #expect(issue.string("missing") == nil)
      #expect(try view.object("Tag", key: token) != nil)
    }
    var delete = ledger.makeBatch()
    try delete.delete("Issue", key: id)
    _ = try ledger.applySynchronously(delete)
    #expect(try ledger.log("Issue", key: id).count == 2)
  }
}
