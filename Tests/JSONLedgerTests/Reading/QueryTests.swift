import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Queries: filters, sort, count, cursor paging, as of a batch")
struct QueryTests {
  static func model() throws -> Model {
    try Model {
      Entity("Issue", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("title", .string)
        Attribute("votes", .int64)
        Attribute("price", .decimal)
      }
    }
  }

  static func ledger(in directory: TemporaryDirectory) throws -> Ledger {
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var batch = ledger.makeBatch()
    let issues: [JSONValue] = (1...30).map { id in
      var issue: JSONObject = [
        "id": .number(JSONNumber(id)), "title": .string(id % 3 == 0 ? "crash \(id)" : "idea \(id)"),
      ]
      if id % 5 != 0 { issue["votes"] = .number(JSONNumber((id * 7) % 11)) }
      issue["price"] = .string(id % 2 == 0 ? "9.5" : "10")
      return .object(issue)
    }
    try batch.stage(.array(issues), as: "Issue")
    _ = try ledger.applySynchronously(batch)
    return ledger
  }

  static func ids(_ objects: [ObjectSnapshot]) -> [Int64] { objects.compactMap { $0.integer("id") } }

  @Test func filtersMatchByValueRangeAndPrefix() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    try ledger.read { view in
      let crashes = try view.objects(Query("Issue", where: "title", .hasPrefix("crash")))
      #expect(Self.ids(crashes.objects) == [3, 6, 9, 12, 15, 18, 21, 24, 27, 30])
      #expect(try view.count(Query("Issue", where: "title", .hasPrefix("crash"))) == 10)
      let many = try view.objects(Query("Issue", where: "votes", .between("8", nil))).objects
      #expect(many.allSatisfy { ($0.integer("votes") ?? 0) >= 8 } && !many.isEmpty)
      #expect(try view.count(Query("Issue", where: "votes", .equals(nil))) == 6)
      #expect(try view.count(Query("Issue", where: "price", .between(nil, "9.9"))) == 15)
      #expect(throws: LedgerError.self) { try view.count(Query("Issue", where: "nothing", .equals(1))) }
      #expect(throws: LedgerError.self) { try view.count(Query("Issue", where: "votes", .hasPrefix("1"))) }
    }
  }

  @Test func pagesInStoredOrderStopEarlyAndGoOnPastADeletedCursorObject() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    let query = Query("Issue", where: "title", .hasPrefix("idea")).limited(to: 4)
    let all = try ledger.read { view in
      Self.ids(try view.objects(Query("Issue", where: "title", .hasPrefix("idea"))).objects)
    }
    var seen: [Int64] = []
    var page = try ledger.read { view in try view.objects(query) }
    seen += Self.ids(page.objects)
    var deleted = false
    while let next = page.next {
      if !deleted {
        // The cursor's object goes away between two pages: the next page starts behind its place.
        var batch = ledger.makeBatch()
        try batch.delete("Issue", key: .number(JSONNumber(Int(seen.last ?? 0))))
        _ = try ledger.applySynchronously(batch)
        deleted = true
      }
      page = try ledger.read { view in try view.objects(query.after(next)) }
      seen += Self.ids(page.objects)
    }
    #expect(seen == all)
    #expect(page.objects.count <= 4)
  }

  @Test func aCursorTravelsAsATokenAndAForgedTokenIsRefused() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    let query = Query("Issue").sorted(by: .descending("votes"), .ascending("title")).limited(to: 7)
    try ledger.read { view in
      var seen: [Int64] = []
      var page = try view.objects(query)
      seen += Self.ids(page.objects)
      while let next = page.next {
        let token = next.token
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(try QueryCursor(token: token) == next)
        page = try view.objects(query.after(try QueryCursor(token: token)))
        seen += Self.ids(page.objects)
      }
      #expect(seen == Self.ids(try view.objects(query.limited(to: 100)).objects))
    }
    for forged in ["", "AAAA", "not a token", String(repeating: "A", count: 5000), "AQ"] {
      let error = #expect(throws: LedgerError.self) { try QueryCursor(token: forged) }
      #expect(error?.code == .invalidQuery)
    }
  }

  @Test(arguments: [true, false])
  func sortingKeepsTiesInKeyOrderAndMissingValuesLast(ascending: Bool) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    let sorted = try ledger.read { view in try view.objects(Query("Issue").sorted(by: "votes", ascending: ascending)) }
    let votes = sorted.objects.map { $0.integer("votes") }
    let present = votes.compactMap { $0 }
    #expect(present == (ascending ? present.sorted() : present.sorted(by: >)))
    #expect(votes.suffix(6).allSatisfy { $0 == nil })
    #expect(sorted.next == nil)
  }

  @Test(arguments: [1, 4, 7, 30, 31])
  func pagesWithACursorListEveryObjectOnce(pageSize: Int) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    for query in [Query("Issue"), Query("Issue").sorted(by: "votes", ascending: false)] {
      var seen: [Int64] = []
      var cursor: QueryCursor?
      repeat {
        let page = try ledger.read { view in try view.objects(query.limited(to: pageSize).after(cursor)) }
        #expect(page.objects.count <= pageSize)
        seen += Self.ids(page.objects)
        cursor = page.next
      } while cursor != nil
      #expect(seen.count == 30 && Set(seen).count == 30)
      let whole = try ledger.read { view in try view.objects(query) }
      #expect(seen == Self.ids(whole.objects))
    }
  }

  @Test func aCursorWhoseObjectWasDeletedGoesOnFromItsPlace() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Self.ledger(in: directory)
    let query = Query("Issue").limited(to: 5)
    let first = try ledger.read { view in try view.objects(query) }
    #expect(Self.ids(first.objects) == [1, 2, 3, 4, 5])
    var delete = ledger.makeBatch()
    try delete.delete("Issue", key: 5)
    _ = try ledger.applySynchronously(delete)
    let second = try ledger.read { view in try view.objects(query.after(first.next)) }
    #expect(Self.ids(second.objects) == [6, 7, 8, 9, 10])
    // As of batch 1 the deleted one is there again.
    #expect(try ledger.read(asOf: 1) { view in try view.count(Query("Issue", where: "id", .equals(5))) } == 1)
    #expect(try ledger.read { view in try view.count(Query("Issue", where: "id", .equals(5))) } == 0)
  }

  /// The README's query example, as written.
  @Test func theReadmeQueryExample() throws {
    let directory = try TemporaryDirectory()
    let ledger = try makeLedger(
      in: directory, model: try Fixtures.bandsModel(), documents: [try Fixtures.json("bands-initial.json")])
    let query = Query("Album", where: "released", .between("1980-01-01", nil)).sorted(by: "released").limited(to: 20)
    let page = try ledger.read { view in try view.objects(query) }  // page.objects, page.next
    let more = try ledger.read { view in try view.objects(query.after(page.next)) }
    let count = try ledger.read(asOf: 1) { view in try view.count(query) }
    #expect(page.objects.count == count && page.next == nil && more.objects == page.objects)
    let dates = page.objects.compactMap { $0.date("released") }
    #expect(dates == dates.sorted())
  }
}
