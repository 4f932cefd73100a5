/// The whole state of one object at one point: what views, relationship indexes and history
/// entries are made of.
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
