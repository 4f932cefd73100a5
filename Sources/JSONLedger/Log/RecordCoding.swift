import Foundation

/// The byte layout of a `ChangeRecord` in the `log` database:
///
/// ```
/// "JLR"  format version (UInt16 BE)  header  names  changes  CRC-32 of everything before it (UInt32 BE)
/// ```
/// The header holds batch id, time, kind, metadata, statistics and the model version. `names` lists the entity
/// names, then the attribute names, the changes use, each once; a change refers to them by
/// position. A change is its object id (as the zigzag difference from the previous change's),
/// entity, identity, kind, payload fingerprint (UInt64 BE, 0 for none), attribute changes and
/// link changes. An attribute change is its name's position shifted left by two, with bit 1
/// set when an old value follows and bit 0 when a new one does (a value equal to one of the
/// identity's is written as a reference to it). A link change is the relationship id, then
/// either 0 and the removed and added ids, or 1 and an ordered list's whole old and new lists
/// (`write(compactIDs:)`). The log's records list their changes in ascending object id
/// order, the order the projector folds them in and `RecordEncoder` is handed them.
///
/// Records of format 3 (names spelled out in each change, absent values written) still
/// decode, for `Ledger.upgrade(at:)`. A record whose checksum fails, or whose format version
/// is neither, is reported with its batch id; it is never skipped.
enum RecordCoding {
  static let magic: [UInt8] = Array("JLR".utf8)

  /// The record's bytes in one array.
  static func encode(_ record: ChangeRecord) -> [UInt8] { encodeInParts(record).joined }

  /// The record's bytes in parts of about `EncodedRecord.partSize` (the last with the
  /// checksum): what the log takes a new record as.
  static func encodeInParts(_ record: ChangeRecord) -> EncodedRecord {
    var encoder = RecordEncoder(header: record)
    // Indices rather than `for … in`: an iterator holds a copy of the array.
    let changes = record.changes
    for index in changes.indices { encoder.append(changes[index]) }
    return encoder.finish()
  }

  static func writeHeader(_ record: borrowing ChangeRecord, into writer: inout BinaryWriter) {
    writer.write(varint: record.batchID)
    writer.write(signed: DateCoding.microseconds(record.time))
    writer.write(record.kind.rawValue)
    writer.write(optional: record.metadata.message)
    writer.write(optional: record.metadata.author)
    writer.write(optional: record.metadata.source)
    writer.write(optional: record.metadata.idempotencyKey)
    writer.write(varint: record.metadata.revertedBatchID ?? 0)
    // Format 5 only (`ChangeRecord.encodedFormatVersion`).
    if record.encodedFormatVersion == RecordFormat.version5 {
      var extra = JSONObject()
      if let envelope = record.metadata.envelope { extra["envelope"] = envelope }
      if let run = record.metadata.run { extra["run"] = run }
      if !record.metadata.archivedIdempotencyKeys.isEmpty {
        extra["idempotencyKeys"] = .object(
          JSONObject(
            record.metadata.archivedIdempotencyKeys.sorted { $0.key < $1.key }.map {
              JSONObject.Member(key: $0.key, value: .number(JSONNumber($0.value)))
            }))
      }
      writer.write(JSONWriter(options: [.sortedKeys]).string(from: .object(extra)))
    }
    let statistics = record.statistics
    for count in [statistics.created, statistics.updated, statistics.deleted, statistics.unchanged] {
      writer.write(varint: UInt64(count))
    }
    writer.write(varint: UInt64(statistics.ignoredKeys.count))
    for key in statistics.ignoredKeys { writer.write(key) }
  }

  /// Names in the order first used, each with its position.
  struct NameIndex {
    private(set) var names: [String] = []
    private var positions: [String: Int] = [:]
    private var last: (name: String, position: Int)?

    mutating func position(of name: String) -> Int {
      if let last, last.name == name { return last.position }
      // A record names a few entities and attributes: comparing with each (names from one
      // model share their storage, and compare in a step) costs less than hashing, and a
      // small record makes no table at all.
      let position =
        names.count <= Self.searchedNames
        ? names.firstIndex(where: { Self.same($0, name) }) ?? add(name)
        : positions[name] ?? add(name)
      last = (name, position)
      return position
    }

    /// The most names searched one by one; past them, a table finds a name's position.
    private static var searchedNames: Int { 16 }

