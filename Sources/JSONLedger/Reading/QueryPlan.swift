/// A query's conditions made ready for one entity: each condition a test on a snapshot and,
/// where the `indexes` database can answer it, the ranges of index entries that hold its
/// matches. Built once per run of a query; every value is coerced before the first object is
/// read, so a bad value is an error even on an empty store.
struct QueryPlan {
  /// A range of one indexed attribute's entries: from `start` (an encoded value or a prefix
  /// of one) until `isPastEnd` says an entry's encoded value lies beyond it.
  struct IndexRange {
    var attribute: String
    var start: [UInt8]
    var isPastEnd: (ArraySlice<UInt8>) -> Bool
  }

  struct Test {
    var holds: (ObjectSnapshot) -> Bool
    /// The index ranges holding every object that meets the condition (and maybe others);
    /// nil when the index cannot answer it.
    var ranges: [IndexRange]?
  }

  let entity: ResolvedEntity
  /// Every group must hold; in a group, one test.
  let groups: [[Test]]
  let sortKeys: [Query.SortKey]
  /// Whether matching objects are placeholders (nil: either).
  let placeholders: Bool?

  init(_ query: Query, entity: ResolvedEntity, reader: SnapshotReader) throws {
    self.entity = entity
    var keyTable: EntityKeyTable?
    func table() -> EntityKeyTable {
      if let keyTable { return keyTable }
      let made = EntityKeyTable(entity: entity, model: reader.model)
      keyTable = made
      return made
    }
    func named(_ name: String) -> Property? {
      if let attribute = entity.attributeIndex[name] { return .attribute(attribute) }
      if let relationship = entity.relationshipIndex[name] { return .relationship(relationship) }
      // A JSON key (`full_name`, `repository_id`) names its property as an import reads it.
      switch table().target(forKey: name) {
      case .attribute(let attribute, _)?: return .attribute(attribute)
      case .relationship(let relationship, _)?: return .relationship(relationship)
      case nil: return nil
      }
    }
    func property(_ name: String) throws -> Property {
      if let found = named(name) { return found }
      // A dotted JSON key: an attribute's key path (`sprites.front_default`), or a to-one
      // relationship and its target's key (`damage_class.name`).
      let segments = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
      if segments.count > 1 {
        for (target, path) in table().keyPaths where path == segments {
          switch target {
          case .attribute(let attribute, _): return .attribute(attribute)
          case .relationship(let relationship, _): return .relationship(relationship)
          }
        }
        if segments.count == 2, case .relationship(let relationship)? = named(segments[0]),
          let destination = reader.model.destination(of: relationship), let key = destination.keyAttribute,
          key.name == segments[1] || key.jsonKey == segments[1]
            || KeyInflection.jsonKey(for: key.name, keyCase: reader.model.keyCase) == segments[1]
        {
          return .relationship(relationship)
        }
      }
      let names = entity.attributes.map(\.name) + entity.relationships.map(\.name)
      throw LedgerError.invalidQuery(
        entity: entity.name,
        "\(entity.name) has no attribute or relationship \"\(name)\" (it has: \(names.joined(separator: ", ")))")
    }
    self.groups = try query.conditions.map { group in
      try group.map { condition in
        switch try property(condition.property) {
        case .attribute(let attribute):
          return try Self.test(condition.filter, on: attribute, of: entity, indexed: reader.store.asOf == nil)
        case .relationship(let relationship):
          return try Self.test(condition.filter, on: relationship, of: entity, reader: reader)
        }
      }
    }
    var sortKeys: [Query.SortKey] = []
    for key in query.sortKeys {
      guard case .attribute(let attribute)? = named(key.attribute) else {
        throw LedgerError.invalidQuery(
          entity: entity.name, "\(entity.name) has no attribute \"\(key.attribute)\" to sort by")
      }
      sortKeys.append(Query.SortKey(attribute.name, ascending: key.ascending))
    }
    self.sortKeys = sortKeys
    placeholders =
      switch query.placeholders {
      case .only?: true
      case .excluded?: false
      case nil: nil
      }
  }

