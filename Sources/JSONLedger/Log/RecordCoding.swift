import Foundation

/// The byte layout of a `ChangeRecord` in the `log` database:
///
/// ```
/// "JLR"  format version (UInt16 BE)  body …  CRC-32 of everything before it (UInt32 BE)
/// ```
/// A change is the object id, entity, identity, kind, payload fingerprint (UInt64 BE, 0 for
/// none), attribute changes (name, old, new) and link changes. A link change is the
/// relationship id, then either 0 and the removed and added ids (ascending, as gaps), or 1 and
/// an ordered list's whole old and new lists.
///
/// A record whose checksum fails, or whose format version is not this library's, is
/// reported with its batch id; it is never skipped.
enum RecordCoding {
  static let magic: [UInt8] = Array("JLR".utf8)

  static func encode(_ record: ChangeRecord) -> [UInt8] {
    var writer = BinaryWriter(capacity: 256 + record.changes.count * 64)
    for byte in magic { writer.write(byte) }
    writer.write(UInt8(ChangeRecord.formatVersion >> 8))
    writer.write(UInt8(ChangeRecord.formatVersion & 0xFF))
    writer.write(varint: record.batchID)
    writer.write(signed: DateCoding.microseconds(record.time))
    writer.write(record.kind.rawValue)
    writer.write(optional: record.metadata.message)
    writer.write(optional: record.metadata.author)
    writer.write(optional: record.metadata.source)
    writer.write(optional: record.metadata.idempotencyKey)
    writer.write(varint: record.metadata.revertedBatchID ?? 0)
    let statistics = record.statistics
    for count in [statistics.created, statistics.updated, statistics.deleted, statistics.unchanged] {
      writer.write(varint: UInt64(count))
    }
    writer.write(varint: UInt64(statistics.ignoredKeys.count))
    for key in statistics.ignoredKeys { writer.write(key) }
    writer.write(varint: UInt64(record.changes.count))
    // Indices rather than `for … in`: each iterator holds a copy of its array (a retain and
    // a release per array, several per change).
    let changes = record.changes
    for index in changes.indices {
      writer.write(varint: changes[index].objectID)
      writer.write(changes[index].entity)
      writer.write(varint: UInt64(changes[index].identity.count))
      for valueIndex in changes[index].identity.indices { writer.write(changes[index].identity[valueIndex]) }
      writer.write(changes[index].kind.rawValue)
      writer.write(bigEndian: changes[index].payloadFingerprint)
      writer.write(varint: UInt64(changes[index].attributes.count))
      for attributeIndex in changes[index].attributes.indices {
        writer.write(changes[index].attributes[attributeIndex].name)
        writer.write(optional: changes[index].attributes[attributeIndex].old)
        writer.write(optional: changes[index].attributes[attributeIndex].new)
      }
      writer.write(varint: UInt64(changes[index].links.count))
      for linkIndex in changes[index].links.indices { writer.write(changes[index].links[linkIndex]) }
    }
    writer.write(bigEndian: Checksum.crc32(writer.bytes))
    return writer.bytes
  }

  /// Why a stored record cannot be read.
  enum Failure: Error {
    case checksum(stored: UInt32, computed: UInt32)
    case unsupportedFormat(UInt16)
    case malformed(String)
  }

  /// Decodes a stored record. With the `model`, entity and attribute names equal to the
  /// model's are returned as the model's strings instead of being decoded one by one.
  static func decode(_ bytes: consuming [UInt8], model: Model? = nil) throws(Failure) -> ChangeRecord {
    guard bytes.count >= 9, Array(bytes[0..<3]) == magic else { throw .malformed("not a change record (bad header)") }
    let stored = UInt32(bigEndianBytes: bytes[(bytes.count - 4)...])
    let computed = Checksum.crc32(bytes[0..<(bytes.count - 4)])
    guard stored == computed else { throw .checksum(stored: stored, computed: computed) }
    let version = UInt16(bigEndianBytes: bytes[3...4])
    guard version == ChangeRecord.formatVersion else { throw .unsupportedFormat(version) }
    // The checksum dropped in place: the record is read without a copy.
    bytes.removeLast(4)
    var reader = BinaryReader(bytes, position: 5)
    let entityNames = model?.entityNames ?? []
    do {
      let batchID = try reader.readVarint()
      let time = DateCoding.date(microseconds: try reader.readSigned())
      guard let kind = ChangeRecord.Kind(rawValue: try reader.readByte()) else {
        throw DecodingFailure(reason: "unknown record kind")
      }
      var metadata = ChangeRecord.Metadata()
      metadata.message = try reader.readOptionalString()
      metadata.author = try reader.readOptionalString()
      metadata.source = try reader.readOptionalString()
      metadata.idempotencyKey = try reader.readOptionalString()
      let reverted = try reader.readVarint()
      metadata.revertedBatchID = reverted == 0 ? nil : reverted
      var statistics = ChangeRecord.Statistics()
      statistics.created = Int(try reader.readVarint())
      statistics.updated = Int(try reader.readVarint())
      statistics.deleted = Int(try reader.readVarint())
      statistics.unchanged = Int(try reader.readVarint())
      for _ in 0..<(try reader.readCount()) { statistics.ignoredKeys.append(try reader.readString()) }
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
        for _ in 0..<(try reader.readCount()) { links.append(try reader.readLinkChange()) }
        changes.append(
          ObjectChange(
            objectID: objectID, entity: entity, identity: identity, kind: changeKind, attributes: attributes,
            links: links, payloadFingerprint: payloadFingerprint))
      }
      guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes after the record") }
      return ChangeRecord(
        batchID: batchID, time: time, kind: kind, metadata: metadata, statistics: statistics, changes: changes)
    } catch {
      throw .malformed("\(error)")
    }
  }
}

extension BinaryWriter {
  mutating func write(_ link: LinkChange) {
    write(varint: UInt64(link.relationshipID))
    if let order = link.order {
      write(UInt8(1))
      write(ids: order.old)
      write(ids: order.new)
    } else {
      write(UInt8(0))
      write(ascendingIDs: link.removed)
      write(ascendingIDs: link.added)
    }
  }
}

extension BinaryReader {
  mutating func readLinkChange() throws(DecodingFailure) -> LinkChange {
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