    private mutating func add(_ name: String) -> Int {
      names.append(name)
      if names.count > Self.searchedNames {
        if positions.isEmpty {
          for (position, known) in names.enumerated() { positions[known] = position }
        } else {
          positions[name] = names.count - 1
        }
      }
      return names.count - 1
    }

    /// `left == right`, lengths first: two different short names would otherwise go through
    /// the general string comparison, where a length is read from the string's own bits.
    private static func same(_ left: String, _ right: String) -> Bool {
      left.utf8.count == right.utf8.count && left == right
    }
  }

  /// Why a stored record cannot be read.
  enum Failure: Error {
    case checksum(stored: UInt32, computed: UInt32)
    case unsupportedFormat(UInt16)
    case malformed(String)
  }

  /// The batch id encoded `bytes` claim, once their header and checksum are checked: what
  /// appending a record encoded elsewhere checks before it writes the bytes as they are.
  static func batchID(ofEncoded bytes: [UInt8]) throws(Failure) -> UInt64 {
    guard bytes.count >= 9, Array(bytes[0..<3]) == magic else { throw .malformed("not a change record (bad header)") }
    let stored = UInt32(bigEndianBytes: bytes[(bytes.count - 4)...])
    let computed = Checksum.crc32(bytes[0..<(bytes.count - 4)])
    guard stored == computed else { throw .checksum(stored: stored, computed: computed) }
    var reader = BinaryReader(bytes, position: 5)
    do { return try reader.readVarint() } catch { throw .malformed("\(error)") }
  }

  /// Checks a stored record where it lies: its header, its checksum and its format version
  /// (what `decode` checks before it reads the record).
  static func check(stored bytes: Span<UInt8>) throws(Failure) {
    guard bytes.count >= 9, bytes[0] == magic[0], bytes[1] == magic[1], bytes[2] == magic[2] else {
      throw .malformed("not a change record (bad header)")
    }
    let stored = UInt32(bigEndianBytes: bytes.extracting((bytes.count - 4)...))
    let computed = Checksum.crc32(bytes.extracting(..<(bytes.count - 4)))
    guard stored == computed else { throw .checksum(stored: stored, computed: computed) }
    let version = UInt16(bigEndianBytes: bytes.extracting(3..<5))
    guard version == RecordFormat.version || version == RecordFormat.version5 || version == RecordFormat.version3
    else {
      throw .unsupportedFormat(version)
    }
  }

  /// Decodes a stored record. With the `model`, entity and attribute names equal to the
  /// model's are returned as the model's strings instead of being decoded one by one.
  /// `changes`: all of them, none (the header alone: time, kind, metadata, counts, model
  /// version — what a log entry needs), or only one object's (what its history needs): the
  /// others are read past, not decoded, so a 100,000-change record costs its checksum and a
  /// walk, not 100,000 changes built.
  static func decode(_ bytes: consuming [UInt8], model: Model? = nil, changes: ChangesRead = .all) throws(Failure)
    -> ChangeRecord
  {
    let (version, body) = try checked(consume bytes)
    var reader = BinaryReader(body, position: 5)
    do {
      var record = try readHeader(&reader, version: version)
      if version != RecordFormat.version3 {
        record.modelVersion = try readModelVersion(&reader)
        if case .none = changes { return record }
        record.changes = try readChanges(&reader, model: model, only: changes.object)
      } else {
        if case .none = changes { return record }
        record.changes = try readVersion3Changes(&reader, model: model)
        if let object = changes.object { record.changes.removeAll { $0.objectID != object } }
      }
      guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes after the record") }
      return record
    } catch {
      throw .malformed("\(error)")
    }
  }

  /// A stored record's format version and its bytes without the checksum, once its header,
  /// checksum and version are checked.
  private static func checked(_ bytes: consuming [UInt8]) throws(Failure) -> (UInt16, [UInt8]) {
    guard bytes.count >= 9, Array(bytes[0..<3]) == magic else { throw .malformed("not a change record (bad header)") }
    let stored = UInt32(bigEndianBytes: bytes[(bytes.count - 4)...])
    let computed = Checksum.crc32(bytes[0..<(bytes.count - 4)])
    guard stored == computed else { throw .checksum(stored: stored, computed: computed) }
    let version = UInt16(bigEndianBytes: bytes[3...4])
    guard version == RecordFormat.version || version == RecordFormat.version5 || version == RecordFormat.version3
    else {
      throw .unsupportedFormat(version)
    }
    // The checksum dropped in place: the record is read without a copy.
    bytes.removeLast(4)
    return (version, bytes)
  }

