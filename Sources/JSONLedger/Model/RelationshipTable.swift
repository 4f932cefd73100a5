/// The model's relationships by id. Ids are numbered 1, 2, … across the model's entities (a
/// hidden reverse link sets `ResolvedRelationship.hiddenReverseBit`, and is not listed), so
/// the table is an array and a lookup is an index: the resolver and the projector look up a
/// relationship for every link they touch.
struct RelationshipTable: Sendable {
  private var relationships: [ResolvedRelationship?] = []

  /// The relationship with this id, if the model declares one.
  subscript(id: UInt32) -> ResolvedRelationship? {
    get {
      let index = Int(id) - 1
      return relationships.indices.contains(index) ? relationships[index] : nil
    }
    set {
      let index = Int(id) - 1
      guard index >= 0, id & ResolvedRelationship.hiddenReverseBit == 0 else { return }
      if index >= relationships.count { relationships += Array(repeating: nil, count: index + 1 - relationships.count) }
      relationships[index] = newValue
    }
  }
}
