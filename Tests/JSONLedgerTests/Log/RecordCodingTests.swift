import Foundation
import Testing

@testable import JSONLedger

@Suite("Change record encoding")
struct RecordCodingTests {
  private var record: ChangeRecord {
    let user = ObjectChange(
      objectID: 3, entity: "User", identity: [.integer(7)], kind: .updated,
      attributes: [
        AttributeChange(name: "age", old: .integer(39), new: .integer(40)),
        AttributeChange(name: "firstName", old: nil, new: .string("Ada")),
        AttributeChange(name: "notInTheModel", old: .bool(true), new: nil),
        AttributeChange(name: "userType", old: .string("a"), new: .string("b")),
      ],
      links: [LinkChange(relationshipID: 1, added: [4, 9], removed: [2])])
    let stranger = ObjectChange(
      objectID: 4, entity: "NotInTheModel", identity: [.string("k")], kind: .created,
      attributes: [AttributeChange(name: "age", old: nil, new: .integer(1))], links: [])
    var statistics = ChangeRecord.Statistics()
    statistics.updated = 1
    statistics.created = 1
    return ChangeRecord(
      batchID: 12, time: Date(timeIntervalSince1970: 1_700_000_000), kind: .import,
      metadata: ChangeRecord.Metadata(message: "m", author: "a"), statistics: statistics, changes: [user, stranger])
  }

  @Test func aRecordDecodesToItselfWithOrWithoutTheModel() throws {
    let bytes = RecordCoding.encode(record)
    #expect(try RecordCoding.decode(bytes) == record)
    #expect(try RecordCoding.decode(bytes, model: MappingRuleTests.model) == record)
  }

  @Test func aFlippedByteFailsTheChecksum() {
    var bytes = RecordCoding.encode(record)
    bytes[bytes.count / 2] ^= 0x10
    #expect(throws: RecordCoding.Failure.self) { try RecordCoding.decode(bytes, model: MappingRuleTests.model) }
  }
}
