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

  static func editing(_ entity: String, in entities: inout [Entity], _ change: (inout Entity) -> Void) {
    guard let index = entities.firstIndex(where: { $0.name == entity }) else { return }
    change(&entities[index])
  }

  static func removing(_ name: String, from entity: String, in entities: inout [Entity]) {
    editing(entity, in: &entities) { entity in
      entity.attributes.removeAll { $0.name == name }
      entity.relationships.removeAll { $0.name == name }
    }
  }

  static let edits: [Edit] = [
    Edit(name: "an attribute removed") { removing("label", from: "Album", in: &$0) },
    Edit(name: "an attribute renamed and another retyped") { entities in
      editing("Album", in: &entities) { album in
        album.attributes = album.attributes.map {
          $0.name == "label" ? Attribute("title", .string, renamedFrom: "label") : $0
        }
      }
      editing("Band", in: &entities) { band in
        band.attributes = band.attributes.map { $0.name == "formed" ? Attribute("formed", .string) : $0 }
      }
    },
    Edit(name: "a relationship without an inverse removed") { removing("favourite", from: "Musician", in: &$0) },
    Edit(name: "a pair of inverses removed") { entities in
      removing("members", from: "Band", in: &entities)
      removing("bands", from: "Musician", in: &entities)
    },
    Edit(name: "one side of a pair removed") { entities in
      removing("band", from: "Album", in: &entities)
      editing("Band", in: &entities) { band in
        band.relationships = band.relationships.map {
          $0.name == "albums" ? Relationship("albums", to: "Album", many: true) : $0
        }
      }
    },
    Edit(name: "a relationship gaining an inverse") { entities in
      editing("Musician", in: &entities) { musician in
        musician.relationships = musician.relationships.map {
          $0.name == "favourite" ? Relationship("favourite", to: "Album", inverse: "fans") : $0
        }
      }
      editing("Album", in: &entities) { album in
        album.relationships.append(Relationship("fans", to: "Musician", many: true, inverse: "favourite"))
      }
    },
    Edit(name: "two inverses parted") { entities in
      editing("Band", in: &entities) { band in
        band.relationships = band.relationships.map {
          $0.name == "albums" ? Relationship("albums", to: "Album", many: true) : $0
        }
      }
      editing("Album", in: &entities) { album in
        album.relationships = album.relationships.map { $0.name == "band" ? Relationship("band", to: "Band") : $0 }
      }
    },
    Edit(name: "an ordered relationship unordered") { entities in
      editing("Band", in: &entities) { band in
        band.relationships = band.relationships.map {
          $0.name == "members" ? Relationship("members", to: "Musician", many: true, inverse: "bands") : $0
        }
      }
    },
    Edit(name: "a to-many made to-one") { entities in
      editing("Musician", in: &entities) { musician in
        musician.relationships = musician.relationships.map {
          $0.name == "bands" ? Relationship("bands", to: "Band", inverse: "members") : $0
        }
      }
    },
    Edit(name: "a relationship renamed") { entities in
      editing("Band", in: &entities) { band in
        band.relationships = band.relationships.map {
          $0.name == "albums"
            ? Relationship("records", to: "Album", many: true, inverse: "band", renamedFrom: "albums") : $0
        }
      }
      editing("Album", in: &entities) { album in
        album.relationships = album.relationships.map {
          $0.name == "band" ? Relationship("band", to: "Band", inverse: "records") : $0
        }
      }
    },
    Edit(name: "a to-one made to-many") { entities in
      editing("Album", in: &entities) { album in
        album.relationships = album.relationships.map {
          $0.name == "band" ? Relationship("band", to: "Band", many: true, inverse: "albums") : $0
        }
      }
    },
    Edit(name: "a relationship made ordered") { entities in
      editing("Band", in: &entities) { band in
        band.relationships = band.relationships.map {
          $0.name == "albums" ? Relationship("albums", to: "Album", many: true, ordered: true, inverse: "band") : $0
        }
      }
    },
    Edit(name: "an attribute indexed, another required") { entities in
      editing("Album", in: &entities) { album in
        album.attributes = album.attributes.map { $0.name == "label" ? Attribute("label", .string, indexed: true) : $0 }
      }
      editing("Band", in: &entities) { band in
        band.attributes = band.attributes.map {
          $0.name == "formed" ? Attribute("formed", .int32, optional: false) : $0
        }
      }
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
