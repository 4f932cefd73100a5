import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// The one text form of a query (`QueryText`) means what `Query`'s filters mean: each
/// expression here gives the objects the same query built in Swift gives.
@Suite("The text form of a query")
struct QueryTextTests {
  typealias Issues = QueryConditionTests

  static func ids(_ ledger: Ledger, _ query: Query) throws -> [Int64] {
    try ledger.read { view in Issues.ids(try view.objects(query).objects) }
  }

  /// What each expression of `anExpressionKeepsWhatItsFiltersKeep` must keep.
  static func keeps(_ expression: String, _ issue: ObjectSnapshot) -> Bool {
    let votes = issue.integer("votes")
    switch expression {
    case "votes > 3": return (votes ?? -1) > 3
    case "votes >= 3": return (votes ?? -1) >= 3
    case "votes < 2": return votes.map { $0 < 2 } ?? false
    case "votes <= 2": return votes.map { $0 <= 2 } ?? false
    case "votes = 4": return votes == 4
    case "votes != 4": return votes.map { $0 != 4 } ?? false
    case "votes is null", "votes = null": return votes == nil
    case "votes is not null": return votes != nil
    case "state in (open, 'draft')": return ["open", "draft"].contains(issue.string("state"))
    case "assignee prefix a": return issue.string("assignee")?.hasPrefix("a") == true
    case "labels contains bug": return Issues.labels(issue).contains("bug")
    case "repository = 42", "repository_id = 42", "repository.id = 42": return Issues.repository(issue) == 42
    case "repository != 42": return Issues.repository(issue).map { $0 != 42 } ?? false
    case "repository is null": return Issues.repository(issue) == nil
    default:
      return issue.string("state") == "open" && (votes ?? -1) > 2 && Issues.labels(issue).contains("ui")
    }
  }

  @Test(
    arguments: [
      "votes > 3", "votes >= 3", "votes < 2", "votes <= 2", "votes = 4", "votes != 4", "votes is null",
      "votes = null", "votes is not null", "state in (open, 'draft')", "assignee prefix a", "labels contains bug",
      "repository = 42", "repository_id = 42", "repository.id = 42", "repository != 42", "repository is null",
      "state = open and votes > 2 AND labels contains ui",
    ])
  func anExpressionKeepsWhatItsFiltersKeep(expression: String) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Issues.ledger(in: directory)
    let expected = try Issues.expected(ledger) { Self.keeps(expression, $0) }
    #expect(!expected.isEmpty, "the fixture holds matches")
    #expect(try Self.ids(ledger, try Query("Issue").filter(expression)) == expected, "\(expression)")
  }

  @Test func aValueAfterEqualsRunsToTheNextAndAndQuotesKeepAnything() throws {
    var query = try Query("Album").filter("label = Virgin Records and name != 'Tin Drum and more'")
    #expect(query.conditions.count == 2)
    guard case .equals(.string("Virgin Records")) = query.conditions[0][0].filter else {
      Issue.record("\(query.conditions[0][0].filter)")
      return
    }
    guard case .notEquals(.string("Tin Drum and more")) = query.conditions[1][0].filter else {
      Issue.record("\(query.conditions[1][0].filter)")
      return
    }
    query = try Query("Album").filter(#"title = "say \"hi\"""#)
    guard case .equals(.string(#"say "hi""#)) = query.conditions[0][0].filter else {
      Issue.record("\(query.conditions[0][0].filter)")
      return
    }
    #expect(try Query("Pokemon").filter("placeholder").placeholders == .only)
    #expect(try Query("Pokemon").filter("not placeholder and weight > 3").placeholders == .excluded)
    #expect(try QueryText.sortKeys("-weight, name", entity: "P") == [.descending("weight"), .ascending("name")])
    #expect(try QueryText.sortKeys("weight desc", entity: "P") == [.descending("weight")])
  }

  @Test(
    arguments: [
      ("votes", 6, "expected an operator"),
      ("votes >", 8, "expected a value"),
      ("votes > 3 or state = open", 11, "expected `and`"),
      ("state in (open", 15, "expected `,` or `)`"),
      ("title = 'unclosed", 9, "no closing"),
      ("votes > null", 13, "use `is null`"),
      ("", 1, "expected a condition"),
      ("not votes", 5, "expected `placeholder`"),
    ])
  func aBadExpressionNamesThePlace(expression: String, position: Int, reason: String) {
    do {
      _ = try Query("Issue").filter(expression)
      Issue.record("\"\(expression)\" was read")
    } catch {
      #expect(error.code == .invalidQuery)
      #expect(error.position == position, "\(error.message)")
      #expect(error.message.contains(reason), "\(error.message)")
    }
  }

  @Test func anUnknownFieldIsNamedWhenTheQueryRuns() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Issues.ledger(in: directory)
    #expect {
      try ledger.read { view in try view.objects(try Query("Issue").filter("colour = red")) }
    } throws: { error in
      (error as? LedgerError)?.code == .invalidQuery && "\(error)".contains("no attribute or relationship \"colour\"")
    }
    #expect(throws: LedgerError.self) {
      try ledger.read { view in
        try view.objects(Query("Issue").sorted(by: try QueryText.sortKeys("-colour", entity: "Issue")))
      }
    }
  }

  /// A dotted JSON key names an attribute read through a key path.
  @Test func aDottedJSONKeyNamesItsAttribute() throws {
    let model = try Model(keyCase: .snakeCase) {
      Entity("Pokemon", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("front", .string, jsonKey: "sprites.front_default")
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage(
      [
        ["name": "a", "sprites": ["front_default": "a.png", "back_default": "b.png"]],
        ["name": "b", "sprites": ["front_default": "c.png"]],
      ], as: "Pokemon")
    // The sibling no key path reads is reported, as an unmatched key is.
    #expect(batch.ignoredKeys == ["Pokemon.sprites.back_default"])
    _ = try ledger.applySynchronously(batch)
    let found = try ledger.read { view in
      try view.objects(try Query("Pokemon").filter("sprites.front_default = c.png")).objects.map(\.key.description)
    }
    #expect(found == [#"Pokemon "b""#])
  }

  /// The README's paging loop, as written, ends after the last page.
  @Test func theReadmePagingLoopEnds() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Issues.ledger(in: directory)
    let query = Query("Issue").sorted(by: "votes").limited(to: 7)
    var seen = 0
    var pages = 0
    var cursor: QueryCursor?
    repeat {
      let page = try ledger.read { view in try view.objects(query.after(cursor)) }
      seen += page.objects.count
      pages += 1
      cursor = page.next
    } while cursor != nil
    #expect(seen == 60 && pages == 9)
  }
}
