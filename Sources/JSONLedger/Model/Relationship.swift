/// A relationship from one entity to another.
///
/// ```swift
/// Relationship("albums", to: "Album", many: true, inverse: "band")
/// ```
public struct Relationship: Sendable, Hashable {
  /// The relationship's name in the model.
  public var name: String
  /// The entity it points to.
  public var destination: String
  /// Whether it holds many objects (else at most one).
  public var isToMany: Bool
  /// Whether a to-many keeps the order given in the JSON.
  public var isOrdered: Bool
  /// The relationship on the destination that points back; both sides are kept in step.
  public var inverse: String?
  /// A custom JSON key or dotted key path.
  public var jsonKey: String?
  /// Whether export writes it.
  public var isExported: Bool
  /// Whether objects this relationship stops pointing to are deleted, not only unlinked.
  public var deletesOrphans: Bool
  /// What deleting an object does to the objects this relationship links it to.
  public var deletionRule: DeletionRule
  /// Whether the relationship owns its targets (a component, as Datomic's component
  /// attributes): they belong to the object that links them, arrive only nested in it, are
  /// identified by it (and their own identity, else their position in an ordered list, else
  /// their values), are deleted with it or when its list drops them, and are exported inline.
  public var owns: Bool
  /// The name this relationship had in the previous version of the model (Core Data's
  /// `renamingIdentifier`): migrating a store carries its links over.
  public var renamedFrom: String?

  /// What deleting an object does to the objects a relationship links it to (Core Data's
  /// deletion rules).
  public enum DeletionRule: String, Sendable, Hashable, CaseIterable {
    /// The links are removed; the other objects stay (the default).
    case nullify
    /// The linked objects are deleted too.
    case cascade
    /// The delete is refused while the relationship links anything.
    case deny
  }

  /// A relationship named `name` to `destination`.
  public init(
    _ name: String, to destination: String, many: Bool = false, ordered: Bool = false,
    inverse: String? = nil, jsonKey: String? = nil, exported: Bool = true, deleteOrphans: Bool = false,
    deletionRule: DeletionRule = .nullify, owns: Bool = false, renamedFrom: String? = nil
  ) {
    self.name = name
    self.destination = destination
    self.isToMany = many
    self.isOrdered = ordered
    self.inverse = inverse
    self.jsonKey = jsonKey
    self.isExported = exported
    self.deletesOrphans = deleteOrphans
    self.deletionRule = deletionRule
    self.owns = owns
    self.renamedFrom = renamedFrom
  }
}
