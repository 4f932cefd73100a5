extension View {
  /// The objects a query matches, in its order: one page when it has a limit.
  public func objects(_ asked: Query) throws -> QueryPage {
    let plan = try QueryPlan(asked, entity: reader.entity(asked.entity), reader: reader)
    // Sort keys by the attributes' names (a JSON key names its attribute).
    var query = asked
    query.sortKeys = plan.sortKeys
    if query.sortKeys.isEmpty, let limit = query.limit, plan.indexRanges == nil {
      return try storedOrderPage(plan, limit: max(0, limit), after: query.cursor)
    }
    let matches = try sortedMatches(plan)
    var start = 0
    if let cursor = query.cursor {
      // The cursor's object, or, when it no longer matches, the first object behind its place.
      if let index = matches.firstIndex(where: { $0.objectID == cursor.objectID }) {
        start = index + 1
      } else {
        start = matches.firstIndex { Self.follows($0, cursor, query.sortKeys) } ?? matches.count
      }
    }
    let end = query.limit.map { min(matches.count, start + max(0, $0)) } ?? matches.count
    let page = Array(matches[start..<end])
    var next: QueryCursor?
    if end < matches.count, let last = page.last {
      next = QueryCursor(
        key: last.key, sortValues: query.sortKeys.map { last.attributes[$0.attribute] }, objectID: last.objectID)
    }
    return QueryPage(objects: page, next: next)
  }

  /// A page in stored order (ids ascend in the order objects were first stored), read by one
  /// scan that stops at the object after the page: a first page of 50 reads about 50 objects.
  private func storedOrderPage(_ plan: QueryPlan, limit: Int, after cursor: QueryCursor?) throws -> QueryPage {
    var page: [ObjectSnapshot] = []
    var hasMore = false
    try reader.visitObjects(plan.entity.name) { object in
      if let cursor, object.objectID <= cursor.objectID { return true }
      guard plan.matches(object) else { return true }
      guard page.count < limit else {
        hasMore = true
        return false
      }
      page.append(object)
      return true
    }
    let next = hasMore ? page.last.map { QueryCursor(key: $0.key, sortValues: [], objectID: $0.objectID) } : nil
    return QueryPage(objects: page, next: next)
  }

  /// How many objects a query matches (its limit and cursor aside).
  public func count(_ query: Query) throws -> Int {
    try matches(QueryPlan(query, entity: reader.entity(query.entity), reader: reader)).count
  }

  /// The objects of `entity` whose attribute or to-one relationship `property` equals
  /// `value` (coerced to the attribute's type: `"1974"` matches an integer 1974), in the
  /// order they were first stored: `objects(Query(entity, where: property, .equals(value)))`.
  public func objects(_ entity: String, where property: String, equals value: JSONValue) throws -> [ObjectSnapshot] {
    try objects(Query(entity, where: property, .equals(value))).objects
  }

  /// One page of the objects of `entity` in the order they were first stored: skip `offset`,
  /// take at most `limit`.
  public func objects(_ entity: String, offset: Int, limit: Int) throws -> [ObjectSnapshot] {
    var page: [ObjectSnapshot] = []
    var index = 0
    try reader.forEachObject(entity) { object in
      defer { index += 1 }
      if index >= offset, page.count < limit { page.append(object) }
    }
    return page
  }

  /// The objects meeting the plan, in stored order: through the index when a group of its
  /// conditions can be answered there, else by a scan of the entity.
  private func matches(_ plan: QueryPlan) throws -> [ObjectSnapshot] {
    guard let ranges = plan.indexRanges else {
      var matches: [ObjectSnapshot] = []
      try reader.forEachObject(plan.entity.name) { if plan.matches($0) { matches.append($0) } }
      return matches
    }
    var seen = Set<UInt64>()
    var matches: [ObjectSnapshot] = []
    for range in ranges {
      for object in try reader.indexedObjects(
        plan.entity, attribute: range.attribute, from: range.start, isPastEnd: range.isPastEnd)
      where seen.insert(object.objectID).inserted && plan.matches(object) {
        matches.append(object)
      }
    }
    // Ids ascend in the order objects were first stored.
    return ranges.count > 1 ? matches.sorted { $0.objectID < $1.objectID } : matches
  }

  private func sortedMatches(_ plan: QueryPlan) throws -> [ObjectSnapshot] {
    let matches = try matches(plan)
    let keys = plan.sortKeys
    guard !keys.isEmpty else { return matches }  // stored order already
    // Stable: ties on every key keep stored order.
    return matches.enumerated().sorted { left, right in
      let values = keys.map { (left.element.attributes[$0.attribute], right.element.attributes[$0.attribute]) }
      return Self.order(values, keys) ?? (left.offset < right.offset)
    }.map(\.element)
  }

  /// Whether the left values come first (true), the right (false), or they tie (nil), key by
  /// key: by value in the key's direction, a missing value after any value.
  private static func order(_ pairs: [(AttributeValue?, AttributeValue?)], _ keys: [Query.SortKey]) -> Bool? {
    for (pair, key) in zip(pairs, keys) {
      switch pair {
      case (let l?, let r?):
        if l == r { continue }
        return key.ascending ? l.isOrdered(before: r) : r.isOrdered(before: l)
      case (.some, nil): return true
      case (nil, .some): return false
      case (nil, nil): continue
      }
    }
    return nil
  }

  /// Whether `object` comes after the cursor's place in the query's order.
  private static func follows(_ object: ObjectSnapshot, _ cursor: QueryCursor, _ keys: [Query.SortKey]) -> Bool {
    let pairs = zip(cursor.sortValues, keys).map { ($0.0, object.attributes[$0.1.attribute]) }
    // Stored order breaks ties: ids ascend in the order objects were first stored.
    return order(pairs, keys) ?? (cursor.objectID < object.objectID)
  }
}

extension AttributeValue {
  /// Whether this value comes before `other` of the same type: numbers and dates by value,
  /// text, UUIDs and URLs by their UTF-8 bytes (SQLite's binary collation, and the order of
  /// the `indexes` database), false before true. Values of different types keep no order
  /// (false).
  func isOrdered(before other: AttributeValue) -> Bool {
    switch (self, other) {
    case (.string(let a), .string(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
    case (.integer(let a), .integer(let b)): a < b
    case (.double(let a), .double(let b)): a < b
    case (.float(let a), .float(let b)): a < b
    case (.decimal(let a), .decimal(let b)): a < b
    case (.bool(let a), .bool(let b)): !a && b
    case (.date(let a), .date(let b)): a < b
    case (.uuid(let a), .uuid(let b)): a.uuidString.utf8.lexicographicallyPrecedes(b.uuidString.utf8)
    case (.url(let a), .url(let b)): a.absoluteString.utf8.lexicographicallyPrecedes(b.absoluteString.utf8)
    default: false
    }
  }
}
