/// How relationships appear in exported JSON.
public enum RelationshipExport: Sendable, Hashable {
  /// Left out.
  case none
  /// The related objects' keys: a key (or `null`) for a to-one, an array of keys for a to-many.
  case ids
  /// The related objects, nested, down to `depth` levels; an object already being written
  /// higher up the same branch is written as its key instead (no cycles).
  case nested(depth: Int)
  /// Rails' `accepts_nested_attributes_for`: `<name>_attributes`, a to-many as a dictionary
  /// keyed `"0"`, `"1"`, … (Sync's `.nested`).
  case rails(depth: Int)
}

/// Options for `View.exportJSON` and `View.exportDocument`.
public struct ExportOptions: Sendable {
  /// How relationships appear.
  public var relationships: RelationshipExport
  /// Overrides the model's key case.
  public var keyCase: KeyCase?
  /// Overrides the model's date format.
  public var dateFormat: DateFormat?
  /// In a nested export, whether a nested object keeps the relationship that points back to
  /// the object it is nested in (the inverse of the one descended). Off by default, as Sync
  /// and Groot export: each nested label listing every issue that carries it made a nested
  /// export grow with the square of the objects.
  public var keepsInverseRelationships = false

  /// Write the model's own names (no custom keys, key paths or reserved words) and every
  /// attribute, exported or not: the shape `Decodable` structs are decoded from.
  var usesModelNames = false

  /// Options with these choices; nil overrides keep the model's setting.
  public init(relationships: RelationshipExport = .ids, keyCase: KeyCase? = nil, dateFormat: DateFormat? = nil) {
    self.relationships = relationships
    self.keyCase = keyCase
    self.dateFormat = dateFormat
  }
}
