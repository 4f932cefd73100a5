/// An attribute of an entity: a named, typed field.
///
/// ```swift
/// Attribute("founded", .date, jsonKey: "info.founded", exported: false)
/// ```
public struct Attribute: Sendable, Hashable {
  /// The attribute's name in the model (`bandDescription`).
  public var name: String
  /// The value type.
  public var type: AttributeType
  /// A custom JSON key, or a dotted key path (`info.founded`) into nested objects.
  public var jsonKey: String?
  /// The name of a registered value transformer applied on import (forward) and export (reverse).
  public var transformer: String?
  /// Whether export writes it.
  public var isExported: Bool
  /// Whether it may be nil. A non-optional attribute must be given when a payload creates
  /// an object (stubs made from a bare key are exempt), and `null` for it is an error.
  /// A Core Data attribute with a default value counts as optional.
  public var isOptional: Bool
  /// Whether the projector keeps an index for lookups by value.
  public var isIndexed: Bool
  /// The name this attribute had in the previous version of the model (Core Data's
  /// `renamingIdentifier`): migrating a store carries its values over.
  public var renamedFrom: String?

  /// An attribute named `name` of type `type`.
  public init(
    _ name: String, _ type: AttributeType, jsonKey: String? = nil, transformer: String? = nil,
    exported: Bool = true, optional: Bool = true, indexed: Bool = false, renamedFrom: String? = nil
  ) {
    self.name = name
    self.type = type
    self.jsonKey = jsonKey
    self.transformer = transformer
    self.isExported = exported
    self.isOptional = optional
    self.isIndexed = indexed
    self.renamedFrom = renamedFrom
  }
}
