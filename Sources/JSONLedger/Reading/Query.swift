/// A query over one entity (and its sub-entities): conditions on its attributes and
/// relationships, an order, and a page size, with a cursor for the next page. Run it with
/// `View.objects(_:)`, count it with `View.count(_:)`, or decode it with
/// `View.decode(_:from:)`; in a view as of batch N it sees the store as of N.
///
/// Every condition added with `filter(_:_:)` must hold (AND); `filter(anyOf:)` adds a group
/// of which one must hold (OR). A condition on an indexed attribute reads the index.
///
/// ```swift
/// let query = Query("Issue", where: "votes", .between(10, nil))
///   .filter("repository", .equals(1296269))
///   .filter("labels", .contains("bug"))
///   .sorted(by: .descending("votes"), .ascending("title"))
///   .limited(to: 20)
/// let page = try ledger.read { view in try view.objects(query) }
/// let next = try ledger.read { view in try view.objects(query.after(page.next)) }
/// let popular = try ledger.read { view in try view.count(query) }
/// ```
public struct Query: Sendable {
  /// A condition on one attribute or relationship. Values are coerced to the attribute's
  /// type, as keys are; on a relationship they are keys of the related entity.
  public enum Filter: Sendable {
    /// Equal to the value (`null`: no value). On a to-one relationship: linked to the object
    /// with this key (`null`: linked to none).
    case equals(JSONValue)
    /// Not equal to the value (`null`: some value); an object without a value is not equal
    /// to any. On a to-one relationship: not linked to the object with this key.
    case notEquals(JSONValue)
    /// Below the value (an object without a value is not).
    case lessThan(JSONValue)
    /// Above the value (an object without a value is not).
    case greaterThan(JSONValue)
    /// Equal to one of the values (SQL's `IN`). On a to-one relationship: linked to one of
    /// the objects with these keys.
    case oneOf([JSONValue])
    /// Between the bounds, both included; a nil bound is open.
    case between(JSONValue?, JSONValue?)
    /// A string attribute starting with the text.
    case hasPrefix(String)
    /// No value; on a relationship, nothing linked.
    case isNull
    /// Some value; on a relationship, something linked.
    case isNotNull
    /// A to-many relationship that includes the object with this key.
    case contains(JSONValue)
  }

  /// One condition: a property (an attribute or a relationship) and what it must meet.
  public struct Condition: Sendable {
    /// The attribute or relationship, by its model name.
    public var property: String
    public var filter: Filter

    public init(_ property: String, _ filter: Filter) {
      self.property = property
      self.filter = filter
    }
  }

  /// One key of the order: an attribute and a direction.
  public struct SortKey: Sendable, Hashable {
    public var attribute: String
    public var ascending: Bool

    public init(_ attribute: String, ascending: Bool = true) {
      self.attribute = attribute
      self.ascending = ascending
    }

    /// `attribute`, smallest first.
    public static func ascending(_ attribute: String) -> SortKey { SortKey(attribute, ascending: true) }
    /// `attribute`, largest first.
    public static func descending(_ attribute: String) -> SortKey { SortKey(attribute, ascending: false) }
  }

  /// The entity queried; its sub-entities' objects are included.
  public var entity: String
  /// The conditions: every group must hold, and in each group at least one condition.
  public var conditions: [[Condition]] = []
  /// The order: by the first key, ties by the next, and so on; the last tie-break is the order
  /// objects were first stored (empty: that order alone). Objects without a value for a key
  /// come after those with one, in either direction.
  public var sortKeys: [SortKey] = []
  /// The page size (nil: everything).
  public var limit: Int?
  /// Which objects count by whether they are placeholders (objects known only because
  /// something referred to them by key, `ObjectSnapshot.isPlaceholder`); nil: both.
  public var placeholders: Placeholders?

  /// A query's choice of placeholders (`Query.placeholders`).
  public enum Placeholders: Sendable, Hashable {
    /// Only placeholders.
    case only
    /// No placeholders.
    case excluded
  }
  /// Where the page starts: after the object this cursor names.
  public var cursor: QueryCursor?

  /// Every object of `entity`, in the order they were first stored.
  public init(_ entity: String) {
    self.entity = entity
  }

  /// The objects of `entity` whose `property` meets `filter`.
  public init(_ entity: String, where property: String, _ filter: Filter) {
    self.entity = entity
    self.conditions = [[Condition(property, filter)]]
  }

  /// This query, keeping only the objects whose `property` also meets `filter` (AND).
  public func filter(_ property: String, _ filter: Filter) -> Query {
    var query = self
    query.conditions.append([Condition(property, filter)])
    return query
  }

  /// This query, keeping only the objects that also meet at least one of `conditions` (OR).
  /// An empty list keeps nothing.
  public func filter(anyOf conditions: [Condition]) -> Query {
    var query = self
    query.conditions.append(conditions)
    return query
  }

  /// This query sorted by `attribute` alone.
  public func sorted(by attribute: String, ascending: Bool = true) -> Query {
    sorted(by: [SortKey(attribute, ascending: ascending)])
  }

  /// This query sorted by `keys`, the first first (it replaces any order before).
  public func sorted(by keys: SortKey...) -> Query {
    sorted(by: keys)
  }

  /// This query sorted by `keys`, the first first (it replaces any order before).
  public func sorted(by keys: [SortKey]) -> Query {
    var query = self
    query.sortKeys = keys
    return query
  }

  /// This query in pages of `count`.
  public func limited(to count: Int) -> Query {
    var query = self
    query.limit = count
    return query
  }

  /// The page after `cursor`, the `next` of the page before; nil: the first page. A page's
  /// `next` is nil when it is the last, so a loop pages until the cursor is nil:
  ///
  /// ```swift
  /// var cursor: QueryCursor?
  /// repeat {
  ///   let next = query.after(cursor)
  ///   let page = try await ledger.read { view in try view.objects(next) }
  ///   handle(page.objects)
  ///   cursor = page.next
  /// } while cursor != nil
  /// ```
  public func after(_ cursor: QueryCursor?) -> Query {
    var query = self
    query.cursor = cursor
    return query
  }

  /// This query with the conditions of `expression`, in the one text form of a query
  /// (`QueryText`): `weight > 1000 and types contains grass`.
  public func filter(_ expression: String) throws(LedgerError) -> Query {
    try QueryText.filter(self, by: expression)
  }
}

/// The position after the last object of a page: the next page starts behind it.
public struct QueryCursor: Sendable, Hashable {
  /// The last object's key.
  public var key: ObjectKey
  /// Its place in the query's order (its value for each sort key, then its internal order).
  var sortValues: [AttributeValue?]
  var objectID: UInt64
}

/// One page of a query's objects, and the cursor of the next page (nil: this was the last).
public struct QueryPage: Sendable {
  public var objects: [ObjectSnapshot]
  public var next: QueryCursor?
}