  private static func readModelVersion(_ reader: inout BinaryReader) throws(DecodingFailure) -> UInt32 {
    let modelVersion = try reader.readVarint()
    guard modelVersion > 0, modelVersion <= UInt64(UInt32.max) else {
      throw DecodingFailure(reason: "model version \(modelVersion) is out of range")
    }
    return UInt32(modelVersion)
  }

  private static func readHeader(_ reader: inout BinaryReader, version: UInt16) throws(DecodingFailure)
    -> ChangeRecord
  {
    let batchID = try reader.readVarint()
    let time = DateCoding.date(microseconds: try reader.readSigned())
    let kind = ChangeRecord.Kind(rawValue: try reader.readByte())
    guard kind.isKnown else {
      throw DecodingFailure(reason: "unknown record kind")
    }
    var metadata = ChangeRecord.Metadata()
    metadata.message = try reader.readOptionalString()
    metadata.author = try reader.readOptionalString()
    metadata.source = try reader.readOptionalString()
    metadata.idempotencyKey = try reader.readOptionalString()
    let reverted = try reader.readVarint()
    metadata.revertedBatchID = reverted == 0 ? nil : reverted
    if version == RecordFormat.version5 {
      let text = try reader.readString()
      guard case .object(let extra)? = try? JSONParser.parse(Array(text.utf8)) else {
        throw DecodingFailure(reason: "the record's further metadata is not a JSON object")
      }
      metadata.envelope = extra["envelope"]
      metadata.run = extra["run"]
      for member in extra["idempotencyKeys"]?.objectValue ?? [:] {
        guard case .number(let number) = member.value, let batch = UInt64(number.literal) else {
          throw DecodingFailure(reason: "the archived idempotency key \"\(member.key)\" names no batch")
        }
        metadata.archivedIdempotencyKeys[member.key] = batch
      }
    }
    var statistics = ChangeRecord.Statistics()
    statistics.created = Int(try reader.readVarint())
    statistics.updated = Int(try reader.readVarint())
    statistics.deleted = Int(try reader.readVarint())
    statistics.unchanged = Int(try reader.readVarint())
    for _ in 0..<(try reader.readCount()) { statistics.ignoredKeys.append(try reader.readString()) }
    return ChangeRecord(
      batchID: batchID, time: time, kind: kind, metadata: metadata, statistics: statistics, changes: [])
  }

  /// A name table: the model's string for a name the model has, else the decoded one.
  private static func readNames(_ reader: inout BinaryReader, known: [(name: String, utf8: [UInt8])])
    throws(DecodingFailure) -> [String]
  {
    var names: [String] = []
    for _ in 0..<(try reader.readCount()) {
      var from = 0
      names.append(try reader.readString(expecting: known, from: &from))
    }
    return names
  }

  /// Which of a record's changes `decode` builds.
  enum ChangesRead {
    case all, none
    /// The change of this object alone (none when the record did not change it).
    case ofObject(UInt64)

    var object: UInt64? { if case .ofObject(let id) = self { id } else { nil } }
  }

  /// The changes; with `only`, that object's alone, every other read past.
  private static func readChanges(_ reader: inout BinaryReader, model: Model?, only: UInt64? = nil)
    throws(DecodingFailure) -> [ObjectChange]
  {
    let names = try readNameTables(&reader, model: model)
    var changes: [ObjectChange] = []
    let count = try reader.readCount()
    changes.reserveCapacity(min(count, 1 << 20))
    var previousID: UInt64 = 0
    for _ in 0..<count {
      let objectID = previousID &+ UInt64(bitPattern: try reader.readSigned())
      previousID = objectID
      if let only, objectID != only {
        try skipChange(&reader)
        continue
      }
      changes.append(try readChange(&reader, objectID: objectID, names: names))
    }
    return changes
  }

  /// A record's entity and attribute names, which its changes name by position.
  struct NameTables {
    var entities: [String]
    var attributes: [String]
  }

  private static func readNameTables(_ reader: inout BinaryReader, model: Model?) throws(DecodingFailure)
    -> NameTables
  {
    let entities = try readNames(&reader, known: model?.entityNames ?? [])
    return NameTables(entities: entities, attributes: try readNames(&reader, known: []))
  }

