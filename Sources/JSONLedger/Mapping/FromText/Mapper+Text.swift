// The byte-level mapping path: an object mapped straight from its JSON text.
//
// Reference: `Mapper.mapObject(_:entity:path:report:)` of the parsed object — this path must
// give the same object wherever it answers (members in document order, values, references,
// fingerprint, ignored keys), and answers nil where it cannot.
// Held by: `PlainTextMappingTests.anObjectMappedFromItsTextIsTheObjectMappedFromItsTree`
// (random objects, mapped both ways).

import JSONLedgerJSON
import JSONLedgerSupport

extension Mapper {
  /// Maps the object whose `{` is at `start` of `report.text` straight from its text, with no
  /// tree of it built: its members are walked in place, each scalar parsed by `reader`, and a
  /// nested object whose text was mapped before in this payload (`mapNested`) is not read at
  /// all. The object, with `end` set to the offset after its `}`; nil when the object is not
  /// plain. (The offset is not returned beside the object: an optional tuple is copied and
  /// destroyed through the runtime's generic value witnesses.)
  ///
  /// Plain: its entity and every nested one map by their keys alone
  /// (`EntityKeyTable.mapsByKeysAlone`), its keys hold no escape, and it maps without a
  /// problem. Nil leaves `report` as it was, apart from what it remembers to go faster
  /// (`mappedTexts` gains only objects `mapNested` would map alike, `plainKeys` the meaning
  /// of keys); the caller then parses the object and maps its tree (`mapElement`), which
  /// says what is amiss. So this is `mapObject` of the parsed object wherever it answers:
  /// the same members in document order, duplicates too, the same values, references,
  /// fingerprint and ignored keys.
  ///
  /// `depthLimit`: how deep the object may nest, itself included (as the parser counts).
  func mapPlainObject(
    at start: Int, entity: ResolvedEntity, path: JSONPath, depthLimit: Int, textFingerprint: UInt64? = nil,
    reader: inout JSONValueReader, report: inout Report, end: inout Int
  ) -> MappedObject? {
    guard let text = report.text else { return nil }
    var ignored: [String] = []
    let mapped = mapPlain(
      at: start, of: text, entity: entity, path: path, depthLimit: depthLimit, textFingerprint: textFingerprint,
      reader: &reader, ignored: &ignored, report: &report, end: &end)
    guard case .some = mapped else { return nil }
    for key in ignored { report.ignoredKeys.insert(key) }
    return mapped
  }