  private enum Property {
    case attribute(Attribute)
    case relationship(ResolvedRelationship)
  }

  /// Whether `object` meets every group.
  func matches(_ object: ObjectSnapshot) -> Bool {
    if let placeholders, object.isPlaceholder != placeholders { return false }
    return groups.allSatisfy { group in group.contains { $0.holds(object) } }
  }

  /// The index ranges of the first group the index can answer whole, or nil: the objects in
  /// them are a superset of the matches.
  var indexRanges: [IndexRange]? {
    for group in groups where !group.isEmpty {
      let ranges = group.map(\.ranges)
      if ranges.allSatisfy({ $0 != nil }) { return ranges.flatMap { $0 ?? [] } }
    }
    return nil
  }

  // MARK: - Attributes

  private static func test(_ filter: Query.Filter, on attribute: Attribute, of entity: ResolvedEntity, indexed: Bool)
    throws -> Test
  {
    let name = attribute.name
    func typed(_ value: JSONValue) throws -> AttributeValue {
      switch ValueCoercion.coerce(value, to: attribute.type) {
      case .success(let typed): return typed
      case .failure(let failure):
        throw LedgerError.invalidQuery(entity: entity.name, "\(entity.name).\(name): \(failure.reason)")
      }
    }
    // Ranges only where the index is current (not in a point-in-time view) and ordered as
    // the values are (decimals' encoding is not in numeric order).
    let usesIndex = indexed && attribute.isIndexed
    func equalRange(_ value: AttributeValue) -> IndexRange {
      let start = StoreKeys.indexValue(value)
      return IndexRange(attribute: name, start: start) { !$0.starts(with: start) }
    }
    switch filter {
    case .equals(.null), .isNull:
      return Test(holds: { $0.attributes[name] == nil }, ranges: nil)
    case .isNotNull:
      return Test(holds: { $0.attributes[name] != nil }, ranges: nil)
    case .equals(let value):
      let wanted = try typed(value)
      return Test(
        holds: { $0.attributes[name] == wanted },
        ranges: usesIndex ? [equalRange(wanted)] : nil)
    case .notEquals(.null):
      return Test(holds: { $0.attributes[name] != nil }, ranges: nil)
    case .notEquals(let value):
      let unwanted = try typed(value)
      return Test(
        holds: { object in object.attributes[name].map { $0 != unwanted } ?? false }, ranges: nil)
    case .lessThan(let value):
      let bound = try typed(value)
      return Test(holds: { $0.attributes[name]?.isOrdered(before: bound) ?? false }, ranges: nil)
    case .greaterThan(let value):
      let bound = try typed(value)
      return Test(
        holds: { object in object.attributes[name].map { bound.isOrdered(before: $0) } ?? false }, ranges: nil)
    case .oneOf(let values):
      let wanted = try values.filter { $0 != .null }.map(typed)
      let takesNull = values.contains(.null)
      return Test(
        holds: { object in
          guard let value = object.attributes[name] else { return takesNull }
          return wanted.contains(value)
        },
        ranges: usesIndex && !takesNull ? wanted.map(equalRange) : nil)
    case .between(let lower, let upper):
      let low = try lower.map(typed)
      let high = try upper.map(typed)
      var ranges: [IndexRange]?
      if usesIndex, attribute.type != .decimal {
        let end = high.map(StoreKeys.indexValue)
        ranges = [
          IndexRange(attribute: name, start: low.map(StoreKeys.indexValue) ?? []) { value in
            end.map { $0.lexicographicallyPrecedes(value) && !value.starts(with: $0) } ?? false
          }
        ]
      }
      return Test(
        holds: { object in
          guard let value = object.attributes[name] else { return false }
          if let low, value.isOrdered(before: low) { return false }
          if let high, high.isOrdered(before: value) { return false }
          return true
        }, ranges: ranges)
    case .hasPrefix(let prefix):
      guard attribute.type == .string else {
        throw LedgerError.invalidQuery(
          entity: entity.name, "\(entity.name).\(name) is not a string: a prefix needs one")
      }
      // The encoding of the prefix as a string, without the end mark: every string that
      // starts with it starts with these bytes.
      let start = Array(StoreKeys.indexValue(.string(prefix)).dropLast(2))
      return Test(
        // By UTF-8 bytes, as text is ordered.
        holds: {
          if case .string(let text)? = $0.attributes[name] { text.utf8.starts(with: prefix.utf8) } else { false }
        },
        ranges: usesIndex ? [IndexRange(attribute: name, start: start) { !$0.starts(with: start) }] : nil)
    case .contains:
      throw LedgerError.invalidQuery(
        entity: entity.name,
        "\(entity.name).\(name) is an attribute: `contains` takes a to-many relationship")
    }
  }

