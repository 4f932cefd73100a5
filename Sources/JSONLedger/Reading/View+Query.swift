extension View {
  /// The objects a query matches, in its order: one page when it has a limit.
  public func objects(_ query: Query) throws -> QueryPage {
    let matches = try sortedMatches(query)
    var start = 0
    if let cursor = query.cursor {
      // The cursor's object, or, when it no longer matches, the first object behind its place.
      if let index = matches.firstIndex(where: { $0.objectID == cursor.objectID }) {
        start = index + 1
      } else {
        start = matches.firstIndex { Self.follows($0, cursor, query) } ?? matches.count
      }
    }
    let end = query.limit.map { min(matches.count, start + max(0, $0)) } ?? matches.count
    let page = Array(matches[start..<end])
    var next: QueryCursor?
    if end < matches.count, let last = page.last {
      let sortValue = query.sort.flatMap { last.attributes[$0.attribute] }
      next = QueryCursor(key: last.key, sortValue: sortValue, objectID: last.objectID)
    }
    return QueryPage(objects: page, next: next)
  }

  /// How many objects a query matches (its limit and cursor aside).
  public func count(_ query: Query) throws -> Int {
    let resolved = try reader.entity(query.entity)
    let filter = try query.filter.map { try Self.predicate(for: $0, of: resolved) }
    if let filter, let found = try indexedMatches(query, resolved, filter) { return found.count }
    var count = 0
    try reader.forEachObject(query.entity) { object in
      if filter.map({ $0(object.attributes[query.filter?.attribute ?? ""]) }) ?? true { count += 1 }
    }
    return count
  }

  /// The objects matching the query's filter read through the `indexes` database, in stored
  /// order; nil when the index cannot answer (no index on the attribute, a point-in-time view,
  /// or a range over decimals, whose encoding is not in numeric order).
  private func indexedMatches(
    _ query: Query, _ entity: ResolvedEntity, _ matches: @escaping (AttributeValue?) -> Bool
  ) throws -> [ObjectSnapshot]? {
    guard reader.store.asOf == nil, let filter = query.filter, let definition = entity.attributeIndex[filter.attribute],
      definition.isIndexed
    else { return nil }
    func typed(_ value: JSONValue) -> AttributeValue? {
      if case .success(let typed) = ValueCoercion.coerce(value, to: definition.type) { return typed }
      return nil
    }
    let start: [UInt8]
    let isPastEnd: (ArraySlice<UInt8>) -> Bool
    switch filter.condition {
    case .equals(.null):
      return nil
    case .equals(let value):
      guard let value = typed(value) else { return nil }
      start = StoreKeys.indexValue(value)
      isPastEnd = { !$0.starts(with: start) }
    case .between(let lower, let upper):
      guard definition.type != .decimal else { return nil }
      start = lower.flatMap(typed).map(StoreKeys.indexValue) ?? []
      let end = upper.flatMap(typed).map(StoreKeys.indexValue)
      isPastEnd = { value in end.map { $0.lexicographicallyPrecedes(value) && !value.starts(with: $0) } ?? false }
    case .hasPrefix(let prefix):
      // The encoding of the prefix as a string, without the end mark: every string that
      // starts with it starts with these bytes.
      start = Array(StoreKeys.indexValue(.string(prefix)).dropLast(2))
      isPastEnd = { !$0.starts(with: start) }
    }
    return try reader.indexedObjects(
      entity, attribute: filter.attribute, from: start, isPastEnd: isPastEnd, matches: matches)
  }

  private func sortedMatches(_ query: Query) throws -> [ObjectSnapshot] {
    let resolved = try reader.entity(query.entity)
    if let sort = query.sort, resolved.attributeIndex[sort.attribute] == nil {
      throw LedgerError.invalidArgument("\(query.entity) has no attribute \"\(sort.attribute)\" to sort by")
    }
    let filter = try query.filter.map { try Self.predicate(for: $0, of: resolved) }
    var matches: [ObjectSnapshot] = []
    if let filter, let found = try indexedMatches(query, resolved, filter) {
      matches = found
    } else {
      try reader.forEachObject(query.entity) { object in
        if filter.map({ $0(object.attributes[query.filter?.attribute ?? ""]) }) ?? true { matches.append(object) }
      }
    }
    guard let sort = query.sort else { return matches }  // stored order already
    // Stable: ties keep stored order.
    let ranked = matches.enumerated().sorted { left, right in
      switch (left.element.attributes[sort.attribute], right.element.attributes[sort.attribute]) {
      case (let l?, let r?):
        if l == r { return left.offset < right.offset }
        return sort.ascending ? l.isOrdered(before: r) : r.isOrdered(before: l)
      case (.some, nil): return true
      case (nil, .some): return false
      case (nil, nil): return left.offset < right.offset
      }
    }
    return ranked.map(\.element)
  }

  /// Whether `object` comes after the cursor's place in the query's order.
  private static func follows(_ object: ObjectSnapshot, _ cursor: QueryCursor, _ query: Query) -> Bool {
    // Stored order: ids ascend in the order objects were first stored.
    let keyFollows = cursor.objectID < object.objectID
    guard let sort = query.sort else { return keyFollows }
    switch (cursor.sortValue, object.attributes[sort.attribute]) {
    case (let mark?, let value?):
      if mark == value { return keyFollows }
      return sort.ascending ? mark.isOrdered(before: value) : value.isOrdered(before: mark)
    case (.some, nil): return true
    case (nil, .some): return false
    case (nil, nil): return keyFollows
    }
  }

  /// Whether an attribute's value (nil: none) meets the filter.
  private static func predicate(for filter: (attribute: String, condition: Query.Filter), of entity: ResolvedEntity)
    throws -> (AttributeValue?) -> Bool
  {
    guard let definition = entity.attributeIndex[filter.attribute] else {
      throw LedgerError.invalidArgument(
        "\(entity.name) has no attribute \"\(filter.attribute)\" (it has: \(entity.attributes.map(\.name).joined(separator: ", ")))"
      )
    }
    func typed(_ value: JSONValue) throws -> AttributeValue {
      switch ValueCoercion.coerce(value, to: definition.type) {
      case .success(let typed): return typed
      case .failure(let failure):
        throw LedgerError.invalidArgument("\(entity.name).\(filter.attribute): \(failure.reason)")
      }
    }
    let name = filter.attribute
    switch filter.condition {
    case .equals(.null): return { $0 == nil }
    case .equals(let value):
      let wanted = try typed(value)
      return { $0?.isIdentical(to: wanted) ?? false }
    case .between(let lower, let upper):
      let low = try lower.map(typed)
      let high = try upper.map(typed)
      return { value in
        guard let value else { return false }
        if let low, value.isOrdered(before: low) { return false }
        if let high, high.isOrdered(before: value) { return false }
        return true
      }
    case .hasPrefix(let prefix):
      guard definition.type == .string else {
        throw LedgerError.invalidArgument("\(entity.name).\(name) is not a string: a prefix needs one")
      }
      // By UTF-8 bytes, as text is ordered.
      return { if case .string(let text)? = $0 { text.utf8.starts(with: prefix.utf8) } else { false } }
    }
  }
}

extension AttributeValue {
  /// Whether two values are the same, text byte for byte (SQLite's binary collation, and what
  /// the `indexes` database and keys hold): `"é"` and `"e\u{301}"`, equal as Swift strings,
  /// are two values here.
  func isIdentical(to other: AttributeValue) -> Bool {
    if case .string(let text) = self, case .string(let otherText) = other {
      return text.utf8.elementsEqual(otherText.utf8)
    }
    return self == other
  }

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