  /// One change after its object id.
  static func readChange(_ reader: inout BinaryReader, objectID: UInt64, names: NameTables)
    throws(DecodingFailure) -> ObjectChange
  {
    let entityPosition = try reader.readCount()
    guard entityPosition < names.entities.count else {
      throw DecodingFailure(reason: "entity \(entityPosition) is not named")
    }
    // Each list takes its length at once (bounded: a count is checked against the bytes left
    // only past 2^20), not by doubling as it grows.
    let identityCount = try reader.readCount()
    var identity: [AttributeValue] = []
    identity.reserveCapacity(min(identityCount, 64))
    for _ in 0..<identityCount { identity.append(try reader.readRequiredValue()) }
    guard let changeKind = ObjectChange.Kind(rawValue: try reader.readByte()) else {
      throw DecodingFailure(reason: "unknown change kind")
    }
    let payloadFingerprint = try reader.readBigEndian(UInt64.self)
    let attributeCount = try reader.readCount()
    var changed: [AttributeChange] = []
    changed.reserveCapacity(min(attributeCount, 1 << 10))
    for _ in 0..<attributeCount {
      let reference = try reader.readVarint()
      let position = Int(reference >> 2)
      guard position < names.attributes.count else {
        throw DecodingFailure(reason: "attribute \(position) is not named")
      }
      let old = reference & 2 != 0 ? try reader.readValue(identity: identity) : nil
      let new = reference & 1 != 0 ? try reader.readValue(identity: identity) : nil
      changed.append(AttributeChange(name: names.attributes[position], old: old, new: new))
    }
    let linkCount = try reader.readCount()
    var links: [LinkChange] = []
    links.reserveCapacity(min(linkCount, 1 << 10))
    for _ in 0..<linkCount { links.append(try readLink(&reader)) }
    return ObjectChange(
      objectID: objectID, entity: names.entities[entityPosition], identity: identity, kind: changeKind,
      attributes: changed, links: links, payloadFingerprint: payloadFingerprint)
  }

  /// Moves past one change after its object id, as `readChange` reads it, building nothing;
  /// returns the change's entity (its position in the name table) and kind.
  @discardableResult
  private static func skipChange(_ reader: inout BinaryReader) throws(DecodingFailure) -> (
    entity: Int, kind: ObjectChange.Kind
  ) {
    let entity = try reader.readCount()
    for _ in 0..<(try reader.readCount()) { try reader.skipValue() }  // identity
    guard let kind = ObjectChange.Kind(rawValue: try reader.readByte()) else {
      throw DecodingFailure(reason: "unknown change kind")
    }
    try reader.skip(8)  // payload fingerprint
    for _ in 0..<(try reader.readCount()) {
      let reference = try reader.readVarint()
      if reference & 2 != 0 { try reader.skipValue() }
      if reference & 1 != 0 { try reader.skipValue() }
    }
    for _ in 0..<(try reader.readCount()) {
      _ = try reader.readVarint()  // relationship
      guard try reader.readByte() <= 1 else { throw DecodingFailure(reason: "unknown link change tag") }
      try reader.skipCompactIDs()
      try reader.skipCompactIDs()
    }
    return (entity, kind)
  }

  /// A stored record's header, and each of its changes' object, entity, kind and place in the
  /// bytes, the changes read past but not built (`RecordOutline`); nil for a format-3 record,
  /// whose changes spell their names out.
  static func outline(_ bytes: consuming [UInt8], model: Model? = nil) throws(Failure) -> RecordOutline? {
    let (version, body) = try checked(consume bytes)
    guard version != RecordFormat.version3 else { return nil }
    var reader = BinaryReader(body, position: 5)
    do {
      var header = try readHeader(&reader, version: version)
      header.modelVersion = try readModelVersion(&reader)
      let names = try readNameTables(&reader, model: model)
      let count = try reader.readCount()
      var entries: [RecordOutline.Entry] = []
      entries.reserveCapacity(min(count, 1 << 20))
      var previousID: UInt64 = 0
      for _ in 0..<count {
        let objectID = previousID &+ UInt64(bitPattern: try reader.readSigned())
        previousID = objectID
        let offset = reader.position
        let (entity, kind) = try skipChange(&reader)
        guard entity < names.entities.count else { throw DecodingFailure(reason: "entity \(entity) is not named") }
        entries.append(RecordOutline.Entry(objectID: objectID, entity: entity, kind: kind, offset: offset))
      }
      guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes after the record") }
      return RecordOutline(header: header, entries: entries, names: names, bytes: body)
    } catch {
      throw .malformed("\(error)")
    }
  }

