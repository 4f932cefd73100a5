import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// `LinkGraph` on its own, over a real (empty) store's working set: every link has its
/// counterpart, whatever the operation.
@Suite("LinkGraph: links kept two-sided")
struct LinkGraphTests {
  static let model: Model = {
    do {
      return try Model {
        Entity("Band", identity: ["name"]) {
          Attribute("name", .string)
          Relationship("albums", to: "Album", many: true, ordered: true, inverse: "band")
          Relationship("manager", to: "Person", inverse: "managed")
          Relationship("fans", to: "Person", many: true)
        }
        Entity("Album", identity: ["name"]) {
          Attribute("name", .string)
          Relationship("band", to: "Band", inverse: "albums")
        }
        Entity("Person", identity: ["name"]) {
          Attribute("name", .string)
          Relationship("managed", to: "Band", inverse: "manager")
        }
      }
    } catch {
      preconditionFailure("the test model is valid: \(error)")
    }
  }()

  /// Runs `body` on a graph over an empty store, with objects created for `names` (entity,
  /// name) and their ids.
  static func withGraph(
    _ names: [(String, String)], _ body: (inout LinkGraph, [String: UInt64]) throws -> Void
  ) throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: Self.model)
    try ledger.environment.read { txn in
      let store = ProjectionStore(transaction: txn, layout: ledger.layout, model: ledger.model)
      var graph = LinkGraph(objects: WorkingSet(model: ledger.model, source: store))
      var ids: [String: UInt64] = [:]
      var sequence: UInt64 = 1
      for (entity, name) in names {
        let root = try #require(ledger.model.resolved(entity)).rootID
        let id = ObjectIDs.make(root: root, sequence: sequence)
        sequence += 1
        _ = graph.objects.addNewSlot(id)
        try graph.objects.set(id, to: ObjectState(entity: entity, identity: [.string(name)]))
        ids[name] = id
      }
      try body(&graph, ids)
      try graph._checkInvariants()
    }
  }

  static func relationship(_ entity: String, _ name: String) throws -> ResolvedRelationship {
    try #require(Self.model.resolved(entity)?.relationshipIndex[name])
  }

  @Test func settingAnOrderedListKeepsItsOrderDropsRepeatsAndLinksEachBack() throws {
    try Self.withGraph([("Band", "japan"), ("Album", "a"), ("Album", "b"), ("Album", "c")]) { graph, ids in
      let albums = try Self.relationship("Band", "albums")
      let band = try Self.relationship("Album", "band")
      try graph.setLinks(ids["japan"]!, albums, [ids["c"]!, ids["a"]!, ids["c"]!, ids["b"]!])
      #expect(try graph.objects.links(ids["japan"]!, albums.id) == [ids["c"]!, ids["a"]!, ids["b"]!])
      for name in ["a", "b", "c"] { #expect(try graph.objects.links(ids[name]!, band.id) == [ids["japan"]!]) }
      // Dropping one from the list unlinks it on its side too.
      try graph.setLinks(ids["japan"]!, albums, [ids["a"]!])
      #expect(try graph.objects.links(ids["c"]!, band.id).isEmpty)
    }
  }

  @Test func repointingAOneToOneUnlinksTheOldPartner() throws {
    try Self.withGraph([("Band", "japan"), ("Band", "cure"), ("Person", "simon")]) { graph, ids in
      let manager = try Self.relationship("Band", "manager")
      let managed = try Self.relationship("Person", "managed")
      try graph.setLinks(ids["japan"]!, manager, [ids["simon"]!])
      try graph.setLinks(ids["cure"]!, manager, [ids["simon"]!])
      #expect(try graph.objects.links(ids["japan"]!, manager.id).isEmpty)
      #expect(try graph.objects.links(ids["simon"]!, managed.id) == [ids["cure"]!])
    }
  }

  /// A to-one set on its own: linked both ways, left alone when set again, moved with the
  /// old partner unlinked, cleared; through `setLinks`, the last of several targets wins.
  @Test func aToOneIsSetRepointedAndClearedWithBothSidesInStep() throws {
    try Self.withGraph([("Band", "japan"), ("Band", "cure"), ("Album", "a")]) { graph, ids in
      let band = try Self.relationship("Album", "band")
      let albums = try Self.relationship("Band", "albums")
      let (album, japan, cure) = (ids["a"]!, ids["japan"]!, ids["cure"]!)
      try graph.setLink(album, band, to: japan)
      #expect(try graph.objects.links(album, band.id) == [japan])
      #expect(try graph.objects.links(japan, albums.id) == [album])
      try graph.setLink(album, band, to: japan)
      #expect(try graph.objects.links(japan, albums.id) == [album])
      try graph.setLink(album, band, to: cure)
      #expect(try graph.objects.links(album, band.id) == [cure])
      #expect(try graph.objects.links(japan, albums.id).isEmpty)
      #expect(try graph.objects.links(cure, albums.id) == [album])
      try graph.setLink(album, band, to: nil)
      #expect(try graph.objects.links(album, band.id).isEmpty)
      #expect(try graph.objects.links(cure, albums.id).isEmpty)
      try graph.setLinks(album, band, [cure, japan])
      #expect(try graph.objects.links(album, band.id) == [japan])
      #expect(try graph.objects.links(japan, albums.id) == [album])
      #expect(try graph.objects.links(cure, albums.id).isEmpty)
    }
  }

  @Test func aRelationshipWithoutInverseIsMirroredInAHiddenList() throws {
    try Self.withGraph([("Band", "japan"), ("Person", "ann"), ("Person", "bo")]) { graph, ids in
      let fans = try Self.relationship("Band", "fans")
      try graph.setLinks(ids["japan"]!, fans, [ids["bo"]!, ids["ann"]!])
      #expect(try graph.objects.links(ids["ann"]!, fans.reverseID) == [ids["japan"]!])
      #expect(fans.reverseID & ResolvedRelationship.hiddenReverseBit != 0)
    }
  }

  @Test func deletingAnObjectUnlinksItEverywhere() throws {
    try Self.withGraph([("Band", "japan"), ("Album", "a"), ("Person", "simon"), ("Person", "ann")]) {
      graph, ids in
      try graph.setLinks(ids["japan"]!, try Self.relationship("Band", "albums"), [ids["a"]!])
      try graph.setLinks(ids["japan"]!, try Self.relationship("Band", "manager"), [ids["simon"]!])
      try graph.setLinks(ids["japan"]!, try Self.relationship("Band", "fans"), [ids["ann"]!])
      try graph.delete(ids["japan"]!)
      #expect(try graph.objects.state(of: ids["japan"]!) == nil)
      #expect(try graph.objects.links(ids["a"]!, try Self.relationship("Album", "band").id).isEmpty)
      #expect(try graph.objects.links(ids["simon"]!, try Self.relationship("Person", "managed").id).isEmpty)
      #expect(try graph.objects.links(ids["ann"]!, try Self.relationship("Band", "fans").reverseID).isEmpty)
    }
  }

  @Test func repairMakesTargetsSetOutrightConsistent() throws {
    try Self.withGraph([("Band", "japan"), ("Album", "a"), ("Album", "b")]) { graph, ids in
      let albums = try Self.relationship("Band", "albums")
      let band = try Self.relationship("Album", "band")
      // A target state that lists an album whose own state does not point back, and an
      // album that points to the band the band does not list.
      var japan = try #require(try graph.objects.state(of: ids["japan"]!))
      japan.links[albums.id] = [ids["a"]!]
      var b = try #require(try graph.objects.state(of: ids["b"]!))
      b.links[band.id] = [ids["japan"]!]
      try graph.restore([(ids["japan"]!, japan), (ids["b"]!, b)], repairingLinks: true)
      #expect(try graph.objects.links(ids["a"]!, band.id) == [ids["japan"]!])
      #expect(Set(try graph.objects.links(ids["japan"]!, albums.id)) == [ids["a"]!, ids["b"]!])
    }
  }
}
