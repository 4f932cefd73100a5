import JSONLedgerSupport
import JSONLedgerTestSupport
import PropertyBased
import Testing

@testable import JSONLedger

/// A mapped object holds its attributes and relationships in one block of fixed room, grown
/// and copied by hand: it must hold what arrays would, in order, whatever its room, and a
/// change to one copy must never show in another.
@Suite("A mapped object's fields in one block")
struct MappedObjectTests {
  /// Bands and albums, an album's band a to-one relationship (given to-many values too here:
  /// a mapped object holds what it is given).
  static var model: Model { ShrinkingHistoryTests.model }

  /// What an object holds, as text: each attribute, then each relationship with the keys or
  /// nested names it points to.
  static func contents(of object: MappedObject) -> [String] {
    var parts = object.attributes.map { "\($0.name) = \(String(describing: $0.value))" }
    for named in object.relationships {
      let targets: [String] =
        switch named.value {
        case .clear: []
        case .toOne(let reference): [describe(reference)]
        case .toMany(let references): references.map(describe)
        }
      parts.append("\(named.relationship.name) -> \(targets)")
    }
    parts.append("identity \(String(describing: object.identity)), key only \(object.isKeyOnly)")
    return parts
  }

  static func describe(_ reference: ObjectReference) -> String {
    switch reference {
    case .key(_, let value, _): "key \(value)"
    case .object(let nested): "object \(contents(of: nested.object))"
    }
  }

  /// Any run of appends, copies, changes to a copy, and reads of a kept view leaves every
  /// object holding what the same steps leave in arrays (rooms from none on, so that every
  /// list grows, and a nested object among the relationships, so that blocks hold blocks).
  @Test func holdsWhatArraysWouldWhateverItsRoomAndItsCopies() async throws {
    let album = try #require(Self.model.resolved("Album"))
    let band = try #require(Self.model.resolved("Band"))
    let relationships = album.relationships
    await propertyCheck(count: 300, input: Gen.int(in: 0...999).array(of: 0...40)) { steps in
      let first = steps.first ?? 0
      var objects = [
        MappedObject(entity: album, path: "albums[0]", attributeRoom: first % 3, relationshipRoom: first / 3 % 3)
      ]
      var expected: [[String]] = [[]]
      var identities: [[AttributeValue]?] = [nil]
      var keyOnly = [false]
      var kept: (view: MappedObject.Attributes, contents: [String])?
      for step in steps.dropFirst() {
        let which = step % objects.count
        let before = expected[which]
        switch step / 7 % 5 {
        case 0:
          let name = step % 2 == 0 ? "name" : "label"
          let value: AttributeValue? = step % 3 == 0 ? nil : .string("v\(step)")
          objects[which].append(attribute: name, nameHash: FNV1a.hash(name.utf8.span), value)
          expected[which].insert(
            "\(name) = \(String(describing: value))",
            at: expected[which].firstIndex { $0.contains(" -> ") } ?? before.count)
        case 1:
          let relationship = relationships[step % relationships.count]
          var nested = MappedObject(entity: band, path: "band", attributeRoom: step % 2)
          nested.append(attribute: "name", nameHash: FNV1a.hash("name".utf8.span), .string("b\(step)"))
          let reference: ObjectReference =
            step % 2 == 0 ? .key(entity: band, value: .string("k\(step)"), path: "band") : .object(NestedObject(nested))
          let value: RelationshipValue =
            switch step % 3 {
            case 0: .clear
            case 1: .toOne(reference)
            default: .toMany([reference, reference])
            }
          objects[which].append(relationship: relationship, value)
          let targets: [String] =
            switch value {
            case .clear: []
            case .toOne(let reference): [Self.describe(reference)]
            case .toMany(let references): references.map(Self.describe)
            }
          expected[which].append("\(relationship.name) -> \(targets)")
        case 2:
          objects.append(objects[which])
          expected.append(expected[which])
          identities.append(identities[which])
          keyOnly.append(keyOnly[which])
        case 3:
          identities[which] = step % 2 == 0 ? nil : [.string("i\(step)")]
          objects[which].identity = identities[which]
          keyOnly[which].toggle()
          objects[which].isKeyOnly = keyOnly[which]
        default:
          // A view kept across later changes still reads what the object held when it was taken.
          kept = (
            objects[which].attributes, objects[which].attributes.map { "\($0.name) = \(String(describing: $0.value))" }
          )
        }
        for index in objects.indices {
          let tail = "identity \(String(describing: identities[index])), key only \(keyOnly[index])"
          #expect(Self.contents(of: objects[index]) == expected[index] + [tail])
        }
        if let kept {
          #expect(kept.view.map { "\($0.name) = \(String(describing: $0.value))" } == kept.contents)
        }
      }
    }
  }

  /// The value last given for an attribute is found without a view: nil when none was given,
  /// `.some(nil)` when it was cleared.
  @Test func theLastValueGivenForAnAttributeIsFound() throws {
    let album = try #require(Self.model.resolved("Album"))
    var object = MappedObject(entity: album, path: "albums[0]")
    #expect(object.lastValue(of: "name") == nil)
    object.append(attribute: "name", nameHash: FNV1a.hash("name".utf8.span), .string("first"))
    object.append(attribute: "label", nameHash: FNV1a.hash("label".utf8.span), nil)
    object.append(attribute: "name", nameHash: FNV1a.hash("name".utf8.span), .string("second"))
    #expect(object.lastValue(of: "name") == .some(.string("second")))
    #expect(object.lastValue(of: "label") == .some(nil))
    #expect(object.lastValue(of: "sales") == nil)
  }
}