  // MARK: - Relationships

  private static func test(
    _ filter: Query.Filter, on relationship: ResolvedRelationship, of entity: ResolvedEntity, reader: SnapshotReader
  ) throws -> Test {
    let name = relationship.name
    let destination = try reader.entity(relationship.declaration.destination)
    let family = Set(destination.family)
    func identity(_ key: JSONValue) throws -> [AttributeValue] {
      switch CallerKey.identity(of: destination, key: key, keyCase: reader.model.keyCase, model: reader.model) {
      case .success(let values): return values
      case .failure(let failure):
        throw LedgerError.invalidQuery(entity: entity.name, "\(entity.name).\(name): \(failure.reason)")
      }
    }
    func links(_ object: ObjectSnapshot, to identity: [AttributeValue]) -> Bool {
      (object.relationships[name] ?? []).contains { target in
        family.contains(target.entity) && target.identity.elementsEqual(identity)
      }
    }
    func isEmpty(_ object: ObjectSnapshot) -> Bool { (object.relationships[name] ?? []).isEmpty }
    let kind = relationship.isToMany ? "to-many" : "to-one"
    switch filter {
    case .equals(.null), .isNull:
      return Test(holds: isEmpty, ranges: nil)
    case .isNotNull:
      return Test(holds: { !isEmpty($0) }, ranges: nil)
    case .equals(let key) where !relationship.isToMany, .contains(let key) where relationship.isToMany:
      let wanted = try identity(key)
      return Test(holds: { links($0, to: wanted) }, ranges: nil)
    case .notEquals(.null):
      return Test(holds: { !isEmpty($0) }, ranges: nil)
    case .notEquals(let key) where !relationship.isToMany:
      let unwanted = try identity(key)
      return Test(holds: { !isEmpty($0) && !links($0, to: unwanted) }, ranges: nil)
    case .oneOf(let keys) where !relationship.isToMany:
      let wanted = try keys.filter { $0 != .null }.map(identity)
      let takesNull = keys.contains(.null)
      return Test(
        holds: { object in
          if isEmpty(object) { return takesNull }
          return wanted.contains { links(object, to: $0) }
        }, ranges: nil)
    case .equals, .oneOf, .notEquals:
      throw LedgerError.invalidQuery(
        entity: entity.name,
        "\(entity.name).\(name) is a to-many relationship: use `contains` for one of its objects")
    case .contains:
      throw LedgerError.invalidQuery(
        entity: entity.name,
        "\(entity.name).\(name) is a to-one relationship: use `equals` for the object it links")
    case .between, .hasPrefix, .lessThan, .greaterThan:
      throw LedgerError.invalidQuery(
        entity: entity.name,
        "\(entity.name).\(name) is a \(kind) relationship: it takes =, !=, in, contains, is null or is not null")
    }
  }
}