  /// `text`: `report.text`, passed down, since each read of that optional copies it through
  /// the runtime's generic value witnesses.
  private func mapPlain(
    at start: Int, of text: JSONSkim, entity: ResolvedEntity, path: JSONPath, depthLimit: Int, textFingerprint: UInt64?,
    reader: inout JSONValueReader, ignored: inout [String], report: inout Report, end objectEnd: inout Int
  ) -> MappedObject? {
    // Within the first 4 GiB of the text, where `mapObject` takes the text's fingerprint
    // (where the parsed object has a `sourceRange`).
    guard text.bytes.count <= Int(UInt32.max), depthLimit > 0, let box = box(of: entity),
      box.table.mapsByKeysAlone, start < text.bytes.count, text.bytes[start] == UInt8(ascii: "{"),
      var item = text.firstItem(ofContainerAt: start)
    else { return nil }
    // Room for every attribute, and for the relationships up to a few: an object that names
    // none of an entity's many relationships does not carry room for them all.
    var mapped = MappedObject(
      entity: entity, path: path, attributeRoom: entity.attributes.count,
      relationshipRoom: min(entity.relationships.count, 8))
    var fingerprint = mapped.fingerprint
    fingerprint.awaitTextFingerprint()
    mapped.fingerprint = fingerprint
    while !item.closed {
      guard let member = text.memberKey(at: item.index), !member.hasEscapes,
        let (key, target) = report.remembered.plainKeys.meaning(
          of: member.key, in: text.bytes, entity: entity, table: box.table)
      else { return nil }
      let end: Int?
      switch target {
      case .attribute(let attribute, let nameHash)?:
        if let (typed, valueEnd) = Self.plainScalar(at: member.value, in: text.bytes, as: attribute.type) {
          mapped.append(attribute: attribute.name, nameHash: nameHash, typed)
          end = valueEnd
          break
        }
        guard let (value, valueEnd) = try? reader.value(at: member.value, depthLimit: depthLimit - 1) else {
          return nil
        }
        if value == .null {
          guard attribute.isOptional else { return nil }
          mapped.append(attribute: attribute.name, nameHash: nameHash, nil)
        } else {
          guard case .success(let typed) = ValueCoercion.coerce(value, to: attribute.type) else { return nil }
          mapped.append(attribute: attribute.name, nameHash: nameHash, typed)
        }
        end = valueEnd
      case .relationship(let relationship, let byKeys)?:
        guard let destination = model.destination(of: relationship) else {
          // As `assign`: a relationship without a destination takes nothing from its value.
          end = (try? reader.value(at: member.value, depthLimit: depthLimit - 1))?.end
          break
        }
        end = mapPlain(
          member.value, of: relationship, to: destination, byKeys: byKeys, text: text, in: &mapped,
          at: path.appending(key: key), depthLimit: depthLimit - 1, reader: &reader, ignored: &ignored,
          report: &report)
      case nil:
        ignored.append("\(entity.name).\(key)")
        end = (try? reader.value(at: member.value, depthLimit: depthLimit - 1))?.end
      }
      guard let end, let next = text.nextItem(after: end, closing: UInt8(ascii: "}")) else { return nil }
      item = next
    }
    let range = start..<item.index
    fingerprint = mapped.fingerprint
    fingerprint.adopt(
      textFingerprint: textFingerprint
        ?? SkimmedPayload.textFingerprint(of: text, range, entity: entity, modelDigest: modelDigest))
    mapped.fingerprint = fingerprint
    let identity = [AttributeValue].identity(count: entity.identity.count) { position in
      if case .some(.some(let value)) = mapped.lastValue(of: entity.identity[position]) { value } else { nil }
    }
    guard let identity else { return nil }
    mapped.identity = identity
    objectEnd = range.upperBound
    return mapped
  }

  /// Maps the value at `start` given for `relationship` into `mapped`, as `assign` does; the
  /// offset after it, or nil when it is not plain.
  private func mapPlain(
    _ start: Int, of relationship: ResolvedRelationship, to destination: ResolvedEntity, byKeys: Bool,
    text: JSONSkim, in mapped: inout MappedObject, at path: JSONPath, depthLimit: Int,
    reader: inout JSONValueReader, ignored: inout [String], report: inout Report
  ) -> Int? {
    guard start < text.bytes.count else { return nil }
    let bytes = text.bytes
    switch bytes[start] {
    case UInt8(ascii: "n"):
      guard let (value, end) = try? reader.value(at: start, depthLimit: depthLimit), value == .null else { return nil }
      mapped.append(relationship: relationship, .clear)
      return end
    case UInt8(ascii: "["):
      guard relationship.isToMany, var item = text.firstItem(ofContainerAt: start), depthLimit > 0 else { return nil }
      var references: [ObjectReference] = []
      var fingerprint = mapped.fingerprint
      var index = 0
      while !item.closed {
        let end: Int
        if bytes[item.index] == UInt8(ascii: "n") {
          guard let (value, valueEnd) = try? reader.value(at: item.index, depthLimit: depthLimit - 1), value == .null
          else { return nil }
          end = valueEnd
        } else {
          var referenceEnd = 0
          guard
            let reference = plainReference(
              at: item.index, in: text, to: destination, byKeys: byKeys, path: path.appending(index: index),
              depthLimit: depthLimit - 1, fingerprint: &fingerprint, reader: &reader, ignored: &ignored,
              report: &report, end: &referenceEnd)
          else { return nil }
          references.append(reference)
          end = referenceEnd
        }
        guard let next = text.nextItem(after: end, closing: UInt8(ascii: "]")) else { return nil }
        item = next
        index += 1
      }
      mapped.fingerprint = fingerprint
      mapped.append(relationship: relationship, .toMany(references))
      return item.index
    default:
      guard !relationship.isToMany else { return nil }
      var fingerprint = mapped.fingerprint
      var end = 0
      guard
        let reference = plainReference(
          at: start, in: text, to: destination, byKeys: byKeys, path: path, depthLimit: depthLimit,
          fingerprint: &fingerprint, reader: &reader, ignored: &ignored, report: &report, end: &end)
      else { return nil }
      mapped.fingerprint = fingerprint
      mapped.append(relationship: relationship, .toOne(reference))
      return end
    }
  }

