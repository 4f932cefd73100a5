import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// One focused test per mapping rule: input JSON → expected stored value.
@Suite("Mapping rules")
struct MappingRuleTests {
  static let model: Model = {
    do {
      return try Model(keyCase: .snakeCase) {
        Entity("User", identity: ["remoteID"]) {
          Attribute("remoteID", .int64)
          Attribute("firstName", .string)
          Attribute("listImageURL", .url)
          Attribute("userDescription", .string)
          Attribute("userType", .string)
          Attribute("age", .int16)
          Attribute("score", .double)
          Attribute("price", .decimal)
          Attribute("isActive", .bool)
          Attribute("born", .date)
          Attribute("token", .uuid)
          Attribute("avatar", .binary)
          Attribute("settings", .json)
          Attribute("city", .string, jsonKey: "address.city")
          Attribute("nickname", .string, jsonKey: "nick")
          Relationship("company", to: "Company", inverse: "employees")
          Relationship("tags", to: "Tag", many: true)
        }
        Entity("Company", identity: ["id"]) {
          Attribute("id", .string)
          Attribute("name", .string)
          Relationship("employees", to: "User", many: true, inverse: "company")
        }
        Entity("Tag", identity: ["name"]) {
          Attribute("name", .string)
        }
        Entity("Note") {
          Attribute("text", .string)
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  /// Applies each JSON payload as one batch of `entity` and returns the ledger.
  func ledger(_ payloads: [JSONValue], entity: String = "User", strict: Bool = false) throws -> (
    Ledger, TemporaryDirectory
  ) {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    for payload in payloads {
      var batch = ledger.makeBatch()
      try batch.stage(payload, as: entity, options: StagingOptions(strict: strict))
      _ = try ledger.applySynchronously(batch)
    }
    return (ledger, directory)
  }

  func user(_ payloads: [JSONValue]) throws -> ObjectSnapshot? {
    let (ledger, directory) = try ledger(payloads)
    defer { withExtendedLifetime(directory) {} }
    return try ledger.read { view in try view.object("User", key: 1) }
  }

  @Test(
    arguments: [
      ("first_name", "firstName"), ("firstName", "firstName"), ("FirstName", "firstName"), ("first-name", nil),
    ] as [(String, String?)])
  func keysMatchCaseInsensitivelyWithUnderscoresRemoved(key: String, attribute: String?) throws {
    var payload: JSONObject = ["id": 1]
    payload[key] = "Ada"
    let object = try user([.object(payload)])
    if let attribute { #expect(object?[attribute] == .string("Ada")) } else { #expect(object?["firstName"] == nil) }
  }

  @Test func acronymKeysFindTheirAttribute() throws {
    let object = try user([["id": 1, "list_image_url": "https://example.org/a.png"]])
    #expect(object?["listImageURL"] == .url(URL(string: "https://example.org/a.png")!))
  }

  @Test func reservedWordsMapToTheEntityQualifiedAttribute() throws {
    let object = try user([["id": 1, "description": "admin user", "type": "staff"]])
    #expect(object?["userDescription"] == .string("admin user"))
    #expect(object?["userType"] == .string("staff"))
  }

  @Test func idFeedsRemoteIDWhenTheModelHasNoID() throws {
    let object = try user([["id": 1]])
    #expect(object?["remoteID"] == .integer(1))
  }

  @Test func customKeysAndKeyPaths() throws {
    let object = try user([["id": 1, "nick": "A", "address": ["city": "Oslo", "zip": "0150"]]])
    #expect(object?["nickname"] == .string("A"))
    #expect(object?["city"] == .string("Oslo"))
  }

  @Test func missingKeyLeavesTheFieldAndNullClearsIt() throws {
    let kept = try user([["id": 1, "first_name": "Ada", "age": 36], ["id": 1, "age": 37]])
    #expect(kept?["firstName"] == .string("Ada"))
    #expect(kept?["age"] == .integer(37))
    let cleared = try user([["id": 1, "first_name": "Ada"], ["id": 1, "first_name": nil]])
    #expect(cleared?["firstName"] == nil)
  }

  @Test(
    arguments: [
      ("age", "36" as JSONValue, AttributeValue.integer(36)),
      ("age", 36, .integer(36)),
      ("age", 36.0, .integer(36)),
      ("score", "12.5", .double(12.5)),
      ("price", "12.20", .decimal(Decimal(string: "12.20")!)),
      ("price", 0.1, .decimal(Decimal(string: "0.1")!)),
      ("isActive", "yes", .bool(true)),
      ("isActive", "False", .bool(false)),
      ("isActive", 1, .bool(true)),
      ("isActive", 0, .bool(false)),
      ("firstName", 42, .string("42")),
      (
        "token", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
      ),
      ("avatar", "AQID", .binary(Data([1, 2, 3]))),
      ("settings", ["theme": "dark"] as JSONValue, .json(["theme": "dark"])),
    ] as [(String, JSONValue, AttributeValue)])
  func valuesAreCoercedToTheAttributeType(key: String, value: JSONValue, expected: AttributeValue) throws {
    var payload: JSONObject = ["id": 1]
    payload[KeyInflection.snakeCased(key)] = value
    let object = try user([.object(payload)])
    #expect(object?[key] == expected)
  }

  @Test(
    arguments: [
      ("age", "20x" as JSONValue, "is not a whole number"),
      ("age", 70_000, "out of range for int16"),
      ("age", 1.5, "is not a whole number"),
      ("age", " 12", "is not a whole number"),
      ("score", "0x10", "is not a number"),
      ("isActive", "maybe", "is not a boolean"),
      ("isActive", 2, "is not a boolean"),
      ("born", "yesterday", "is not a date"),
      ("token", "not-a-uuid", "is not a UUID"),
      ("firstName", ["a"] as JSONValue, "expected a string"),
    ] as [(String, JSONValue, String)])
  func badValuesAreErrorsNamingPathValueAndReason(key: String, value: JSONValue, reason: String) throws {
    var payload: JSONObject = ["id": 1]
    payload[KeyInflection.snakeCased(key)] = value
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    do {
      try batch.stage(.array([.object(payload)]), as: "User")
      #expect(batch.problems.count == 1)
      _ = try ledger.applySynchronously(batch)
      Issue.record("accepted \(value)")
    } catch {
      guard let error = (error as? LedgerError)?.mapping else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(error.problems.count == 1)
      #expect(error.problems[0].entity == "User")
      #expect(error.problems[0].path == "[0].\(KeyInflection.snakeCased(key))")
      #expect(error.problems[0].reason.contains(reason), "\(error.problems[0].reason)")
    }
    #expect(try ledger.head == 0)
  }

  @Test func everyBadObjectIsListedNotJustTheFirst() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "age": "x"], ["first_name": "no id"], ["id": 3, "born": "never"]], as: "User")
    #expect(batch.problems.map(\.path) == ["[0].age", "[1]", "[2].born"])
    #expect {
      try ledger.applySynchronously(batch)
    } throws: { error in
      guard let mapping = (error as? LedgerError)?.mapping else { return false }
      return mapping.problems.map(\.path) == ["[0].age", "[1]", "[2].born"]
    }
    #expect(try ledger.head == 0)
  }

