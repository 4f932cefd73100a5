import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Numbers and dates beyond their type are errors, never rounded or trapped")
struct NumberRangeTests {
  static func coerce(_ json: String, _ type: AttributeType) throws -> AttributeValue? {
    try ValueCoercion.coerce(JSONParser.parse(Array(json.utf8)), to: type).get()
  }

  @Test(arguments: [
    ("32768", AttributeType.int16), ("-32769", .int16), ("2147483648", .int32), ("9223372036854775808", .int64),
    ("1e20", .int64), ("-9223372036854775809", .int64), ("1.5", .int64), ("3.4e39", .float), ("1e309", .double),
    ("-1e309", .double), ("1234567890123456789012345678901234567890", .decimal), ("\"0000-06-01\"", .date),
    ("\"0000-01-01T00:00:00Z\"", .date), ("1e21", .date),
  ])
  func aValueBeyondItsTypeIsAnError(json: String, type: AttributeType) {
    #expect(throws: CoercionFailure.self) { try Self.coerce(json, type) }
  }

  @Test(arguments: [
    ("9007199254740993.0", AttributeType.int64, AttributeValue.integer(9_007_199_254_740_993)),
    ("1.5e3", .int64, .integer(1500)), ("-9223372036854775808", .int64, .integer(.min)),
    ("-92233720368547758.08e2", .int64, .integer(.min)), ("32767", .int16, .integer(32767)),
    ("3.4e38", .float, .float(3.4e38)), ("-0.0", .double, .double(0)), ("-0", .float, .float(0)),
    (
      "12345678901234567890123456789012345678", .decimal,
      .decimal(Decimal(string: "12345678901234567890123456789012345678")!)
    ),
    ("\"0001-01-01T00:00:00Z\"", .date, .date(Date(timeIntervalSince1970: -62_135_596_800))),
  ])
  func aValueWithinItsTypeIsKeptExactly(json: String, type: AttributeType, expected: AttributeValue) throws {
    #expect(try Self.coerce(json, type) == expected)
  }

  @Test func minusZeroAndZeroAreOneIdentity() throws {
    let model = try Model {
      Entity("Point", identity: ["x"]) {
        Attribute("x", .double)
        Attribute("label", .string)
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage(json: Array(#"[{"x": 0, "label": "a"}, {"x": -0.0, "label": "b"}]"#.utf8), as: "Point")
    let summary = try ledger.applySynchronously(batch)
    #expect(summary.created == 1)
    #expect(try ledger.read { view in try view.object("Point", key: -0.0)?["label"] } == .string("b"))
  }
}
