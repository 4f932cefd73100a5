/// The one rule for a key a caller gives to name an object (a read, `log`, a deletion, a
/// parent scope, every command of the tool), in any of its shapes:
///
/// - a bare value for a single identity (`"Japan"`, `42`, `"42"` for an integer key);
/// - for a composite identity, an array in identity order (`["Hearts", "J"]`), an object of
///   the identity attributes by name or by JSON key (`{"suit": "Hearts", "rank": "J"}`), or
///   one string of the values separated by commas (`"Hearts,J"`, the command line's form).
///
/// Each value is coerced to its attribute's type as an import would.
enum CallerKey {
  /// The identity values `key` names for `entity`, or why it names none.
  static func identity(of entity: ResolvedEntity, key: JSONValue, keyCase: KeyCase, model: Model? = nil) -> Result<
    [AttributeValue], Failure
  > {
    guard !entity.identity.isEmpty else {
      return .failure(Failure("\(entity.name) has no identity: its objects cannot be looked up by key"))
    }
    if let single = singleValue(of: entity, key: key) { return single.map { [$0] } }
    let composite = entity.identity.count > 1
    let parts: [JSONValue]
    switch key {
    case .array(let values): parts = values
    case .object(let object):
      parts = entity.identity.map { name in
        let jsonKey = entity.attributeIndex[name]?.jsonKey ?? KeyInflection.jsonKey(for: name, keyCase: keyCase)
        return object[name] ?? object[jsonKey] ?? .null
      }
    case .string(let text) where composite:
      parts = text.split(separator: ",", omittingEmptySubsequences: false).map { .string(String($0)) }
    default: parts = [key]
    }
    guard parts.count == entity.identity.count else {
      return .failure(
        Failure(
          "\(entity.name) is identified by \(entity.identity.joined(separator: ", ")): give \(entity.identity.count) key values"
        ))
    }
    var values: [AttributeValue] = []
    for (identityPart, part) in zip(entity.identityParts, parts) {
      switch identityPart {
      case .attribute(let attribute):
        switch ValueCoercion.coerce(part, to: attribute.type) {
        case .success(let value): values.append(value)
        case .failure(let failure): return .failure(Failure("not a key of \(entity.name): \(failure.reason)"))
        }
      case .relationship(let relationship):
        // The key of the object the relationship points to: one value of its key attribute,
        // or a composite key as an array.
        guard let destination = model?.destination(of: relationship) else {
          return .failure(Failure("\(relationship.name) points to no entity of the model"))
        }
        switch identity(of: destination, key: part, keyCase: keyCase, model: model) {
        case .success(let key): values.append(Mapper.keyPart(ofIdentity: key))
        case .failure(let failure): return .failure(failure)
        }
      }
    }
    return .success(values)
  }

  /// The one identity value a bare `key` names for an entity identified by a single
  /// attribute, the common read by key: coerced as it is, with no list of parts made and no
  /// attribute looked up by name. Nil when `key` is not of that shape (`identity(of:key:)`
  /// then reads it).
  static func singleValue(of entity: ResolvedEntity, key: JSONValue) -> Result<AttributeValue, Failure>? {
    guard let attribute = entity.keyAttribute else { return nil }
    switch key {
    case .array, .object: return nil
    default:
      switch ValueCoercion.coerce(key, to: attribute.type) {
      case .success(let value): return .success(value)
      case .failure(let failure): return .failure(Failure("not a key of \(entity.name): \(failure.reason)"))
      }
    }
  }

  /// The text a bare string key is, for an entity whose key is one string attribute: the
  /// usual read by key, which `singleValue(of:key:)` takes as it is, read with no value made.
  /// Nil for any other key or entity.
  static func soleText(of entity: ResolvedEntity, key: JSONValue) -> String? {
    guard case .string(let text) = key, entity.keyAttribute?.type == .string else { return nil }
    return text
  }

  /// Why a key names no object.
  struct Failure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }
}