  /// The reference the value at `start` makes, added to `fingerprint`, as `reference` makes
  /// it, with `end` set to the offset after the value; nil when it is not plain.
  private func plainReference(
    at start: Int, in text: JSONSkim, to destination: ResolvedEntity, byKeys: Bool, path: JSONPath, depthLimit: Int,
    fingerprint: inout PayloadFingerprint, reader: inout JSONValueReader, ignored: inout [String],
    report: inout Report, end: inout Int
  ) -> ObjectReference? {
    guard text.bytes[start] == UInt8(ascii: "{") else {
      // A key: read from its bytes where plain, else parsed and coerced as `identity(fromKey:)` does.
      guard let attribute = destination.keyAttribute else { return nil }
      let key: (value: AttributeValue, end: Int)
      if let plain = Self.plainScalar(at: start, in: text.bytes, as: attribute.type) {
        key = plain
      } else {
        guard let (value, end) = try? reader.value(at: start, depthLimit: depthLimit) else { return nil }
        switch value {
        case .string, .number, .bool:
          guard case .success(let typed) = ValueCoercion.coerce(value, to: attribute.type) else { return nil }
          key = (typed, end)
        default:
          return nil
        }
      }
      fingerprint.add(key: destination, CollectionOfOne(key.value))
      end = key.end
      return .key(entity: destination, value: key.value, path: path)
    }
    guard !byKeys, report.nesting < NestingLimit.objects, box(of: destination)?.table.mapsByKeysAlone == true,
      let valueEnd = text.valueEnd(from: start, depthLimit: depthLimit)
    else { return nil }
    // As `mapNested`: an object whose text was mapped before is that object at this place;
    // its bytes are the ones parsed then, so they need no reading again.
    let textFingerprint = SkimmedPayload.textFingerprint(
      of: text, start..<valueEnd, entity: destination, modelDigest: modelDigest)
    var nested: MappedObject
    if let known = report.remembered.mappedTexts[textFingerprint] {
      nested = known
      nested.path = path
    } else {
      let ignoredBefore = ignored.count
      report.nesting += 1
      var mappedEnd = 0
      let mapped = mapPlain(
        at: start, of: text, entity: destination, path: path, depthLimit: depthLimit, textFingerprint: textFingerprint,
        reader: &reader, ignored: &ignored, report: &report, end: &mappedEnd)
      report.nesting -= 1
      guard let mapped, mappedEnd == valueEnd else { return nil }
      nested = mapped
      // Not kept when it ignored a key: the caller reports those only once this object is
      // mapped, and `mapNested` meeting it kept would not report them again.
      if nested.relationships.isEmpty, ignored.count == ignoredBefore,
        report.remembered.mappedTexts.count < Self.mappedTextLimit
      {
        report.remembered.mappedTexts[textFingerprint] = nested
      }
    }
    guard let identity = nested.identity else { return nil }
    fingerprint.add(key: nested.entity, identity)
    end = valueEnd
    return .object(NestedObject(nested))
  }
}

