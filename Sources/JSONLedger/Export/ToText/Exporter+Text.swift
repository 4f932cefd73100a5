// The byte-level export path: an object's JSON text written straight from its stored bytes.
//
// Reference: `Exporter.export(_:)` of the object's snapshot, written by `JSONWriter` — this
// path must write the same bytes.
// Held by: `ExportTextTests.theTextIsTheValueExportWrittenNowAndAsOfEveryBatch` and
// `customKeysPathsTypesAndCompositeKeysAreWrittenAsTheValueExportWritesThem` (random histories,
// now and as of every batch).

import JSONLedgerJSON
import JSONLedgerSupport

/// Writing an object's JSON text straight from its stored bytes (`View.writeJSON`): its
/// members in the order the writer puts them, each value decoded where it lies and written,
/// with no snapshot and no `JSONValue` of the object. The text is what `export(_:)` of the
/// object's snapshot gives, written by the same writer; the export tests hold the two to it.
extension Exporter {
  /// One member of an exported object as written: a field, or the object of the members
  /// under the first key of dotted paths (`"address.city"`).
  struct OutputMember {
    let key: String
    var value: OutputValue
  }

  /// An entity's members compiled for writing objects straight from their stored bytes: a
  /// flat list of steps that hold numbers only, so that walking it for each object copies
  /// nothing with a reference count, and the keys encoded once, in one buffer.
  struct MemberSteps {
    enum Step {
      /// The key numbered so in `keys`.
      case key(Int)
      /// An attribute at `position` among the entity's stored attribute names (-1: not
      /// stored), described by `fields[field]`; `isPlain` when it has no transformer.
      case attribute(position: Int, field: Int, isPlain: Bool)
      /// The relationship with this stored id.
      case relationship(id: UInt32, isToMany: Bool)
      /// The subentity key's value: the entity's name.
      case type
      case beginObject
      case endObject
    }

    private(set) var steps: [Step] = []
    private(set) var keys = JSONOutput.EncodedStrings()
    private(set) var fields: [AttributeField] = []

    init(_ members: [OutputMember], writer: JSONWriter) {
      add(members, writer: writer)
    }

    private mutating func add(_ members: [OutputMember], writer: JSONWriter) {
      for member in members {
        let key = member.key
        steps.append(.key(keys.append(key.utf8Span, writer: writer)))
        switch member.value {
        case .attribute(let field, let position):
          steps.append(.attribute(position: position ?? -1, field: fields.count, isPlain: field.transformer == nil))
          fields.append(field)
        case .relationship(let field, let id):
          steps.append(.relationship(id: id, isToMany: field.isToMany))
        case .type:
          steps.append(.type)
        case .object(let inner):
          steps.append(.beginObject)
          add(inner, writer: writer)
          steps.append(.endObject)
        }
      }
    }
  }

  indirect enum OutputValue {
    /// An attribute, with its position among the entity's stored attribute names.
    case attribute(AttributeField, position: Int?)
    /// A relationship, with its stored id.
    case relationship(RelationshipField, id: UInt32)
    /// The subentity key, written with the entity's name.
    case type
    case object([OutputMember])
  }

  /// The members of `plan`'s objects in the order they are written (sorted by key, or as
  /// `export(_:)` sets them); nil when they cannot be known before the data: relationships
  /// nested (which objects nest, and so the keys, depend on the data) or two fields that
  /// share a key.
  static func members(of plan: EntityPlan, entity: ResolvedEntity, options: ExportOptions, writer: JSONWriter)
    -> [OutputMember]?
  {
    var members: [OutputMember] = []
    for field in plan.attributes {
      let position = entity.storedAttributePositions[field.name]
      guard insert(.attribute(field, position: position), at: field.path[...], into: &members) else {
        return nil
      }
    }
    if let key = plan.typeKey, !insert(.type, at: [key], into: &members) { return nil }
    // Rows written inline depend on the data, as nested relationships do, and so does whether
    // an object with no identity is written in its collection.
    if plan.relationships.contains(where: \.isInline) || !plan.linkedInlineThrough.isEmpty { return nil }
    switch options.relationships {
    case .none: break
    case .ids:
      for field in plan.relationships {
        // Whether a relationship is written depends on the data when a target may have no key.
        guard !field.mayHoldKeyless, let id = entity.relationshipIndex[field.name]?.id,
          insert(.relationship(field, id: id), at: field.path[...], into: &members)
        else { return nil }
      }
    case .nested, .rails: return nil
    }
    return writer.options.contains(.sortedKeys) ? sortedByKey(members) : members
  }

