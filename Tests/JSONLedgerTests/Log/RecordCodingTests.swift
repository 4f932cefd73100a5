import Foundation
import JSONLedgerJSON
import JSONLedgerTestSupport
import PropertyBased
import Testing

@_spi(Replication) @testable import JSONLedger

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

  /// A record of more than a part is written in parts, checksummed across them: joined,
  /// or copied part by part into room of its size, they are the one record.
  @Test func aLargeRecordIsWrittenInPartsThatReadBackAsOneRecord() throws {
    let changes = (0..<30_000).map { index in
      ObjectChange(
        objectID: ObjectIDs.make(root: 2, sequence: UInt64(index + 1)), entity: "Album",
        identity: [.string("album number \(index)")], kind: .created,
        attributes: [AttributeChange(name: "label", old: nil, new: .string("a label of some length \(index)"))],
        links: [])
    }
    let large = ChangeRecord(
      batchID: 3, time: Date(timeIntervalSince1970: 1_700_000_000), kind: .import, metadata: .init(),
      statistics: .init(), changes: changes)
    var encoded = RecordCoding.encodeInParts(large)
    #expect(encoded.parts.count > 1)
    #expect(encoded.parts.dropLast().allSatisfy { $0.count >= EncodedRecord.partSize })
    let joined = encoded.joined
    #expect(joined.count == encoded.count)
    #expect(try RecordCoding.batchID(ofEncoded: joined) == 3)
    #expect(try RecordCoding.decode(joined) == large)
    var room = [UInt8](repeating: 0, count: encoded.count)
    room.withUnsafeMutableBytes { encoded.drain(into: $0) }
    #expect(room == joined)
    #expect(encoded.parts.isEmpty)
    // A small record is one part, joined without a copy.
    #expect(RecordCoding.encodeInParts(record).parts.count == 1)
  }

  /// Reading one object's change walks past the others without building them (an object's
  /// history in a batch of 100,000 changes): what it gives is what the whole record holds for
  /// that object, for values of every type, identities referred to, and both kinds of link.
  @Test func oneObjectsChangeReadAloneIsTheWholeRecordsChangeOfIt() async {
    let palette: [AttributeValue] = [
      .string("text"), .string(""), .integer(-5), .double(2.5), .float(1.5), .decimal(Decimal(string: "12.30")!),
      .bool(true), .bool(false), .date(Date(timeIntervalSince1970: 375_000_000.25)),
      .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .url(URL(string: "https://example.com/a")!),
      .binary(Data([0, 1, 2])), .json(["a": [1, "two", nil, true]]),
    ]
    await propertyCheck(count: 200, input: Gen.int(in: 0...4095).array(of: 1...10)) { picks in
      let changes = picks.enumerated().map { offset, pick -> ObjectChange in
        let identity: [AttributeValue] = [.string("object \(pick % 7)")]
        let attributes = (0..<(pick % 4)).map { index in
          AttributeChange(
            name: "field\(index)", old: pick & 16 == 0 ? nil : palette[(pick + index) % palette.count],
            // An attribute equal to the identity is written as a reference to it.
            new: index == 0 ? identity[0] : palette[(pick / 3 + index) % palette.count])
        }
        let links =
          pick & 32 == 0
          ? [LinkChange(relationshipID: 1, added: [UInt64(pick) + 1, 9], removed: [2])]
          : [LinkChange(relationshipID: 2, from: [4], to: [UInt64(pick) + 2, 4], isOrdered: true)]
        return ObjectChange(
          objectID: UInt64(offset * 3 + 1), entity: ["User", "Album"][pick & 1], identity: identity,
          kind: pick & 64 == 0 ? .updated : .created, attributes: attributes, links: pick & 128 == 0 ? links : [])
      }
      let record = ChangeRecord(
        batchID: 2, time: Date(timeIntervalSince1970: 1_700_000_000), kind: .import,
        metadata: ChangeRecord.Metadata(), statistics: ChangeRecord.Statistics(), changes: changes, modelVersion: 1)
      let bytes = RecordCoding.encode(record)
      for id in changes.map(\.objectID) + [2, 1_000] {
        let alone = try? RecordCoding.decode(bytes, changes: .ofObject(id))
        #expect(alone?.changes == changes.filter { $0.objectID == id })
        #expect(alone?.batchID == 2 && alone?.metadata == record.metadata)
      }
    }
  }

  @Test func aRecordDecodesToItselfWithOrWithoutTheModel() throws {
    let bytes = RecordCoding.encode(record)
    #expect(try RecordCoding.decode(bytes) == record)
    #expect(try RecordCoding.decode(bytes, model: MappingRuleTests.model) == record)
  }

  /// Changes of a few entities, each listing its own subset of a few names (as a whole
  /// creation's or deletion's list, or as listed changes): any mix decodes to itself. The
  /// encoder first tries each name against the one at its place in the last change of the
  /// same entity.
  @Test func changesListingDifferentNamesForOneEntityDecodeToThemselves() async {
    let names = ["age", "firstName", "label", "name", "released"]
    let entities = ["User", "Album", "NotInTheModel"]
    await propertyCheck(count: 200, input: Gen.int(in: 0...255).array(of: 1...12)) { picks in
      let changes = picks.enumerated().compactMap { offset, pick -> ObjectChange? in
        let entity = entities[pick % 3]
        var list = AttributeList()
        for (bit, name) in names.enumerated() where (pick >> (bit + 3)) & 1 == 1 { list[name] = .integer(Int64(bit)) }
        let state = ObjectState(entity: entity, identity: [.integer(Int64(offset))], attributes: list)
        let id = UInt64(offset + 1)
        switch (pick >> 1) & 3 {
        case 0: return ObjectChange(objectID: id, before: nil, after: state, model: MappingRuleTests.model)
        case 1: return ObjectChange(objectID: id, before: state, after: nil, model: MappingRuleTests.model)
        default:
          return ObjectChange(
            objectID: id, entity: entity, identity: state.identity, kind: .updated,
            attributes: list.map { AttributeChange(name: $0.key, old: .bool(true), new: $0.value) }, links: [])
        }
      }
      let record = ChangeRecord(
        batchID: 2, time: Date(timeIntervalSince1970: 1_700_000_000), kind: .import,
        metadata: ChangeRecord.Metadata(), statistics: ChangeRecord.Statistics(), changes: changes, modelVersion: 1)
      #expect((try? RecordCoding.decode(RecordCoding.encode(record))) == record)
    }
  }

  @Test func aFlippedByteFailsTheChecksum() {
    var bytes = RecordCoding.encode(record)
    bytes[bytes.count / 2] ^= 0x10
    #expect(throws: RecordCoding.Failure.self) { try RecordCoding.decode(bytes, model: MappingRuleTests.model) }
  }
}

