import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Queries as a sync job asks them (the user review's GitHub model): several conditions,
/// a to-one's key, a to-many's membership, IN, null checks, several sort keys, typed results.
@Suite("Queries with several conditions, relationships, IN, null checks, several sort keys")
struct QueryConditionTests {
  static func model() throws -> Model {
    try Model {
      Entity("Repository", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("fullName", .string, indexed: true)
        Relationship("issues", to: "Issue", many: true, inverse: "repository")
      }
      Entity("Label", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("issues", to: "Issue", many: true, inverse: "labels")
      }
      Entity("Issue", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("state", .string, indexed: true)
        Attribute("votes", .int64)
        Attribute("assignee", .string)
        Relationship("repository", to: "Repository", inverse: "issues")
        Relationship("labels", to: "Label", many: true, inverse: "issues")
      }
    }
  }

  static let labelNames = ["bug", "docs", "ui", "perf"]

  /// 60 issues over 3 repositories, with states, votes, assignees and labels from `seed`.
  static func ledger(in directory: TemporaryDirectory, seed: UInt64 = 1) throws -> Ledger {
    var generator = SeededGenerator(seed: seed)
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var batch = ledger.makeBatch()
    let repositories: [JSONValue] = [1_296_269, 42, 7].map { id in
      ["id": .number(JSONNumber(id)), "full_name": .string("octo/repo-\(id)")]
    }
    try batch.stage(.array(repositories), as: "Repository")
    let issues: [JSONValue] = (1...60).map { id in
      var issue: JSONObject = [
        "id": .number(JSONNumber(id)),
        "state": .string(["open", "closed", "draft"].randomElement(using: &generator) ?? "open"),
      ]
      if Int.random(in: 0..<4, using: &generator) != 0 {
        issue["votes"] = .number(JSONNumber(Int.random(in: 0..<6, using: &generator)))
      }
      if Bool.random(using: &generator) {
        issue["assignee"] = .string(["ana", "bo"].randomElement(using: &generator)!)
      }
      if Int.random(in: 0..<5, using: &generator) != 0 {
        issue["repository_id"] = .number(JSONNumber([1_296_269, 42, 7].randomElement(using: &generator)!))
      }
      issue["label_ids"] = .array(Self.labelNames.filter { _ in Bool.random(using: &generator) }.map { .string($0) })
      return .object(issue)
    }
    try batch.stage(.array(Self.labelNames.map { ["name": .string($0)] }), as: "Label")
    try batch.stage(.array(issues), as: "Issue")
    _ = try ledger.applySynchronously(batch)
    return ledger
  }

  static func ids(_ objects: [ObjectSnapshot]) -> [Int64] { objects.compactMap { $0.integer("id") } }

  /// The ids of the issues `keep` accepts, in stored order, from a plain read of every issue.
  static func expected(_ ledger: Ledger, _ keep: (ObjectSnapshot) -> Bool) throws -> [Int64] {
    try ledger.read { view in ids(try view.objects("Issue").filter(keep)) }
  }

  static func repository(_ issue: ObjectSnapshot) -> Int64? {
    if case .integer(let id)? = issue.relationships["repository"]?.first?.identity.first { id } else { nil }
  }

  static func labels(_ issue: ObjectSnapshot) -> [String] {
    (issue.relationships["labels"] ?? []).compactMap {
      if case .string(let name)? = $0.identity.first { name } else { nil }
    }
  }

  @Test func severalConditionsMustAllHoldAndAnyOfNeedsOne() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    let query = Query("Issue", where: "state", .equals("open")).filter("votes", .between(2, nil))
    let both = try ledger.read { view in Self.ids(try view.objects(query).objects) }
    #expect(both == (try Self.expected(ledger) { $0.string("state") == "open" && ($0.integer("votes") ?? -1) >= 2 }))
    #expect(!both.isEmpty)
    let either = Query("Issue").filter(anyOf: [.init("state", .equals("draft")), .init("assignee", .equals("bo"))])
    let found = try ledger.read { view in Self.ids(try view.objects(either).objects) }
    #expect(found == (try Self.expected(ledger) { $0.string("state") == "draft" || $0.string("assignee") == "bo" }))
    #expect(try ledger.read { view in try view.count(Query("Issue").filter(anyOf: [])) } == 0)
  }

  @Test func aToOnesKeyAndAToManysMembershipFilter() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try ledger.read { view in
      // The key as the backend sends it, as text or number, and by the JSON key `repository_id`.
      let inRepository = Self.ids(try view.objects(Query("Issue", where: "repository", .equals(1_296_269))).objects)
      #expect(inRepository == (try Self.expected(ledger) { Self.repository($0) == 1_296_269 }))
      #expect(!inRepository.isEmpty)
      #expect(Self.ids(try view.objects("Issue", where: "repository_id", equals: "1296269")) == inRepository)
      let orphans = Self.ids(try view.objects(Query("Issue", where: "repository", .isNull)).objects)
      #expect(orphans == (try Self.expected(ledger) { Self.repository($0) == nil }))
      #expect(!orphans.isEmpty)
      let bugs = Self.ids(try view.objects(Query("Issue", where: "labels", .contains("bug"))).objects)
      #expect(bugs == (try Self.expected(ledger) { Self.labels($0).contains("bug") }))
      let unlabelled = try view.count(Query("Issue", where: "labels", .isNull))
      #expect(unlabelled == (try Self.expected(ledger) { Self.labels($0).isEmpty }).count)
      let twoRepositories = Query("Issue", where: "repository", .oneOf([42, 7]))
      #expect(
        Self.ids(try view.objects(twoRepositories).objects)
          == (try Self.expected(ledger) { [42, 7].contains(Self.repository($0)) }))
    }
  }

  @Test func wrongUsesAreRefusedNamingThePropertyAndTheReason() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try ledger.read { view in
      for (query, words) in [
        (Query("Issue", where: "labels", .equals("bug")), "to-many relationship: use `contains`"),
        (Query("Issue", where: "repository", .contains(42)), "to-one relationship: use `equals`"),
        (Query("Issue", where: "state", .contains("x")), "is an attribute"),
        (Query("Issue", where: "repository", .equals("forty-two")), "Issue.repository"),
        (Query("Issue", where: "nothing", .isNull), "no attribute or relationship \"nothing\""),
        (Query("Issue").sorted(by: .ascending("votes"), .descending("nothing")), "no attribute \"nothing\" to sort by"),
      ] {
        #expect {
          try view.count(query)
        } throws: { error in
          "\(error)".contains(words)
        }
      }
    }
  }

  @Test func inAndNullChecksOnIndexedAndPlainAttributesAgree() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try ledger.read { view in
      let indexed = Self.ids(try view.objects(Query("Issue", where: "state", .oneOf(["open", "draft"]))).objects)
      #expect(indexed == (try Self.expected(ledger) { ["open", "draft"].contains($0.string("state")) }))
      let plain = Self.ids(try view.objects(Query("Issue", where: "votes", .oneOf([1, "3", .null]))).objects)
      #expect(plain == (try Self.expected(ledger) { [1, 3, nil].contains($0.integer("votes")) }))
      #expect(
        try view.count(Query("Issue", where: "assignee", .isNotNull))
          == (try Self.expected(ledger) { $0.string("assignee") != nil }).count)
      let named = Self.ids(try view.objects(Query("Repository", where: "full_name", .hasPrefix("octo/repo-4"))).objects)
      #expect(named == [42])
    }
  }

  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func severalSortKeysOrderAndPageAsOneSortDoes(seed: UInt64) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory, seed: seed)
    let query = Query("Issue").filter("state", .oneOf(["open", "closed"]))
      .sorted(by: .ascending("state"), .descending("votes"), .ascending("assignee"))
    let all = try ledger.read { view in try view.objects(query).objects }
    // The order spelt out: state up, votes down (none last), assignee up (none last), stored order.
    func rank(_ value: AttributeValue?) -> (Int, AttributeValue?) { (value == nil ? 1 : 0, value) }
    for (left, right) in zip(all, all.dropFirst()) {
      let keys: [(AttributeValue?, AttributeValue?, Bool)] = [
        (left["state"], right["state"], true), (left["votes"], right["votes"], false),
        (left["assignee"], right["assignee"], true),
      ]
      var decided = false
      for (l, r, ascending) in keys where !decided && l != r {
        decided = true
        switch (l, r) {
        case (_?, nil): break
        case (nil, _?): Issue.record("an object without a value came first")
        case (let l?, let r?): #expect(ascending ? l.isOrdered(before: r) : r.isOrdered(before: l))
        default: break
        }
      }
      if !decided { #expect(left.objectID < right.objectID) }
    }
    // Pages of 7 through the cursor give the same sequence.
    var paged: [ObjectSnapshot] = []
    var cursor: QueryCursor?
    repeat {
      let page = try ledger.read { view in try view.objects(query.limited(to: 7).after(cursor)) }
      paged += page.objects
      cursor = page.next
    } while cursor != nil
    #expect(Self.ids(paged) == Self.ids(all))
  }

  struct IssueRow: Decodable, Equatable {
    var id: Int
    var state: String
    var votes: Int?
    var repository: Int?
    var labels: [String]
  }

  @Test func aQueryAndASnapshotDecodeIntoYourType() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    let query = Query("Issue", where: "repository", .equals(42)).sorted(by: .descending("votes")).limited(to: 5)
    let (rows, snapshots) = try ledger.read { view in
      (try view.decode([IssueRow].self, from: query), try view.objects(query).objects)
    }
    #expect(rows.count == 5)
    #expect(rows.map(\.id) == Self.ids(snapshots).map(Int.init))
    #expect(rows.allSatisfy { $0.repository == 42 })
    #expect(try snapshots.map { try $0.decode(IssueRow.self) } == rows)
    let orphan = try ledger.read { view in try view.objects(Query("Issue", where: "repository", .isNull)).objects[0] }
    #expect(try orphan.decode(IssueRow.self).repository == nil)
  }

  /// Random conditions: the index-backed answer, the scanned one (as of the head batch, where
  /// no index is read) and a plain filter of every object agree.
  @Test(arguments: [11, 12, 13] as [UInt64])
  func randomConditionsAnswerAsAPlainFilterDoes(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory, seed: seed)
    let states: [JSONValue] = ["open", "closed", "draft", "gone"]
    func randomCondition() -> (Query.Condition, (ObjectSnapshot) -> Bool) {
      switch Int.random(in: 0..<6, using: &generator) {
      case 0:
        let state = states.randomElement(using: &generator)!
        return (.init("state", .equals(state)), { .string($0.string("state") ?? "") == state })
      case 1:
        let some = Array(states.shuffled(using: &generator).prefix(2))
        return (.init("state", .oneOf(some)), { some.contains(.string($0.string("state") ?? "")) })
      case 2:
        let low = Int64.random(in: 0..<6, using: &generator)
        return (.init("votes", .between(.number(JSONNumber(Int(low))), nil)), { ($0.integer("votes") ?? -1) >= low })
      case 3:
        let label = Self.labelNames.randomElement(using: &generator)!
        return (.init("labels", .contains(.string(label))), { Self.labels($0).contains(label) })
      case 4:
        return (.init("assignee", .isNull), { $0.string("assignee") == nil })
      default:
        let id = [1_296_269, 42, 7].randomElement(using: &generator)!
        return (.init("repository", .equals(.number(JSONNumber(id)))), { Self.repository($0) == Int64(id) })
      }
    }
    let head = try ledger.read { view in view.batchID }
    for _ in 0..<40 {
      var query = Query("Issue")
      var tests: [[(ObjectSnapshot) -> Bool]] = []
      for _ in 0..<Int.random(in: 1...3, using: &generator) {
        let group = (0..<Int.random(in: 1...2, using: &generator)).map { _ in randomCondition() }
        query = query.filter(anyOf: group.map(\.0))
        tests.append(group.map(\.1))
      }
      let expected = try Self.expected(ledger) { object in tests.allSatisfy { $0.contains { $0(object) } } }
      #expect(try ledger.read { view in Self.ids(try view.objects(query).objects) } == expected, "\(query.conditions)")
      #expect(try ledger.read(asOf: head) { view in Self.ids(try view.objects(query).objects) } == expected)
    }
  }
}