  /// Adds `value` at `path` as `Exporter.set` would; false when it meets a field already
  /// there.
  private static func insert(
    _ value: OutputValue, at path: ArraySlice<String>, into members: inout [OutputMember]
  ) -> Bool {
    // `set` writes nothing at an empty path.
    guard let first = path.first else { return true }
    guard let index = members.firstIndex(where: { $0.key == first }) else {
      var member = OutputMember(key: first, value: value)
      if path.count > 1 {
        var inner: [OutputMember] = []
        _ = insert(value, at: path.dropFirst(), into: &inner)
        member.value = .object(inner)
      }
      members.append(member)
      return true
    }
    guard path.count > 1, case .object(var inner) = members[index].value else { return false }
    guard insert(value, at: path.dropFirst(), into: &inner) else { return false }
    members[index].value = .object(inner)
    return true
  }

  /// Members ordered by key as `JSONWriter.Options.sortedKeys` orders them, at every level.
  private static func sortedByKey(_ members: [OutputMember]) -> [OutputMember] {
    members.map { member in
      guard case .object(let inner) = member.value else { return member }
      var sorted = member
      sorted.value = .object(sortedByKey(inner))
      return sorted
    }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
  }

  /// Writes `object` into `output`, as `output`'s writer writes `export(_:)` of its
  /// snapshot, or nothing for a placeholder (unless `ExportOptions.includesPlaceholders`).
  /// `parts` is scratch space, reused from object to object.
  func write(_ object: borrowing StoredObject, into output: inout JSONOutput, parts: inout StateParts) throws {
    let id = object.declaration.map { Int($0.id) } ?? .max
    guard id < stepsByEntity.count, let steps = stepsByEntity[id], try object.locateParts(into: &parts) else {
      guard plan(for: object.entity) != nil else { return output.null() }
      let snapshot = try object.snapshot()
      if snapshot.isPlaceholder, options.includesPlaceholders != true { return }
      if isWrittenInline(snapshot) { return }
      return output.value(try export(snapshot))
    }
    // A placeholder is no object of the backend's: left out unless asked for.
    if parts.isPlaceholder, options.includesPlaceholders != true { return }
    try write(steps, of: object, parts: parts, into: &output)
    // Its key is kept for the objects written later that point to it (a band's albums,
    // written after the albums): read from the bytes in hand, not looked up again.
    let written = writtenKeys
    if written.number(of: object.objectID) == nil {
      let writer = output.writer
      _ = try object.withSoleStringIdentity { written.keep(object.objectID, $0, writer: writer) }
    }
  }

  /// Writes the key of the related object `id` as `keyValue` gives it: one string identity
  /// straight from the target's stored bytes, and kept for the next object that points to it.
  private func writeKey(of id: UInt64, into output: inout JSONOutput) throws {
    let written = writtenKeys
    let writer = output.writer
    guard
      let number = try written.number(of: id)
        ?? reader.store.withSoleStringIdentity(of: id, { written.keep(id, $0, writer: writer) })
    else { return output.value(keyValue(try written.keys.key(of: id), dateFormat: dateFormat)) }
    output.string(number, of: written.strings)
  }

  private func write(
    _ steps: borrowing MemberSteps, of object: borrowing StoredObject, parts: StateParts, into output: inout JSONOutput
  ) throws {
    let dateFormat = self.dateFormat
    output.beginObject()
    for step in steps.steps {
      switch step {
      case .key(let number):
        output.key(number, of: steps.keys)
      case .attribute(let position, let field, let isPlain):
        let start = position >= 0 ? parts.attributes[position] : -1
        guard start >= 0 else {
          output.null()
          continue
        }
        // A string is copied from the stored bytes, with no `String` made of it.
        if isPlain, try object.withStringValue(at: start, { output.string($0) }) != nil { continue }
        let value = try object.value(at: start)
        if isPlain, case .integer(let number) = value {
          output.integer(number)
          continue
        }
        if isPlain, dateFormat != .unix, case .date(let date) = value {
          // A date's text is written into a buffer kept for it, with no `String` made of it.
          dateText.removeAll(keepingCapacity: true)
          DateCoding.appendText(of: date, format: dateFormat, to: &dateText)
          if let text = try? UTF8Span(validating: dateText.span) {
            output.string(text)
            continue
          }
        }
        output.value(try jsonValue(value, of: steps.fields[field], entity: object.entity, dateFormat: dateFormat))
      case .relationship(let id, let isToMany):
        let start = parts.list(id)
        if isToMany {
          output.beginArray()
          if let start {
            try object.forEachTarget(ofListAt: start) { target in try writeKey(of: target, into: &output) }
          }
          output.endArray()
        } else {
          var written = false
          if let start {
            try object.forEachTarget(ofListAt: start) { target in
              guard !written else { return }
              try writeKey(of: target, into: &output)
              written = true
            }
          }
          if !written { output.null() }
        }
      case .type:
        output.string(object.entity)
      case .beginObject:
        output.beginObject()
      case .endObject:
        output.endObject()
      }
    }
    output.endObject()
  }
}
