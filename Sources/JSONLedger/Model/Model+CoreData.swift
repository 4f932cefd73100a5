import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

extension Model {
  /// Loads an Xcode Core Data model: an `.xcdatamodeld` folder (its current version from
  /// `.xccurrentversion`, else the last version), an `.xcdatamodel` folder, or its `contents`
  /// XML. User-info annotations of JSONCache, Groot and Sync keep their meaning:
  ///
  /// - identity: `JC.isIdentifier` (true/yes, any case), `sync.isPrimaryKey` /
  ///   `hyper.isPrimaryKey` (`YES`/`true`), Groot's `identityAttributes` (comma-separated,
  ///   composite) and legacy `identityAttribute`;
  /// - custom keys: `sync.remoteKey` / `hyper.remoteKey`, Groot's `JSONKeyPath` (an entity
  ///   using `JSONKeyPath` maps only its annotated properties);
  /// - `sync.nonExportable` / `hyper.nonExportable` (present: not exported);
  /// - transformers: `sync.valueTransformer` / `hyper.valueTransformer`, `JSONTransformerName`.
  ///
  /// The `sync.` spelling wins over `hyper.` when both are present.
  public init(coreDataModelAt path: String) throws {
    let contents = try Self.coreDataContentsPath(path)
    guard let data = FileManager.default.contents(atPath: contents) else {
      throw ModelError(source: path, problems: [.init(place: "", reason: "cannot read \(contents)")])
    }
    let reader = CoreDataXMLReader()
    let parser = XMLParser(data: data)
    parser.delegate = reader
    guard parser.parse() else {
      let line = parser.lineNumber
      throw ModelError(
        source: contents,
        problems: [
          .init(
            place: "line \(line)", reason: "malformed XML: \(parser.parserError.map { "\($0)" } ?? "unknown error")")
        ])
    }
    // Reading the entities finds their problems (an attribute type Core Data does not have):
    // they are checked after it, not before.
    let entities = reader.entities()
    if !reader.problems.isEmpty { throw ModelError(source: contents, problems: reader.problems) }
    guard reader.sawModel, !entities.isEmpty else {
      let reason = reader.sawModel ? "the model declares no entities" : "no <model> element: not a Core Data model"
      throw ModelError(source: contents, problems: [.init(place: "", reason: reason)])
    }
    do { try self.init(keyCase: .snakeCase, dateFormat: .iso8601, entities: entities) } catch var error {
      error.source = contents
      throw error
    }
    warnings = reader.warnings
  }

  static func coreDataContentsPath(_ path: String) throws -> String {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
      return path
    }
    if path.hasSuffix(".xcdatamodeld") || path.hasSuffix(".xcdatamodeld/") {
      let versions = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter {
        $0.hasSuffix(".xcdatamodel")
      }.sorted()
      var chosen = versions.last
      if let plist = FileManager.default.contents(atPath: path + "/.xccurrentversion"),
        let object = try? PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any],
        let current = object["_XCCurrentVersionName"] as? String
      {
        chosen = current
      }
      guard let chosen else {
        throw ModelError(
          source: path, problems: [.init(place: "", reason: "the .xcdatamodeld folder holds no .xcdatamodel version")])
      }
      return path + "/" + chosen + "/contents"
    }
    return path + "/contents"
  }
}

/// Reads the `contents` XML of an `.xcdatamodel`.
final class CoreDataXMLReader: NSObject, XMLParserDelegate {
  private struct PendingProperty {
    var isRelationship: Bool
    var attributes: [String: String]
    var userInfo: [String: String] = [:]
  }

  private struct PendingEntity {
    var attributes: [String: String]
    var userInfo: [String: String] = [:]
    var properties: [PendingProperty] = []
    /// Each uniqueness constraint's attribute names.
    var constraints: [[String]] = []
    /// Properties named by a fetch index.
    var fetchIndexed: Set<String> = []
  }

  private var pending: [PendingEntity] = []
  private var currentEntity: PendingEntity?
  private var currentProperty: PendingProperty?
  private var currentConstraint: [String]?
  private(set) var sawModel = false
  var problems: [ModelError.Problem] = []
  /// What was read but is ignored, as Core Data ignores it.
  private(set) var warnings: [String] = []

  func parser(
    _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
    attributes: [String: String] = [:]
  ) {
    switch name {
    case "model": sawModel = true
    case "uniquenessConstraint": currentConstraint = []
    case "constraint": if let value = attributes["value"] { currentConstraint?.append(value) }
    case "fetchIndexElement": if let property = attributes["property"] { currentEntity?.fetchIndexed.insert(property) }
    case "entity": currentEntity = PendingEntity(attributes: attributes)
    case "attribute": currentProperty = PendingProperty(isRelationship: false, attributes: attributes)
    case "relationship": currentProperty = PendingProperty(isRelationship: true, attributes: attributes)
    case "entry":
      guard let key = attributes["key"] else { return }
      let value = attributes["value"] ?? ""
      if currentProperty != nil { currentProperty?.userInfo[key] = value } else { currentEntity?.userInfo[key] = value }
    default: break
    }
  }