extension Mapper {
  /// The value of `type` the scalar at `start` gives, and the offset after it, read straight
  /// from its bytes where that is plain: a string of printable ASCII without escapes, for a
  /// string or a date; a whole number without sign games (`-0`, leading zeros) or fraction,
  /// of at most 18 digits, for an integer type. Nil for anything else, or a value the type
  /// refuses: the parser and `ValueCoercion` then read it, as they read every value, and this
  /// gives what they give wherever it answers.
  static func plainScalar(at start: Int, in bytes: [UInt8], as type: AttributeType) -> (AttributeValue, end: Int)? {
    guard start < bytes.count else { return nil }
    return bytes.withUnsafeBufferPointer { buffer -> (AttributeValue, end: Int)? in
      let first = buffer[start]
      if first == UInt8(ascii: "\"") {
        guard type == .string || type == .date else { return nil }
        // Printable ASCII up to the closing quote: its bytes are the string's.
        let index = StringScan.plainTextEnd(in: buffer, from: start + 1)
        guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { return nil }
        let content = UnsafeBufferPointer(rebasing: buffer[(start + 1)..<index])
        if type == .string { return (.string(String(decoding: content, as: UTF8.self)), index + 1) }
        guard let date = DateCoding.date(fromStringBytes: content) else { return nil }
        return (.date(date), index + 1)
      }
      guard type == .int64 || type == .int32 || type == .int16 else { return nil }
      var index = start
      let negative = first == UInt8(ascii: "-")
      if negative { index += 1 }
      // A first digit of 1 to 9: `0` and `-0` are left to the parser.
      guard index < buffer.count, buffer[index] >= UInt8(ascii: "1"), buffer[index] <= UInt8(ascii: "9") else {
        return nil
      }
      var magnitude: Int64 = 0
      let digitsStart = index
      while index < buffer.count, buffer[index] >= UInt8(ascii: "0"), buffer[index] <= UInt8(ascii: "9") {
        guard index - digitsStart < 18 else { return nil }
        magnitude = magnitude &* 10 &+ Int64(buffer[index] &- UInt8(ascii: "0"))
        index += 1
      }
      // A fraction or an exponent is the parser's to read.
      if index < buffer.count {
        switch buffer[index] {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
        default: break
        }
      }
      let value = negative ? -magnitude : magnitude
      let bounds: ClosedRange<Int64> =
        type == .int16
        ? Int64(Int16.min)...Int64(Int16.max)
        : type == .int32 ? Int64(Int32.min)...Int64(Int32.max) : Int64.min...Int64.max
      guard bounds.contains(value) else { return nil }
      return (.integer(value), index)
    }
  }
}

/// What the member keys met in one text mean to the entities whose objects hold them: each
/// key's name and its target in its entity's key table (nil: it matches nothing).
struct PlainKeys {
  private struct Meaning {
    var key: String
    var target: EntityKeyTable.Target?
  }
  private var memory = KeyMemory<Meaning>(limit: 128)
  /// The slot tried first: the one after the key met last (keys come in one order).
  private var guess = 0

  /// The key at `range` of `bytes` (between its quotes, without escapes) and its target in
  /// `table`, the key table of `entity` (nil: it matches nothing); nil when it is not a
  /// valid key.
  mutating func meaning(
    of range: Range<Int>, in bytes: [UInt8], entity: ResolvedEntity, table: EntityKeyTable
  ) -> (key: String, target: EntityKeyTable.Target?)? {
    let slot: Int
    if let found = memory.slot(of: range, in: bytes, entity: entity.id, guess: guess) {
      slot = found
    } else {
      // Checked once, as the parser checks a key: valid UTF-8, no control character.
      guard let key = String(validating: bytes[range], as: UTF8.self), !key.utf8.contains(where: { $0 < 0x20 })
      else { return nil }
      _ = memory.makeRoom()
      slot = memory.remember(
        range, in: bytes, entity: entity.id, as: Meaning(key: key, target: table.target(forKey: key)))
    }
    guess = slot + 1
    let meaning = memory[slot]
    return (meaning.key, meaning.target)
  }
}
