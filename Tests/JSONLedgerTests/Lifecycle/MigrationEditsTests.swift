import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Each kind of model change, made to stores of random histories, then written to under the new
/// model: whatever way the migration takes (in place, a rewrite, a replay), or its refusal,
/// the store must take later writes with every link held on both sides (the internal checks
/// see each write) and match a replay of its log.
@Suite("Model changes against random histories")
struct MigrationEditsTests {
  /// A change to the history test model's entities, by name.
  struct Edit: CustomTestStringConvertible, Sendable {
    let name: String
    let change: @Sendable (inout [Entity]) -> Void
    var testDescription: String { name }
  }

  /// `entities` without `entity`'s attribute or relationship `name`.
  static func removing(_ name: String, from entity: String, in entities: inout [Entity]) {
    guard let index = entities.firstIndex(where: { $0.name == entity }) else { return }
    entities[index].attributes.removeAll { $0.name == name }
    entities[index].relationships.removeAll { $0.name == name }
  }

  /// `entities` with `entity`'s attribute `name` replaced by `attribute`.
  static func replacing(_ name: String, of entity: String, with attribute: Attribute, in entities: inout [Entity]) {
    removing(name, from: entity, in: &entities)
    guard let index = entities.firstIndex(where: { $0.name == entity }) else { return }
    entities[index].attributes.append(attribute)
  }

  /// `entities` with `entity`'s relationship `name` (nil: none) replaced by `relationship`.
  static func replacing(
    _ name: String?, of entity: String, with relationship: Relationship, in entities: inout [Entity]
  ) {
    if let name { removing(name, from: entity, in: &entities) }
    guard let index = entities.firstIndex(where: { $0.name == entity }) else { return }
    entities[index].relationships.append(relationship)
  }

  static let edits: [Edit] = [
    Edit(name: "an attribute removed") { removing("label", from: "Album", in: &$0) },
    Edit(name: "an attribute renamed and another retyped") { entities in
      replacing("label", of: "Album", with: Attribute("title", .string, renamedFrom: "label"), in: &entities)
      replacing("formed", of: "Band", with: Attribute("formed", .string), in: &entities)
    },
    Edit(name: "a relationship without an inverse removed") {
      removing("favourite", from: "Musician", in: &$0)
    },
    Edit(name: "a pair of inverses removed") { entities in
      removing("members", from: "Band", in: &entities)
      removing("bands", from: "Musician", in: &entities)
    },
    Edit(name: "one side of a pair removed") { entities in
      removing("band", from: "Album", in: &entities)
      replacing("albums", of: "Band", with: Relationship("albums", to: "Album", many: true), in: &entities)
    },
    Edit(name: "a relationship gaining an inverse") { entities in
      replacing(
        "favourite", of: "Musician", with: Relationship("favourite", to: "Album", inverse: "fans"), in: &entities)
      replacing(
        nil, of: "Album", with: Relationship("fans", to: "Musician", many: true, inverse: "favourite"), in: &entities)
    },
    Edit(name: "two inverses parted") { entities in
      replacing("albums", of: "Band", with: Relationship("albums", to: "Album", many: true), in: &entities)
      replacing("band", of: "Album", with: Relationship("band", to: "Band"), in: &entities)
    },
    Edit(name: "an ordered relationship unordered") { entities in
      let members = Relationship("members", to: "Musician", many: true, inverse: "bands")
      replacing("members", of: "Band", with: members, in: &entities)
    },
    Edit(name: "a to-many made to-one") { entities in
      replacing("bands", of: "Musician", with: Relationship("bands", to: "Band", inverse: "members"), in: &entities)
    },
    Edit(name: "a relationship renamed") { entities in
      let records = Relationship("records", to: "Album", many: true, inverse: "band", renamedFrom: "albums")
      replacing("albums", of: "Band", with: records, in: &entities)
      replacing("band", of: "Album", with: Relationship("band", to: "Band", inverse: "records"), in: &entities)
    },
    Edit(name: "a to-one made to-many") { entities in
      replacing(
        "band", of: "Album", with: Relationship("band", to: "Band", many: true, inverse: "albums"), in: &entities)
    },
    Edit(name: "a relationship made ordered") { entities in
      let albums = Relationship("albums", to: "Album", many: true, ordered: true, inverse: "band")
      replacing("albums", of: "Band", with: albums, in: &entities)
    },
    Edit(name: "an attribute indexed, another required") { entities in
      replacing("label", of: "Album", with: Attribute("label", .string, indexed: true), in: &entities)
      replacing("formed", of: "Band", with: Attribute("formed", .int32, optional: false), in: &entities)
    },
  ]

  /// - Reliability: Each kind of model change (attributes removed, renamed, retyped;
  ///   relationships removed, one side or both, renamed, gaining or parting inverses, ordered,
  ///   unordered, to-one, to-many; an index, a required attribute) after random batches, then
  ///   more random batches under the new model: each write keeps every link on both sides, and
  ///   the store matches a replay of its log; a refused change leaves the store as it was
  /// - Size: 13 changes × 3 seeds × 12 batches before and 8 after
  @Test(.tags(.reliability), arguments: edits, [1, 2, 3] as [UInt64])
  func aModelChangeLeavesAStoreThatTakesWritesAndMatchesItsLog(edit: Edit, seed: UInt64) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let (ledger, _) = try CompactTests.filledStore(path, seed: seed)
    let head = try ledger.head
    ledger.close()
    var entities = HistoryPropertyTests.model.entities
    edit.change(&entities)
    let model = try Model(keyCase: .snakeCase, entities: entities)
    let migrated: Ledger
    do {
      _ = try Ledger.migrate(at: path, to: model, allowingRemovals: true)
      migrated = try Ledger.open(at: path, model: model)
    } catch let error as LedgerError where error.code == .migrationRefused {
      let unchanged = try Ledger.open(at: path)
      defer { unchanged.close() }
      #expect(try unchanged.head == head)
      #expect(try unchanged.verify(.fullReplay).batches == Int(head))
      return
    }
    defer { migrated.close() }
    var generator = SeededGenerator(seed: seed &+ 100)
    for _ in 0..<8 {
      // A payload the new model reads another way (a string where a to-many now wants an
      // array) is refused whole, naming its problems; the next batch goes on.
      do {
        _ = try migrated.applySynchronously(try HistoryPropertyTests.randomBatch(migrated, using: &generator))
      } catch let error as LedgerError where error.code == .invalidPayload {
        continue
      }
    }
    #expect(try migrated.verify(.fullReplay).batches == Int(try migrated.head))
  }
}
