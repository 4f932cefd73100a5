import Testing

@testable import JSONLedger

@Suite("Identity values gathered by position")
struct IdentityValuesTests {
  @Test func valuesComeInPositionOrderAndAMissingOneMakesNone() {
    let values: [AttributeValue?] = [.string("a"), .integer(2), nil]
    #expect([AttributeValue].identity(count: 0) { values[$0] } == [])
    #expect([AttributeValue].identity(count: 1) { values[$0] } == [.string("a")])
    #expect([AttributeValue].identity(count: 2) { values[$0] } == [.string("a"), .integer(2)])
    #expect([AttributeValue].identity(count: 3) { values[$0] } == nil)
    #expect([AttributeValue].identity(count: 1) { _ in nil } == nil)
  }
}
