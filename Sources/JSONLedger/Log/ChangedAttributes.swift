/// How a change holds its attribute changes. A creation's or a deletion's are every
/// attribute of the object's state, each a new value or an old one: they are kept as the
/// state's list, not copied into `AttributeChange`s (40 bytes an attribute instead of 64,
/// and the projector takes a created object's list as it is). A large import holds one per
/// object until each is folded; a creation the resolver packed holds its state's bytes
/// (`PackedState`), read where they lie.
enum ChangedAttributes: Sendable {
  /// Attribute changes, by name.
  case listed([AttributeChange])
  /// Every attribute of a state: each the value after the change (`isNew`, a creation) or
  /// the value before it (a deletion).
  case whole(AttributeList, isNew: Bool)
  /// Every attribute of a created object's packed state, each a new value.
  case packed(PackedState)

  /// Whether these are a packed creation's: told from the case alone, where matching with
  /// a binding copies the value first.
  var isPacked: Bool {
    if case .packed = self { true } else { false }
  }

  /// The changes, by name.
  var changes: [AttributeChange] {
    switch self {
    case .listed(let changes): changes
    case .whole(let list, let isNew):
      list.map { name, value in AttributeChange(name: name, old: isNew ? nil : value, new: isNew ? value : nil) }
    case .packed(let state):
      state.state.attributes.map { name, value in AttributeChange(name: name, old: nil, new: value) }
    }
  }

  var count: Int {
    switch self {
    case .listed(let changes): changes.count
    case .whole(let list, _): list.count
    case .packed(let state): state.layout.attributeCount
    }
  }

  /// Calls `body` with each attribute's name, value before and value after, by name.
  func forEachAttribute(_ body: (String, AttributeValue?, AttributeValue?) throws -> Void) rethrows {
    switch self {
    case .listed(let changes):
      for index in changes.indices { try body(changes[index].name, changes[index].old, changes[index].new) }
    case .whole(let list, let isNew):
      for (name, value) in list { try body(name, isNew ? nil : value, isNew ? value : nil) }
    case .packed(let state):
      for (name, value) in state.state.attributes { try body(name, nil, value) }
    }
  }

  /// The same changes, whichever way each is held.
  func isEqual(to other: ChangedAttributes) -> Bool {
    if case .whole(let list, let isNew) = self, case .whole(let otherList, let otherIsNew) = other, isNew == otherIsNew
    {
      return list == otherList
    }
    if case .packed(let state) = self, case .packed(let otherState) = other, state.bytes == otherState.bytes {
      return true
    }
    return changes == other.changes
  }

  /// Old and new values trade places.
  var inverted: ChangedAttributes {
    switch self {
    case .listed(let changes): .listed(changes.map { AttributeChange(name: $0.name, old: $0.new, new: $0.old) })
    case .whole(let list, let isNew): .whole(list, isNew: !isNew)
    case .packed(let state): .whole(state.state.attributes, isNew: false)
    }
  }
}