  /// A link change: an ordered relationship's whole lists before and after, any other's
  /// removed and added targets.
  static func writeLink(_ link: LinkChange, into writer: inout BinaryWriter) {
    if let order = link.order {
      writeLink(link.relationshipID, isOrdered: true, old: order.old, new: order.new, into: &writer)
    } else {
      writeLink(link.relationshipID, isOrdered: false, old: link.removed, new: link.added, into: &writer)
    }
  }

  /// A link change as stored: the relationship id, then tag 1 and the whole list before and
  /// after for an ordered relationship, or tag 0 and the targets unlinked and linked for any
  /// other (`write(compactIDs:)`). A list linked or unlinked whole is either, with `old` or
  /// `new` empty.
  static func writeLink(
    _ relationshipID: UInt32, isOrdered: Bool, old: some Collection<UInt64>, new: some Collection<UInt64>,
    into writer: inout BinaryWriter
  ) {
    writer.write(varint: UInt64(relationshipID))
    writer.write(UInt8(isOrdered ? 1 : 0))
    writer.write(compactIDs: old)
    writer.write(compactIDs: new)
  }

  private static func readLink(_ reader: inout BinaryReader) throws(DecodingFailure) -> LinkChange {
    let relationshipID = UInt32(truncatingIfNeeded: try reader.readVarint())
    switch try reader.readByte() {
    case 0:
      let removed = try reader.readCompactIDs()
      return LinkChange(relationshipID: relationshipID, added: try reader.readCompactIDs(), removed: removed)
    case 1:
      let old = try reader.readCompactIDs()
      return LinkChange(relationshipID: relationshipID, from: old, to: try reader.readCompactIDs(), isOrdered: true)
    case let tag:
      throw DecodingFailure(reason: "unknown link change tag \(tag)")
    }
  }

  /// The changes of a format-3 record: names spelled out in each, absent values written.
  private static func readVersion3Changes(_ reader: inout BinaryReader, model: Model?) throws(DecodingFailure)
    -> [ObjectChange]
  {
    let entityNames = model?.entityNames ?? []
    var changes: [ObjectChange] = []
    for _ in 0..<(try reader.readCount()) {
      let objectID = try reader.readVarint()
      var entityIndex = 0
      let entity = try reader.readString(expecting: entityNames, from: &entityIndex)
      // Still 0 when the name is not one of the model's: then no attribute names are known.
      let attributeNames = entityIndex > 0 ? model?.resolvedInOrder[entityIndex - 1].storedAttributeNames ?? [] : []
      var nextAttributeName = 0
      var identity: [AttributeValue] = []
      for _ in 0..<(try reader.readCount()) { identity.append(try reader.readRequiredValue()) }
      guard let changeKind = ObjectChange.Kind(rawValue: try reader.readByte()) else {
        throw DecodingFailure(reason: "unknown change kind")
      }
      let payloadFingerprint = try reader.readBigEndian(UInt64.self)
      var attributes: [AttributeChange] = []
      for _ in 0..<(try reader.readCount()) {
        let name = try reader.readString(expecting: attributeNames, from: &nextAttributeName)
        attributes.append(AttributeChange(name: name, old: try reader.readValue(), new: try reader.readValue()))
      }
      var links: [LinkChange] = []
      for _ in 0..<(try reader.readCount()) { links.append(try reader.readVersion3LinkChange()) }
      changes.append(
        ObjectChange(
          objectID: objectID, entity: entity, identity: identity, kind: changeKind, attributes: attributes,
          links: links, payloadFingerprint: payloadFingerprint))
    }
    return changes
  }
}

extension BinaryReader {
  /// A link change of a format-3 record: ids as ascending gaps, or an ordered list's whole
  /// lists as plain varints.
  mutating func readVersion3LinkChange() throws(DecodingFailure) -> LinkChange {
    let relationshipID = UInt32(truncatingIfNeeded: try readVarint())
    switch try readByte() {
    case 0:
      let removed = try readAscendingIDs()
      return LinkChange(relationshipID: relationshipID, added: try readAscendingIDs(), removed: removed)
    case 1:
      let old = try readIDs()
      return LinkChange(relationshipID: relationshipID, from: old, to: try readIDs(), isOrdered: true)
    case let tag:
      throw DecodingFailure(reason: "unknown link change tag \(tag)")
    }
  }
}
