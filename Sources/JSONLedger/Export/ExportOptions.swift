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

  /// The names a request or a command line gives the modes by.
  public static let names = ["none", "ids", "nested", "rails"]

  /// The mode called `name` (`names`), nested and rails ones down to `depth` (1 to 100)
  /// levels; `LedgerError.invalidArgument` for another name or depth.
  public init(named name: String, depth: Int = 3) throws(LedgerError) {
    guard (1...100).contains(depth) else {
      throw .invalidArgument("depth must be from 1 to 100, not \(depth)")
    }
    switch name {
    case "none": self = .none
    case "ids": self = .ids
    case "nested": self = .nested(depth: depth)
    case "rails": self = .rails(depth: depth)
    default:
      throw .invalidArgument("relationships must be none, ids, nested or rails, not \"\(name.prefix(80))\"")
    }
  }
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
  /// Relationships written as nested objects whatever `relationships` says, by name (the
  /// model's or the JSON key's), at every level: `export --nest types,abilities`. The
  /// others are written as `relationships` says. Rows a relationship owns are always nested.
  public var nestedRelationships: Set<String> = []
  /// Whether placeholders (objects known only because something referred to them by key,
  /// `ObjectSnapshot.isPlaceholder`) are exported as objects. Nil, the default: a whole-store
  /// export leaves them out (the backend never sent them, and importing them back would make
  /// them look delivered), and an export of one entity lists them, as objects of the entity
  /// (Groot's stubs). References to them are written as keys either way.
  public var includesPlaceholders: Bool?

  /// Whether an object exported alone, or in a page of a query, says it is a placeholder
  /// (`"placeholder": true`, only when it is one): what `get --json` and the HTTP API show.
  /// Off for exports, whose objects are the backend's shape.
  public var marksPlaceholders = false

  /// These options with `includesPlaceholders` decided for an export of `entity` (nil: the
  /// whole store).
  func deciding(placeholdersFor entity: String?) -> ExportOptions {
    var decided = self
    decided.includesPlaceholders = includesPlaceholders ?? (entity != nil)
    decided.listsEveryCollection = entity == nil
    return decided
  }

  /// Whether the export lists every collection (a whole-store export): an object with no
  /// identity and no owner is then written once, in its own collection when it writes its
  /// links back, else inside the one object that links to it (`Exporter.RelationshipField`).
  var listsEveryCollection = false

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