  @Test(
    arguments: [
      ("2014-01-02", 1_388_620_800_000_000),
      ("2016-01-09T12:40:08", 1_452_343_208_000_000),
      ("2009-10-09 12:40:08", 1_255_092_008_000_000),
      ("2014-03-30T09:13:10Z", 1_396_170_790_000_000),
      ("2014-01-01T12:40:08+00:00", 1_388_580_008_000_000),
      ("2016-07-16T01:32:00-04:00", 1_468_647_120_000_000),
      ("2015-06-23T19:04:19.911Z", 1_435_086_259_911_000),
      ("2017-12-22T18:10:14.07Z", 1_513_966_214_070_000),
      ("2015-06-23T14:40:08.123+02:00", 1_435_063_208_123_000),
      ("2015-09-10T12:40:08.123+0200", 1_441_881_608_123_000),
      ("2015-09-10T12:40:08.123456Z", 1_441_888_808_123_456),
      ("2015-09-10T12:40:08.123456789Z", 1_441_888_808_123_457),
      ("20000822T132800Z", 966_950_880_000_000),
      ("1441888808", 1_441_888_808_000_000),
      ("1441888808.5", 1_441_888_808_500_000),
      ("1441888808123", 1_441_888_808_123_000),
    ] as [(String, Int64)])
  func dateShapesParseToTheMicrosecond(text: String, microseconds: Int64) throws {
    let date = try #require(DateCoding.date(from: .string(text)))
    #expect(DateCoding.microseconds(date) == microseconds)
  }

  @Test func unixNumbersAreSecondsOrMilliseconds() throws {
    #expect(DateCoding.microseconds(try #require(DateCoding.date(from: 1_441_888_808))) == 1_441_888_808_000_000)
    #expect(DateCoding.microseconds(try #require(DateCoding.date(from: 1_441_888_808_123))) == 1_441_888_808_123_000)
  }

