/// Encodes a change record (`RecordCoding`'s layout) one change at a time, in one walk: each
/// change is written when it is handed over, so that a caller that is reading the change
/// anyway (the projector folding it) finds its values where it just left them, instead of
/// walking a large batch's changes again once they have left the cache.
///
/// The name table stands before the changes in the layout but is known only once every
/// change has named its entity and attributes: the header is kept apart, the names added to
/// it at `finish`, and the whole put in front of the first part (a copy of one part at
/// most). The bytes are those of the changes encoded in the same order by any walk.
struct RecordEncoder {
  /// The magic, format version and header so far; the names and the count follow at `finish`.
  private var front = BinaryWriter(capacity: 256)
  private let modelVersion: UInt32
  private let changeCount: Int
  private var appended = 0
  private var entities = RecordCoding.NameIndex()
  private var attributes = RecordCoding.NameIndex()
  /// By entity position, the names the last change of that entity listed, with their
  /// positions: the changes of one entity mostly list the same names, so each name is first
  /// compared with the one at its place there (one step for equal short names) before the
  /// index is asked.
  private var lastNames: [[(name: String, position: UInt32)]] = []
  private var writer: BinaryWriter
  /// The full parts of changes written so far.
  private var parts: [[UInt8]] = []
  private var previousID: UInt64 = 0

  /// An encoder of `header`'s batch id, time, kind, metadata, statistics and model version,
  /// for as many changes as it holds (its changes themselves are not read).
  init(header record: borrowing ChangeRecord) {
    for byte in RecordCoding.magic { front.write(byte) }
    let version = record.encodedFormatVersion
    front.write(UInt8(version >> 8))
    front.write(UInt8(version & 0xFF))
    RecordCoding.writeHeader(record, into: &front)
    modelVersion = record.modelVersion
    changeCount = record.changes.count
    // Reserved once: a buffer that grows holds its old and new copies at once. 64 bytes a
    // change (its id, kind, fingerprint, a short identity, a few attributes, a to-one link)
    // are a little over as a rule; a large record is written a part at a time.
    let estimate = 64 * changeCount
    writer = BinaryWriter(capacity: min(estimate, EncodedRecord.partSize + EncodedRecord.partSize / 8))
  }

  /// Writes `change`, the next of the record's changes.
  mutating func append(_ change: borrowing ObjectChange) {
    precondition(appended < changeCount, "no more changes than the header counted")
    appended += 1
    if writer.bytes.count >= EncodedRecord.partSize {
      parts.append(writer.bytes)
      writer = BinaryWriter(capacity: EncodedRecord.partSize + EncodedRecord.partSize / 8)
    }
    writer.write(signed: Int64(bitPattern: change.objectID &- previousID))
    previousID = change.objectID
    let entity = entities.position(of: change.entity)
    writer.write(varint: UInt64(entity))
    while lastNames.count <= entity { lastNames.append([]) }
    // A packed creation's identity, values and lists are copied from its state's bytes: a
    // state writes them as a record does (`PackedState`).
    let packedLayout: PackedState.Layout?
    if case .packed(let packed) = change.changedAttributes {
      let layout = packed.layout
      packedLayout = layout
      writer.append(encoded: packed.bytes[layout.identity])
    } else {
      packedLayout = nil
      writer.write(varint: UInt64(change.heldIdentity.count))
      for valueIndex in change.heldIdentity.indices { writer.write(change.heldIdentity[valueIndex]) }
    }
    // The identity where the change holds it (empty for a packed creation): a copy would
    // retain its array, which in a large batch is a cache miss on memory met once.
    appendRest(of: change, identity: change.heldIdentity, entity: entity, packedLayout: packedLayout)
  }

