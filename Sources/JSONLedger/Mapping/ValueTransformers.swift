/// Named value transformers that a model's attributes refer to by name (Groot's
/// `JSONTransformerName`, Sync's `sync.valueTransformer`): forward on import, reverse on export.
///
/// ```swift
/// var transformers = ValueTransformers()
/// transformers.register("StringToInt", forward: { value in
///   guard case .string(let text) = value, let number = Int(text) else { return value }
///   return .number(JSONNumber(number))
/// }, reverse: { value in .string(JSONWriter().string(from: value)) })
/// ```
public struct ValueTransformers: Sendable {
  /// A transformer of one JSON value.
  public struct Transformer: Sendable {
    /// Applied to the JSON value on import.
    public var forward: @Sendable (JSONValue) throws -> JSONValue
    /// Applied to the stored value on export; nil for a forward-only transformer.
    public var reverse: (@Sendable (JSONValue) throws -> JSONValue)?
  }

  private(set) var transformers: [String: Transformer] = [:]
  private(set) var dictionaryTransformers: [String: @Sendable (JSONObject) throws -> JSONObject] = [:]
  private(set) var entityMappers: [String: @Sendable (JSONObject) -> String?] = [:]
  /// When true, a transformer the model names but nobody registered passes values through
  /// unchanged instead of failing to open the model.
  public var passesUnknownThrough = false

  /// No transformers.
  public init() {}

  /// Registers (or replaces) the transformer called `name`.
  public mutating func register(
    _ name: String, forward: @escaping @Sendable (JSONValue) throws -> JSONValue,
    reverse: (@Sendable (JSONValue) throws -> JSONValue)? = nil
  ) {
    transformers[name] = Transformer(forward: forward, reverse: reverse)
  }

  /// Registers a dictionary transformer: it sees (and may rewrite) each whole JSON object of
  /// the entities that name it, before mapping (Groot's `JSONDictionaryTransformerName`).
  public mutating func registerDictionaryTransformer(
    _ name: String, _ transform: @escaping @Sendable (JSONObject) throws -> JSONObject
  ) {
    dictionaryTransformers[name] = transform
  }

  /// Registers an entity mapper: given a JSON object, it names the sub-entity to create, or
  /// nil for the entity itself (Groot's `entityMapperName`).
  public mutating func registerEntityMapper(_ name: String, _ mapper: @escaping @Sendable (JSONObject) -> String?) {
    entityMappers[name] = mapper
  }

  /// The transformer called `name`, if registered.
  public subscript(name: String) -> Transformer? { transformers[name] }

  /// Checks that every transformer `model` names is registered (unless passing through).
  func validate(_ model: Model) throws(ModelError) {
    guard !passesUnknownThrough else { return }
    var problems: [ModelError.Problem] = []
    for entity in model.entities {
      if let name = entity.dictionaryTransformer, dictionaryTransformers[name] == nil {
        problems.append(
          .init(
            place: "entities.\(entity.name).dictionaryTransformer",
            reason: "the dictionary transformer \"\(name)\" is not registered"))
      }
      if let name = entity.entityMapper, entityMappers[name] == nil {
        problems.append(
          .init(
            place: "entities.\(entity.name).entityMapper", reason: "the entity mapper \"\(name)\" is not registered"))
      }
      for attribute in entity.attributes {
        if let name = attribute.transformer, transformers[name] == nil {
          problems.append(
            .init(
              place: "entities.\(entity.name).attributes.\(attribute.name).transformer",
              reason: "the value transformer \"\(name)\" is not registered (register it, or open with pass-through)"))
        }
      }
    }
    if !problems.isEmpty { throw ModelError(problems: problems) }
  }
}
