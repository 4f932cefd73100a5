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
    // Ids of two roots, an identity value repeated as an attribute, an ordered list.
    let album = ObjectChange(
      objectID: ObjectIDs.make(root: 2, sequence: 5), entity: "Album", identity: [.string("Tin Drum")], kind: .created,
      attributes: [
        AttributeChange(name: "name", old: nil, new: .string("Tin Drum")),
        AttributeChange(name: "released", old: nil, new: .date(Date(timeIntervalSince1970: 375_000_000))),
        AttributeChange(name: "updated", old: nil, new: .date(Date(timeIntervalSince1970: 375_000_000.25))),
      ],
      links: [
        LinkChange(
          relationshipID: 3, from: [],
          to: [ObjectIDs.make(root: 1, sequence: 9), ObjectIDs.make(root: 1, sequence: 2)],
          isOrdered: true)
      ])
    return ChangeRecord(
      batchID: 12, time: Date(timeIntervalSince1970: 1_700_000_000), kind: .import,
      metadata: ChangeRecord.Metadata(message: "m", author: "a"), statistics: statistics,
      changes: [user, stranger, album], modelVersion: 3)
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