@Suite("A new record as the log keeps it")
struct AppendedRecordTests {
  /// The log's record is encoded change by change while the projector folds it, in
  /// ascending object id order: objects stored before the batch, then those it created. Its
  /// bytes are those of the record it decodes to, encoded whole; a large one too.
  @Test(arguments: [3, 20_000])
  func aNewRecordListsItsChangesByObjectIDAndEncodesAsItDecodes(albums: Int) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Fixtures.bandsModel())
    var first = ledger.makeBatch()
    try first.stage([["name": "Japan", "formed": 1974], ["name": "Can", "formed": 1968]], as: "Band")
    _ = try ledger.applySynchronously(first)
    // New albums staged before the stored bands they change.
    var second = ledger.makeBatch()
    try second.stage(
      .array(
        (0..<albums).map {
          .object(["name": .string("album \($0)"), "label": .string("a label of some length \($0)")])
        }),
      as: "Album")
    try second.stage([["name": "Can", "formed": 1969], ["name": "Japan", "formed": 1975]], as: "Band")
    let summary = try ledger.applySynchronously(second)
    let record = try ledger.record(summary.batchID)
    let ids = record.changes.map(\.objectID)
    #expect(ids == ids.sorted())
    #expect(record.changes.prefix(2).map(\.entity) == ["Band", "Band"])
    #expect(record.changes.count == albums + 2)
    let stored = try ledger.encodedRecord(summary.batchID)
    #expect(stored == RecordCoding.encode(record))
    #expect((stored.count > EncodedRecord.partSize) == (albums > 3))
  }
}