  func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
    switch name {
    case "attribute", "relationship":
      if let property = currentProperty { currentEntity?.properties.append(property) }
      currentProperty = nil
    case "uniquenessConstraint":
      if let constraint = currentConstraint, !constraint.isEmpty { currentEntity?.constraints.append(constraint) }
      currentConstraint = nil
    case "entity":
      if let entity = currentEntity { pending.append(entity) }
      currentEntity = nil
    default: break
    }
  }

  private static func type(_ name: String?) -> AttributeType? {
    switch name {
    case "Integer 16": .int16
    case "Integer 32": .int32
    case "Integer 64": .int64
    case "Decimal": .decimal
    case "Double": .double
    case "Float": .float
    case "String": .string
    case "Boolean": .bool
    case "Date": .date
    case "Binary": .binary
    case "Transformable": .json
    case "UUID": .uuid
    case "URI": .url
    default: nil
    }
  }

  /// Core Data's `deletionRule` (`No Action` leaves links to be nullified).
  private static func deletionRule(_ name: String?) -> Relationship.DeletionRule {
    switch name {
    case "Cascade": .cascade
    case "Deny": .deny
    default: .nullify
    }
  }

  /// Core Data's `renamingIdentifier`, unless it is the element's own name (Xcode often
  /// writes that, meaning no rename).
  private static func renamingIdentifier(_ attributes: [String: String], name: String) -> String? {
    guard let identifier = attributes["renamingIdentifier"], !identifier.isEmpty, identifier != name else { return nil }
    return identifier
  }

  /// The first present value among keys (the `sync.` spelling first).
  private static func value(_ info: [String: String], _ keys: String...) -> String? {
    keys.lazy.compactMap { info[$0] }.first
  }

  func entities() -> [Entity] {
    warnings = []
    return pending.map { pendingEntity in
      let name = pendingEntity.attributes["name"] ?? ""
      var entity = Entity(name)
      entity.parent = pendingEntity.attributes["parentEntity"]
      entity.isAbstract = pendingEntity.attributes["isAbstract"] == "YES"
      let info = pendingEntity.userInfo
      if let list = info["identityAttributes"] ?? info["identityAttribute"] {
        entity.identity = list.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
      }
      entity.mapsOnlyCustomKeys = pendingEntity.properties.contains { $0.userInfo["JSONKeyPath"] != nil }
      entity.dictionaryTransformer = info["JSONDictionaryTransformerName"]
      entity.entityMapper = info["entityMapperName"]
      entity.renamedFrom = Self.renamingIdentifier(pendingEntity.attributes, name: name)
      var flaggedIdentity: [String] = []
      for property in pendingEntity.properties {
        let propertyName = property.attributes["name"] ?? ""
        let info = property.userInfo
        let jsonKey = Self.value(info, "sync.remoteKey", "hyper.remoteKey", "JSONKeyPath")
        let exported = Self.value(info, "sync.nonExportable", "hyper.nonExportable") == nil
        if property.isRelationship {
          let many = property.attributes["toMany"] == "YES"
          var ordered = property.attributes["ordered"] == "YES"
          if ordered, !many {
            warnings.append(
              "\(name).\(propertyName): ordered on a to-one relationship is ignored, as Core Data ignores it")
            ordered = false
          }
          // Owned rows only by annotation: a cascade rule alone also deletes shared targets
          // (a user's posts), which owning would make rows of the user.
          let owns = ["yes", "true"].contains(Self.value(info, "owns", "jsonledger.owns")?.lowercased() ?? "")
          entity.relationships.append(
            Relationship(
              propertyName, to: property.attributes["destinationEntity"] ?? "", many: many, ordered: ordered,
              inverse: property.attributes["inverseName"], jsonKey: jsonKey, exported: exported,
              deletionRule: Self.deletionRule(property.attributes["deletionRule"]), owns: owns,
              renamedFrom: Self.renamingIdentifier(property.attributes, name: propertyName)))
          continue
        }
        // A transient attribute is not stored, whatever its type (often Undefined).
        if property.attributes["transient"] == "YES" { continue }
        guard let type = Self.type(property.attributes["attributeType"]) else {
          problems.append(
            .init(
              place: "entities.\(name).attributes.\(propertyName)",
              reason: "unknown attribute type \"\(property.attributes["attributeType"] ?? "")\""))
          continue
        }
        let transformer = Self.value(info, "sync.valueTransformer", "hyper.valueTransformer", "JSONTransformerName")
        // A Transformable attribute with no transformer named for JSON has no JSON form (Sync
        // ignores it): it is not mapped, stored or exported.
        if property.attributes["attributeType"] == "Transformable", transformer == nil { continue }
        entity.attributes.append(
          Attribute(
            propertyName, type, jsonKey: jsonKey, transformer: transformer, exported: exported,
            optional: property.attributes["optional"] == "YES" || property.attributes["defaultValueString"] != nil,
            indexed: property.attributes["indexed"] == "YES" || pendingEntity.fetchIndexed.contains(propertyName),
            renamedFrom: Self.renamingIdentifier(property.attributes, name: propertyName)))
        let jc = info["JC.isIdentifier"]?.lowercased()
        let primary = Self.value(info, "sync.isPrimaryKey", "hyper.isPrimaryKey")
        if jc == "true" || jc == "yes" || primary == "YES" || primary == "true" { flaggedIdentity.append(propertyName) }
      }
      if entity.identity.isEmpty { entity.identity = flaggedIdentity }
      // No library annotation: the uniqueness constraint is the identity (the first, when an
      // entity declares several).
      if entity.identity.isEmpty, let constraint = pendingEntity.constraints.first {
        entity.identity = constraint
        if pendingEntity.constraints.count > 1 {
          warnings.append(
            "\(name): \(pendingEntity.constraints.count) uniqueness constraints; the first, "
              + "(\(constraint.joined(separator: ", "))), is the identity")
        }
      }
      return entity
    }
  }
}
