import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// `PackedState`: a created object's state held as the bytes the store keeps, which reads
/// back as the state, and which the record and the projector take as they are.
@Suite("A created object's state held packed")
struct PackedStateTests {
  static let model: Model = {
    do {
      return try Model {
        Entity("Album", identity: ["name", "year"]) {
          Attribute("name", .string)
          Attribute("year", .int32)
          Attribute("rating", .double)
          Attribute("weight", .float)
          Attribute("price", .decimal)
          Attribute("live", .bool)
          Attribute("released", .date)
          Attribute("code", .uuid)
          Attribute("page", .url)
          Attribute("cover", .binary)
          Attribute("notes", .json)
          Attribute("alias", .string)
          Relationship("band", to: "Band", inverse: "albums")
        }
        Entity("Band", identity: ["name"]) {
          Relationship("members", to: "Musician", many: true, ordered: true, inverse: "bands")
          Relationship("albums", to: "Album", many: true, inverse: "band")
          Attribute("name", .string)
        }
        Entity("Musician", identity: ["name"]) {
          Attribute("name", .string)
          Relationship("bands", to: "Band", many: true, inverse: "members")
          Relationship("favourite", to: "Album")
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  static func id(_ entity: String, _ sequence: UInt64) -> UInt64 {
    ObjectIDs.make(root: model.resolved(entity)?.rootID ?? 0, sequence: sequence)
  }

  /// An album with a value of every type (one equal to an identity value, one not in the
  /// model), its band, and a musician's hidden reverse link to it as a favourite.
  static func album() throws -> ObjectState {
    let album = try #require(model.resolved("Album"))
    let favourite = try #require(model.resolved("Musician")?.relationshipIndex["favourite"])
    var state = ObjectState(entity: "Album", identity: [.string("Tin Drum"), .integer(1981)])
    state.attributes = [
      "name": .string("Tin Drum"), "year": .integer(1981), "rating": .double(4.5), "weight": .float(0.25),
      "price": .decimal(Decimal(string: "12.99")!), "live": .bool(false),
      "released": .date(Date(timeIntervalSince1970: 374_371_200.25)),
      "code": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
      "page": .url(URL(string: "https://example.com/tin-drum")!), "cover": .binary(Data([0, 1, 2, 255])),
      "notes": .json(["tracks": 8, "side": ["A", "B"]]), "alias": .string("Tin Drum"),
      "discontinued": .string("not in the model"),
    ]
    state.links[try #require(album.relationshipIndex["band"]).id] = [id("Band", 7)]
    state.links[favourite.id | ResolvedRelationship.hiddenReverseBit] = [id("Musician", 9), id("Musician", 3)]
    return state
  }

  static func band() throws -> ObjectState {
    let band = try #require(model.resolved("Band"))
    var state = ObjectState(entity: "Band", identity: [.string("Japan")])
    state.attributes = ["name": .string("Japan")]
    state.links[try #require(band.relationshipIndex["albums"]).id] = LinkTargets(
      [id("Album", 2), id("Album", 1)].sorted())
    // Ordered: kept in its order.
    state.links[try #require(band.relationshipIndex["members"]).id] = [id("Musician", 5), id("Musician", 4)]
    return state
  }

  @Test func aPackedStateReadsBackAsItsStateAndIsTheBytesTheStoreKeeps() throws {
    var scratch = BinaryWriter()
    for state in [try Self.album(), try Self.band()] {
      let entity = try #require(PackedState.entity(packing: state, model: Self.model))
      let packed = PackedState(state, entity: entity, scratch: &scratch)
      #expect(packed.state == state)
      #expect(packed.identity == state.identity)
      #expect(packed.layout.attributeCount == state.attributes.count)
      #expect(packed.layout.listCount == state.links.count)
      var stored = BinaryWriter()
      StateCoding.write(state, since: 300, model: Self.model, into: &stored)
      var written = BinaryWriter()
      packed.write(since: 300, into: &written)
      #expect(written.bytes == stored.bytes)
    }
  }

  /// The projector writes an object created for the first time from its change's lists, with
  /// no state made of them: the bytes of the state that applying the change to nothing makes.
  @Test func aCreationsStateIsWrittenFromItsChangeAsFromTheStateItMakes() throws {
    for (objectID, state) in [(Self.id("Album", 1), try Self.album()), (Self.id("Band", 7), try Self.band())] {
      let change = try #require(ObjectChange(objectID: objectID, before: nil, after: state, model: Self.model))
      guard case .whole(let attributes, isNew: true) = change.changedAttributes,
        case .whole(let links, isNew: true, _) = change.changedLinks
      else {
        Issue.record("a creation holds its state's lists whole")
        continue
      }
      var applied = ObjectState(entity: change.entity, identity: change.identity)
      applied.apply(change)
      #expect(applied == state)
      var fromState = BinaryWriter()
      StateCoding.write(applied, since: 300, model: Self.model, into: &fromState)
      var fromChange = BinaryWriter()
      StateCoding.write(
        entity: change.entity, Self.model.resolved(change.entity), identity: change.identity, attributes: attributes,
        links: links, since: 300, into: &fromChange)
      #expect(fromChange.bytes == fromState.bytes)
    }
  }

  /// A packed creation says what the same creation holding its state's lists says, and a
  /// record writes the two alike.
  @Test func aPackedCreationIsTheCreationOfItsState() throws {
    var scratch = BinaryWriter()
    for (objectID, state) in [(Self.id("Album", 1), try Self.album()), (Self.id("Band", 7), try Self.band())] {
      let entity = try #require(PackedState.entity(packing: state, model: Self.model))
      let packed = PackedState(state, entity: entity, scratch: &scratch)
      let change = ObjectChange(objectID: objectID, created: packed, payloadFingerprint: 77)
      var whole = try #require(ObjectChange(objectID: objectID, before: nil, after: state, model: Self.model))
      whole.payloadFingerprint = 77
      #expect(change == whole)
      #expect(change.identity == state.identity)
      #expect(change.attributes == whole.attributes)
      #expect(change.links == whole.links)
      #expect(change.inverted == whole.inverted)
      #expect(change.createdState == state)
      func encoded(_ change: ObjectChange) -> [UInt8] {
        RecordCoding.encode(
          ChangeRecord(
            batchID: 3, time: Date(timeIntervalSince1970: 0), kind: .import, metadata: .init(),
            statistics: .init(), changes: [change]))
      }
      #expect(encoded(change) == encoded(whole))
      // Changing a part holds the rest as lists again, with the identity.
      var renamed = change
      renamed.links = []
      #expect(renamed.identity == state.identity)
      #expect(renamed.attributes == whole.attributes)
      renamed.identity = [.string("Quiet Life")]
      #expect(renamed.identity == [.string("Quiet Life")])
    }
  }

  @Test func aStateThatWouldNotReadBackIsNotPacked() throws {
    var emptied = try Self.band()
    emptied.links[try #require(Self.model.resolved("Band")?.relationshipIndex["albums"]).id] = []
    #expect(PackedState.entity(packing: emptied, model: Self.model) == nil)
    #expect(PackedState.entity(packing: ObjectState(entity: "Label", identity: []), model: Self.model) == nil)
  }
}
