/// The whole state of one object at one point: what the current state and the undo images
/// of the store hold (`StateCoding`).
struct ObjectState: Sendable, Equatable {
  /// The concrete entity.
  var entity: String
  /// The identity values (empty for an insert-only entity).
  var identity: [AttributeValue]
  /// Attributes that have a value; a cleared attribute is absent.
  var attributes: AttributeList
  /// Link lists by relationship id (hidden reverse ids included). An ordered list is in its
  /// order; any other list is sorted by object id, so equal sets are equal lists.
  var links: LinkLists

  init(entity: String, identity: [AttributeValue], attributes: AttributeList = [:], links: LinkLists = [:]) {
    self.entity = entity
    self.identity = identity
    self.attributes = attributes
    self.links = links
  }
}

extension ObjectState {
  /// Folds a change into this state: its entity and identity, every attribute it sets or
  /// clears, every link list it changes (a list left empty is removed). The one fold of a
  /// change, used by the projector, by revert and for a creation's state.
  mutating func apply(_ change: ObjectChange) {
    // A packed creation applied to nothing is its state.
    if change.changedAttributes.isPacked, attributes.isEmpty, links.isEmpty,
      case .packed(let state) = change.changedAttributes
    {
      self = state.state
      return
    }
    entity = change.entity
    identity = change.identity
    // A state made from nothing (a creation) takes its lists at their size at once; a
    // creation that holds its state's lists (`ChangedAttributes`, `ChangedLinks`) gives them
    // as they are.
    if attributes.isEmpty, case .whole(let list, isNew: true) = change.changedAttributes {
      attributes = list
    } else {
      if attributes.isEmpty { attributes.reserveCapacity(change.changedAttributes.count) }
      change.changedAttributes.forEachAttribute { name, _, new in attributes[name] = new }
    }
    if links.isEmpty, case .whole(let lists, isNew: true, _) = change.changedLinks {
      links = lists
      return
    }
    if links.isEmpty { links.reserveCapacity(change.changedLinks.count) }
    change.changedLinks.forEachLink { link in
      let emptied = links.modify(link.relationshipID) { list in
        link.apply(to: &list)
        return list.isEmpty
      }
      if emptied { links[link.relationshipID] = nil }
    }
  }
}