  /// `append`'s part after the identity: kind, fingerprint, attributes and links.
  private mutating func appendRest(
    of change: borrowing ObjectChange, identity: [AttributeValue], entity: Int, packedLayout: PackedState.Layout?
  ) {
    writer.write(change.kind.rawValue)
    writer.write(bigEndian: change.payloadFingerprint)
    writer.write(varint: UInt64(packedLayout?.attributeCount ?? change.changedAttributes.count))
    var ordinal = 0
    switch change.changedAttributes {
    case .listed(let attributeChanges):
      for index in attributeChanges.indices {
        let position = UInt64(position(of: attributeChanges[index].name, entity: entity, ordinal: &ordinal))
        let (old, new) = (attributeChanges[index].old, attributeChanges[index].new)
        writer.write(varint: position << 2 | (old == nil ? 0 : 2) | (new == nil ? 0 : 1))
        if let old { writer.write(old, identity: identity) }
        if let new { writer.write(new, identity: identity) }
      }
    case .whole(let list, let isNew):
      // Each value written where it lies in the state's list: wrapping it as an old or a
      // new value would copy it.
      list.forEachEntry { name, value in
        let position = UInt64(position(of: name, entity: entity, ordinal: &ordinal))
        writer.write(varint: position << 2 | (isNew ? 1 : 2))
        writer.write(value, identity: identity)
      }
    case .packed(let packed):
      packed.forEachAttribute(from: packedLayout ?? packed.layout) { name, value in
        let position = UInt64(position(of: name, entity: entity, ordinal: &ordinal))
        writer.write(varint: position << 2 | 1)
        writer.append(encoded: packed.bytes[value])
      }
    }
    writer.write(varint: UInt64(packedLayout?.listCount ?? change.changedLinks.count))
    switch change.changedLinks {
    case .listed(let links):
      for index in links.indices { RecordCoding.writeLink(links[index], into: &writer) }
    case .whole(let lists, let isNew, let ordered):
      // Each list linked or unlinked whole, written from the state's lists as they are.
      for (position, (id, list)) in lists.enumerated() {
        RecordCoding.writeLink(
          id, isOrdered: ordered & (1 << UInt64(position)) != 0, old: isNew ? [] : list, new: isNew ? list : [],
          into: &writer)
      }
    case .packed(let packed):
      packed.forEachList(from: packedLayout ?? packed.layout) { id, ids in
        writer.write(varint: UInt64(id))
        writer.write(UInt8(packed.isOrdered(id) ? 1 : 0))
        writer.write(compactIDs: [UInt64]())
        writer.append(encoded: packed.bytes[ids])
      }
    }
  }

  /// The position of the attribute `name`, the `ordinal`th a change of `entity` lists.
  private mutating func position(of name: String, entity: Int, ordinal: inout Int) -> UInt32 {
    defer { ordinal += 1 }
    if ordinal < lastNames[entity].count, lastNames[entity][ordinal].name == name {
      return lastNames[entity][ordinal].position
    }
    let position = UInt32(attributes.position(of: name))
    if ordinal < lastNames[entity].count {
      lastNames[entity][ordinal] = (name, position)
    } else {
      lastNames[entity].append((name, position))
    }
    return position
  }

  /// The record's bytes, once every change the header counted is written.
  consuming func finish() -> EncodedRecord {
    precondition(appended == changeCount, "as many changes as the header counted")
    front.write(varint: UInt64(modelVersion))
    for table in [entities, attributes] {
      front.write(varint: UInt64(table.names.count))
      for name in table.names { front.write(name) }
    }
    front.write(varint: UInt64(changeCount))
    var encoded = EncodedRecord()
    if parts.isEmpty {
      // One part, as a small record has always been.
      var whole = front.bytes
      whole.reserveCapacity(whole.count + writer.bytes.count + 4)
      whole += writer.bytes
      whole.appendBigEndian(Checksum.crc32(whole))
      encoded.appendLast(whole)
      return encoded
    }
    // The front goes before the first part, so that every part but the last is a full one.
    var first = front.bytes
    first.reserveCapacity(first.count + parts[0].count)
    first += parts[0]
    parts[0] = first
    for index in parts.indices {
      encoded.append(parts[index])
      parts[index] = []
    }
    var last = writer.bytes
    last.appendBigEndian(encoded.checksum(endingWith: last))
    encoded.appendLast(last)
    return encoded
  }
}
