extension View {
  /// The objects of `entity` whose attribute `attribute` equals `value` (coerced to the
  /// attribute's type: `"1974"` matches an integer 1974), in the order they were first stored.
  public func objects(_ entity: String, where attribute: String, equals value: JSONValue) throws -> [ObjectSnapshot] {
    let resolved = try reader.entity(entity)
    guard let definition = resolved.attributeIndex[attribute] else {
      throw LedgerError.invalidArgument(
        "\(entity) has no attribute \"\(attribute)\" (it has: \(resolved.attributes.map(\.name).joined(separator: ", ")))"
      )
    }
    let wanted: AttributeValue?
    if value == .null {
      wanted = nil
    } else {
      switch ValueCoercion.coerce(value, to: definition.type) {
      case .success(let typed): wanted = typed
      case .failure(let failure): throw LedgerError.invalidArgument("\(entity).\(attribute): \(failure.reason)")
      }
    }
    if definition.isIndexed, let wanted {
      return try reader.indexedObjects(resolved, attribute: attribute, equals: wanted)
    }
    var matches: [ObjectSnapshot] = []
    try reader.forEachObject(entity) { object in
      switch (object.attributes[attribute], wanted) {
      case (nil, nil): matches.append(object)
      case (let value?, let wanted?) where value.isIdentical(to: wanted): matches.append(object)
      default: break
      }
    }
    return matches
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
}
