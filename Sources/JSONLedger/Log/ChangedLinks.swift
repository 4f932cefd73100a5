/// How a change holds its link changes. A creation's or a deletion's are every link list of
/// the object's state, each linked or unlinked whole: they are kept as the state's lists, not
/// copied into `LinkChange`s (16 bytes a list instead of 40, and the projector takes a created
/// object's lists as they are). `ChangedAttributes` does the same for attributes, and a
/// creation the resolver packed holds its state's bytes in both (`PackedState`).
enum ChangedLinks: Sendable {
  /// Link changes, by relationship id.
  case listed([LinkChange])
  /// Every link list of a state, none empty, by relationship id: each linked by the change
  /// (`isNew`, a creation) or unlinked (a deletion). Bit `i` of `ordered` is set when the
  /// `i`-th list's relationship is ordered (a state of more than 64 lists is `listed`).
  case whole(LinkLists, isNew: Bool, ordered: UInt64)
  /// Every link list of a created object's packed state, each linked.
  case packed(PackedState)

  /// The link lists of a created (`isNew`) or deleted object's state. `isOrdered` tells
  /// which relationships are ordered.
  init(whole lists: LinkLists, isNew: Bool, isOrdered: (UInt32) -> Bool) {
    var ordered: UInt64 = 0
    var fits = lists.count <= 64
    if fits {
      for (index, (id, list)) in lists.enumerated() {
        // An empty list is no change: listed, it is left out.
        if list.isEmpty {
          fits = false
          break
        }
        if isOrdered(id) { ordered |= 1 << UInt64(index) }
      }
    }
    if fits {
      self = .whole(lists, isNew: isNew, ordered: ordered)
      return
    }
    var changes: [LinkChange] = []
    changes.reserveCapacity(lists.count)
    for (id, list) in lists where !list.isEmpty {
      changes.append(Self.change(linkingWhole: list, of: id, isNew: isNew, isOrdered: isOrdered(id)))
    }
    self = .listed(changes)
  }

  /// The change that links a whole list (`isNew`) or unlinks it.
  private static func change(linkingWhole list: LinkTargets, of id: UInt32, isNew: Bool, isOrdered: Bool)
    -> LinkChange
  {
    LinkChange(relationshipID: id, from: isNew ? [] : list.array, to: isNew ? list.array : [], isOrdered: isOrdered)
  }

  /// The changes, by relationship id.
  var changes: [LinkChange] {
    switch self {
    case .listed(let changes): return changes
    case .whole(let lists, _, _):
      var changes: [LinkChange] = []
      changes.reserveCapacity(lists.count)
      forEachLink { changes.append($0) }
      return changes
    case .packed(let state):
      return Self(whole: state.state.links, isNew: true, isOrdered: state.isOrdered).changes
    }
  }

  var count: Int {
    switch self {
    case .listed(let changes): changes.count
    case .whole(let lists, _, _): lists.count
    case .packed(let state): state.layout.listCount
    }
  }

  /// Calls `body` with each link change, by relationship id.
  func forEachLink(_ body: (LinkChange) throws -> Void) rethrows {
    switch self {
    case .listed(let changes):
      for index in changes.indices { try body(changes[index]) }
    case .whole(let lists, let isNew, let ordered):
      for (index, (id, list)) in lists.enumerated() {
        let isOrdered = ordered & (1 << UInt64(index)) != 0
        try body(Self.change(linkingWhole: list, of: id, isNew: isNew, isOrdered: isOrdered))
      }
    case .packed(let state):
      for (id, list) in state.state.links {
        try body(Self.change(linkingWhole: list, of: id, isNew: true, isOrdered: state.isOrdered(id)))
      }
    }
  }

  /// The same changes, whichever way each is held.
  func isEqual(to other: ChangedLinks) -> Bool {
    if case .whole(let lists, let isNew, let ordered) = self,
      case .whole(let otherLists, let otherIsNew, let otherOrdered) = other, isNew == otherIsNew,
      ordered == otherOrdered
    {
      return lists == otherLists
    }
    return changes == other.changes
  }

  /// What was linked is unlinked, and back.
  var inverted: ChangedLinks {
    switch self {
    case .listed(let changes): .listed(changes.map(\.inverted))
    case .whole(let lists, let isNew, let ordered): .whole(lists, isNew: !isNew, ordered: ordered)
    case .packed(let state): Self(whole: state.state.links, isNew: false, isOrdered: state.isOrdered)
    }
  }
}
