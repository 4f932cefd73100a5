/// A query over one entity (and its sub-entities): an optional filter on an attribute, a sort
/// order, and a page size, with a cursor for the next page. Run it with `View.objects(_:)`
/// or count it with `View.count(_:)`; in a view as of batch N it sees the store as of N.
///
/// ```swift
/// let query = Query("Issue", where: "votes", .between(10, nil)).sorted(by: "votes", ascending: false).limited(to: 20)
/// let page = try ledger.read { view in try view.objects(query) }
/// let next = try ledger.read { view in try view.objects(query.after(page.next)) }
/// let popular = try ledger.read { view in try view.count(query) }
/// ```
public struct Query: Sendable {
  /// A condition on one attribute; values are coerced to the attribute's type, as keys are.
  public enum Filter: Sendable {
    /// Equal to the value (`null`: the attribute has no value).
    case equals(JSONValue)
    /// Between the bounds, both included; a nil bound is open.
    case between(JSONValue?, JSONValue?)
    /// A string attribute starting with the text.
    case hasPrefix(String)
  }

  /// The entity queried; its sub-entities' objects are included.
  public var entity: String
  /// The attribute filtered on, and how.
  public var filter: (attribute: String, condition: Filter)?
  /// The attribute sorted by (nil: the order objects were first stored), and the direction.
  /// Objects without a value for it come last; ties keep stored order.
  public var sort: (attribute: String, ascending: Bool)?
  /// The page size (nil: everything).
  public var limit: Int?
  /// Where the page starts: after the object this cursor names.
  public var cursor: QueryCursor?

  /// Every object of `entity`, in the order they were first stored.
  public init(_ entity: String) {
    self.entity = entity
  }

  /// The objects of `entity` whose `attribute` meets `condition`.
  public init(_ entity: String, where attribute: String, _ condition: Filter) {
    self.entity = entity
    self.filter = (attribute, condition)
  }

  /// This query sorted by `attribute`.
  public func sorted(by attribute: String, ascending: Bool = true) -> Query {
    var query = self
    query.sort = (attribute, ascending)
    return query
  }

  /// This query in pages of `count`.
  public func limited(to count: Int) -> Query {
    var query = self
    query.limit = count
    return query
  }

  /// The page after `cursor` (from the page before; nil: the first page).
  public func after(_ cursor: QueryCursor?) -> Query {
    var query = self
    query.cursor = cursor
    return query
  }
}

/// The position after the last object of a page: the next page starts behind it.
public struct QueryCursor: Sendable, Hashable {
  /// The last object's key.
  public var key: ObjectKey
  /// Its place in the query's order (its sort value, then its internal order).
  var sortValue: AttributeValue?
  var objectID: UInt64
}

/// One page of a query's objects, and the cursor of the next page (nil: this was the last).
public struct QueryPage: Sendable {
  public var objects: [ObjectSnapshot]
  public var next: QueryCursor?
}