  @Test(arguments: [
    "2014-13-02", "2014-02-30", "2014-01-02T25:00", "2014-01-02T12:40:08+", "hello", "", "2014-01-02T12:40:08.Z",
  ])
  func malformedDatesAreRejected(text: String) {
    #expect(DateCoding.date(from: .string(text)) == nil)
  }

  @Test(arguments: [
    (DateFormat.iso8601, "2015-06-23T19:04:19.911Z"), (.iso8601Basic, "20150623T190419.911Z"),
  ])
  func datesAreExportedInTheModelsFormatInUTC(format: DateFormat, expected: String) throws {
    let date = try #require(DateCoding.date(from: "2015-06-23T21:04:19.911+02:00"))
    #expect(DateCoding.string(from: date, format: format) == expected)
    #expect(
      DateCoding.jsonValue(from: DateCoding.date(microseconds: 1_000_500_000), format: .unix)
        == .number(JSONNumber(validLiteral: "1000.5")))
  }

  @Test func writtenDatesParseBackToTheSameMicrosecond() throws {
    var generator = SystemRandomNumberGenerator()
    // Whole seconds over years 1 to 9999; microseconds over 1900-2100 (a `Date` is a Double
    // of seconds since 2001, exact to the microsecond only within a few centuries of it).
    for index in 0..<2_000 {
      let micros: Int64
      if index % 2 == 0 {
        micros = Int64.random(in: -62_135_596_800...253_402_300_799, using: &generator) * 1_000_000
      } else {
        micros = Int64.random(in: -2_208_988_800_000_000...4_102_444_799_999_999, using: &generator)
      }
      for format in [DateFormat.iso8601, .iso8601Basic] {
        let text = DateCoding.string(from: DateCoding.date(microseconds: micros), format: format)
        let parsed = try #require(DateCoding.date(from: .string(text)), "\(text) does not parse")
        #expect(DateCoding.microseconds(parsed) == micros, "\(text)")
      }
    }
    #expect(
      DateCoding.string(from: DateCoding.date(microseconds: -1), format: .iso8601) == "1969-12-31T23:59:59.999999Z")
    #expect(
      DateCoding.string(from: DateCoding.date(microseconds: 86_400_050_000), format: .iso8601)
        == "1970-01-02T00:00:00.05Z")
  }

  @Test(arguments: [
    ("listImageURL", "list_image_url"), ("URLPath", "url_path"), ("userID", "user_id"), ("line2Text", "line2_text"),
    ("firstName", "first_name"), ("id", "id"), ("userIDFirst", "user_id_first"), ("createdAt", "created_at"),
  ])
  func snakeCaseKeepsAnAcronymRunAsOneWord(name: String, key: String) {
    #expect(KeyInflection.snakeCased(name) == key)
  }

  @Test func toOneByKeyToManyByNestedObjectsAndInversesOnBothSides() throws {
    let (ledger, directory) = try ledger([
      [["id": 1, "company": "acme", "tags": [["name": "b"], ["name": "a"]]], ["id": 2, "company_id": "acme"]]
    ])
    defer { withExtendedLifetime(directory) {} }
    try ledger.read { view throws in
      let acme = try #require(try view.object("Company", key: "acme"))
      #expect(Set(try view.related(acme, "employees").map(\.key.identity)) == [[.integer(1)], [.integer(2)]])
      #expect(try view.count("Tag") == 2)
      let one = try #require(try view.object("User", key: 1))
      #expect(one.relationships["tags"]?.count == 2)
    }
  }

  @Test func referencesResolveInsideTheBatchInAnyOrder() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "company": "acme"]], as: "User")
    try batch.stage([["id": "acme", "name": "Acme Inc."]], as: "Company")
    let summary = try ledger.applySynchronously(batch)
    #expect(summary.created == 2)
    try ledger.read { view throws in
      let user = try #require(try view.object("User", key: 1))
      #expect(try view.related(user, "company").first?["name"] == .string("Acme Inc."))
    }
  }

  @Test func unknownReferenceCreatesAStubUnlessStrict() throws {
    let (ledger, directory) = try ledger([[["id": 1, "company": "ghost"]]])
    defer { withExtendedLifetime(directory) {} }
    let stub = try ledger.read { view in try view.object("Company", key: "ghost") }
    #expect(stub?.attributes == ["id": .string("ghost")])
    let strictDirectory = try TemporaryDirectory()
    let strictLedger = try Ledger.open(at: strictDirectory.storePath, model: Self.model)
    var batch = strictLedger.makeBatch()
    try batch.stage([["id": 1, "company": "ghost"]], as: "User", options: StagingOptions(strict: true))
    // Strict per collection: the same payload staged without it makes a stub.
    var lenient = strictLedger.makeBatch()
    try lenient.stage([["id": 1, "company": "ghost"]], as: "User")
    #expect(throws: LedgerError.self) { try strictLedger.applySynchronously(batch) }
    #expect(try strictLedger.head == 0)
    #expect(try strictLedger.applySynchronously(lenient).created == 2)
  }

  @Test func nullUnlinksAToOneAndEmptiesAToMany() throws {
    let (ledger, directory) = try ledger([
      [["id": 1, "company": "acme", "tags": ["a", "b"]]],
      [["id": 1, "company": nil, "tags": nil]],
    ])
    defer { withExtendedLifetime(directory) {} }
    try ledger.read { view throws in
      let user = try #require(try view.object("User", key: 1))
      #expect(user.relationships["company"] == [])
      #expect(user.relationships["tags"] == [])
      #expect(try view.count("Tag") == 2)  // unlinked, not deleted
      let acme = try #require(try view.object("Company", key: "acme"))
      #expect(acme.relationships["employees"] == [])
    }
  }

  @Test func identityIsCoercedSoStringAndNumberKeysAreTheSameObject() throws {
    let (ledger, directory) = try ledger([[["id": 1, "first_name": "A"]], [["id": "1", "age": 3]]])
    defer { withExtendedLifetime(directory) {} }
    #expect(try ledger.read { view in try view.count("User") } == 1)
    #expect(try ledger.read { view in try view.object("User", key: "1")?["firstName"] } == .string("A"))
  }

  @Test func sameKeyTwiceInOneBatchMergesInDocumentOrderAndCountsOnce() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "first_name": "A", "age": 1], ["id": 1, "first_name": "B"]], as: "User")
    let summary = try ledger.applySynchronously(batch)
    #expect(summary.created == 1)
    let user = try ledger.read { view in try view.object("User", key: 1) }
    #expect(user?["firstName"] == .string("B"))
    #expect(user?["age"] == .integer(1))
  }

  @Test func entityWithoutIdentityIsInsertOnly() throws {
    let (ledger, directory) = try ledger([[["text": "a"], ["text": "a"]], [["text": "a"]]], entity: "Note")
    defer { withExtendedLifetime(directory) {} }
    #expect(try ledger.read { view in try view.count("Note") } == 3)
  }

  @Test func unmatchedKeysAreIgnoredAndReported() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "shoe_size": 44]], as: "User")
    let summary = try ledger.applySynchronously(batch)
    #expect(summary.ignoredKeys == ["User.shoe_size"])
  }

  @Test func pruneDeletesWhatThePayloadOmitsAndUnlinksIt() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var first = ledger.makeBatch()
    try first.stage([["id": 1, "company": "acme"], ["id": 2, "company": "acme"]], as: "User")
    _ = try ledger.applySynchronously(first)
    var second = ledger.makeBatch()
    try second.stage([["id": 2]], as: "User", options: StagingOptions(prune: true))
    let summary = try ledger.applySynchronously(second)
    #expect(summary.deleted == 1)
    try ledger.read { view throws in
      #expect(try view.object("User", key: 1) == nil)
      let acme = try #require(try view.object("Company", key: "acme"))
      #expect(acme.relationships["employees"]?.count == 1)
    }
    #expect(try ledger.verify().batches == 2)
  }

  @Test(
    arguments: [
      (Operations.insert, 3, "old"), (.update, 2, "new"), ([.insert, .update], 3, "new"), (.delete, 1, "old"),
    ] as [(Operations, Int, String)])
  func operationSubsetsLimitWhatAStagedCollectionDoes(operations: Operations, count: Int, name: String) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    var first = ledger.makeBatch()
    try first.stage([["id": 0, "first_name": "old"], ["id": 1]], as: "User")
    _ = try ledger.applySynchronously(first)
    var second = ledger.makeBatch()
    try second.stage(
      [["id": 0, "first_name": "new"], ["id": 6]], as: "User", options: StagingOptions(operations: operations))
    _ = try ledger.applySynchronously(second)
    try ledger.read { view throws in
      #expect(try view.count("User") == count)
      #expect(try view.object("User", key: 0)?["firstName"] == .string(name))
    }
  }
}
