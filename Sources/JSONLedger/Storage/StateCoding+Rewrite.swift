extension StateCoding {
  /// How the attributes of one entity's stored states are told under a later model: for each
  /// attribute, by its position among the entity's stored names in the earlier model, its next
  /// name, its next number and the type its value is coerced to when that changed, or that the
  /// later model removed it.
  struct AttributeRewrite: Sendable {
    struct Target: Sendable {
      var name: String
      /// Nil: the next model does not number it, and it is written by name.
      var number: UInt32?
      /// The type a value is coerced to; nil when it keeps its type (and its bytes).
      var type: AttributeType?
      /// The type a coerced value must come back to as it was, when the coercion might make
      /// two values one (a text "012" and "12" as integers): a value that does not needs the
      /// replay.
      var comesBackAs: AttributeType?
      /// The next model removed it: its value is left out.
      var isRemoved = false
    }

    /// By position in the earlier entity's `storedAttributeNames`.
    let targets: [Target]
    /// Whether the next names of the attributes kept sort as the earlier ones did, so that a
    /// state's attributes, in name order, are written in the order they are read.
    let keepsOrder: Bool
    /// Whether any attribute is removed: an update that changed only removed attributes is
    /// no change under the next model.
    let removesAttributes: Bool

    init(targets: [Target]) {
      self.targets = targets
      let kept = targets.filter { !$0.isRemoved }
      keepsOrder = zip(kept, kept.dropFirst()).allSatisfy { $0.name < $1.name }
      removesAttributes = kept.count < targets.count
    }
  }

  /// What `rewriteAttributes` did with a state.
  enum Rewritten: Equatable {
    /// The state's bytes stay: its entity has no rewrite, none of its attributes changes
    /// number, type or place, or it is empty (an undo image of no object).
    case unchanged
    /// `writer` holds the rewritten state.
    case rewritten
    /// A value cannot take its attribute's new type, or does not come back from it as it
    /// was (another value might have become the same): only a replay can tell.
    case needsReplay
  }

  /// Writes into `writer` the state or undo image `bytes`, written under `old`, with each
  /// attribute told as `rewrites` says for its entity (by entity number): everything up to
  /// the attributes is kept byte for byte, each attribute takes its next name and number, a
  /// value whose type changed is coerced (the others keep their bytes), and the attributes
  /// stay in name order. The same state written under the next model gives the same bytes.
  static func rewriteAttributes<Bytes: ByteSource>(
    _ bytes: Bytes, from old: Model, _ rewrites: [Int: AttributeRewrite], into writer: inout BinaryWriter
  ) throws(DecodingFailure) -> Rewritten {
    guard bytes.count > 0 else { return .unchanged }
    var reader = ByteReader(bytes)
    let number = try reader.readCount()
    guard let rewrite = rewrites[number], let entity = old.resolved(number: number) else { return .unchanged }
    let identityStart = reader.position
    let identityCount = try reader.readCount()
    // The bytes of a sole identity value: a coerced value equal to it is written as a reference.
    var soleIdentity = 0..<0
    for _ in 0..<identityCount {
      let start = reader.position
      try reader.skipValue()
      soleIdentity = start..<reader.position
    }
    _ = try reader.readVarint()
    for _ in 0..<(try reader.readCount()) {
      _ = try reader.readVarint()
      switch try reader.readByte() {
      case 0: try reader.skipCompactIDs()
      case 1:
        _ = try reader.readVarint()
        try reader.skipCompactIDs()
        try reader.skipCompactIDs()
      case let tag: throw DecodingFailure(reason: "unknown link list tag \(tag)")
      }
    }
    writer.removeAll()
    writer.append(encoded: bytes, 0..<reader.position)
    let attributesStart = reader.position
    // Decoded only when a value refers to it, or a coerced value is not one that its bytes
    // tell apart (the sole identity value's bytes are compared instead).
    var identity: [AttributeValue]?
    func identityValues() throws(DecodingFailure) -> [AttributeValue] {
      if let identity { return identity }
      var identityReader = ByteReader(bytes, position: identityStart)
      let values = try readIdentity(&identityReader)
      identity = values
      return values
    }
    let count = try reader.readCount()
    let countStart = writer.bytes.count
    writer.write(varint: UInt64(count))
    let countBytes = countStart..<writer.bytes.count
    var inOrder = rewrite.keepsOrder
    var changed = false
    var removed = 0
    for _ in 0..<count where inOrder {
      let reference = try reader.readCount()
      // An attribute stored by name (the placeholder mark) may sort anywhere: sorted below.
      guard reference > 0 else {
        inOrder = false
        break
      }
      guard let position = entity.position(ofAttributeNumber: reference) else {
        throw DecodingFailure(reason: "attribute \(reference) of \(entity.name) is not in the model")
      }
      let target = rewrite.targets[position]
      if target.isRemoved {
        try reader.skipValue()
        removed += 1
        changed = true
        continue
      }
      if let number = target.number {
        writer.write(varint: UInt64(number))
        if number != reference { changed = true }
      } else {
        writer.write(0)
        writer.write(target.name)
        changed = true
      }
      if target.type != nil {
        let valueStart = reader.position
        let value =
          reader.nextByte == 14 ? try reader.readValue(identity: try identityValues()) : try reader.readRequiredValue()
        guard let coerced = coerce(value, to: target) else { return .needsReplay }
        let written = writer.bytes.count
        switch coerced {
        // Equal bytes are equal values for these (`BinaryWriter.write(_:identity:)`).
        case .string where identityCount <= 1, .integer where identityCount <= 1:
          writer.write(coerced)
          if identityCount == 1, sameBytes(bytes, soleIdentity, writer.bytes, from: written) {
            writer.removeLast(writer.bytes.count - written)
            writer.write(14)
            writer.write(varint: 0)
          }
        default:
          writer.write(coerced, identity: try identityValues())
        }
        if !changed, !sameBytes(bytes, valueStart..<reader.position, writer.bytes, from: written) { changed = true }
      } else {
        let valueStart = reader.position
        try reader.skipValue()
        writer.append(encoded: bytes, valueStart..<reader.position)
      }
    }
    if !inOrder {
      return try rewriteAttributesSorting(
        bytes, from: attributesStart, entity, rewrite, identity: try identityValues(), into: &writer)
    }
    guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes after a state") }
    if removed > 0 { writer.replaceVarint(in: countBytes, with: UInt64(count - removed)) }
    return changed ? .rewritten : .unchanged
  }

  /// Where the parts of a state or undo image begin, read without decoding them.
  struct Sections: Equatable {
    /// Its entity's number; 0 for an entity stored by name.
    let entityNumber: Int
    /// The batch that began the object's life.
    let since: UInt64
    /// Where its link lists begin: before them, the entity, the identity and `since`.
    let links: Int
    /// Where its attributes begin: they run to the end.
    let attributes: Int
    /// Whether it keeps a list as the change that turns the list after its batch back into
    /// this one (an undo image's delta), rather than whole.
    let keepsListChanges: Bool
  }

  /// The parts of the state or undo image `bytes`; nil for an empty undo image.
  static func sections<Bytes: ByteSource>(of bytes: Bytes) throws(DecodingFailure) -> Sections? {
    guard bytes.count > 0 else { return nil }
    var reader = ByteReader(bytes)
    let number = try reader.readCount()
    if number == 0 { _ = try reader.readString() }
    for _ in 0..<(try reader.readCount()) { try reader.skipValue() }
    let since = try reader.readVarint()
    let links = reader.position
    var keepsListChanges = false
    for _ in 0..<(try reader.readCount()) {
      _ = try reader.readVarint()
      switch try reader.readByte() {
      case 0: try reader.skipCompactIDs()
      case 1:
        keepsListChanges = true
        _ = try reader.readVarint()
        try reader.skipCompactIDs()
        try reader.skipCompactIDs()
      case let tag: throw DecodingFailure(reason: "unknown link list tag \(tag)")
      }
    }
    return Sections(
      entityNumber: number, since: since, links: links, attributes: reader.position,
      keepsListChanges: keepsListChanges)
  }

  /// `value` coerced to `target`'s type; nil when it cannot be, or when it does not come back
  /// as it was.
  private static func coerce(_ value: AttributeValue, to target: AttributeRewrite.Target) -> AttributeValue? {
    guard let type = target.type, case .success(let coerced) = ValueCoercion.coerce(value, to: type) else {
      return nil
    }
    if let back = target.comesBackAs {
      guard case .success(let returned) = ValueCoercion.coerce(coerced, to: back), returned == value else {
        return nil
      }
    }
    return coerced
  }

  /// Whether `range` of `bytes` holds what `written` holds from `start` to its end.
  private static func sameBytes<Bytes: ByteSource>(
    _ bytes: Bytes, _ range: Range<Int>, _ written: [UInt8], from start: Int
  ) -> Bool {
    guard written.count - start == range.count else { return false }
    for offset in 0..<range.count where bytes[range.lowerBound + offset] != written[start + offset] { return false }
    return true
  }

  /// The attributes of `rewriteAttributes`, when they do not come out in the order they are
  /// read: each is told, then they are sorted by their next names and written.
  private static func rewriteAttributesSorting<Bytes: ByteSource>(
    _ bytes: Bytes, from attributesStart: Int, _ entity: ResolvedEntity, _ rewrite: AttributeRewrite,
    identity: [AttributeValue], into writer: inout BinaryWriter
  ) throws(DecodingFailure) -> Rewritten {
    var reader = ByteReader(bytes, position: attributesStart)
    let count = try reader.readCount()
    var attributes: [(name: String, number: UInt32?, value: [UInt8])] = []
    attributes.reserveCapacity(count)
    for _ in 0..<count {
      let reference = try reader.readCount()
      let target: AttributeRewrite.Target
      if reference == 0 {
        let name = try reader.readString()
        target =
          entity.attributeNumber(of: name).flatMap { entity.position(ofAttributeNumber: Int($0)) }
          .map { rewrite.targets[$0] } ?? AttributeRewrite.Target(name: name, number: nil, type: nil)
      } else {
        guard let position = entity.position(ofAttributeNumber: reference) else {
          throw DecodingFailure(reason: "attribute \(reference) of \(entity.name) is not in the model")
        }
        target = rewrite.targets[position]
      }
      if target.isRemoved {
        try reader.skipValue()
        continue
      }
      var value = BinaryWriter(capacity: 16)
      if target.type != nil {
        guard let coerced = coerce(try reader.readValue(identity: identity), to: target) else { return .needsReplay }
        value.write(coerced, identity: identity)
      } else {
        let valueStart = reader.position
        try reader.skipValue()
        value.append(encoded: bytes, valueStart..<reader.position)
      }
      attributes.append((target.name, target.number, value.bytes))
    }
    guard reader.isAtEnd else { throw DecodingFailure(reason: "trailing bytes after a state") }
    attributes.sort { $0.name < $1.name }
    writer.removeAll()
    writer.append(encoded: bytes, 0..<attributesStart)
    writer.write(varint: UInt64(attributes.count))
    for attribute in attributes {
      if let number = attribute.number {
        writer.write(varint: UInt64(number))
      } else {
        writer.write(0)
        writer.write(attribute.name)
      }
      writer.append(encoded: attribute.value)
    }
    // Rare (a placeholder's mark, or names that change order): compared whole.
    return writer.bytes.count == bytes.count && bytes.bytes(0..<bytes.count, equal: writer.bytes)
      ? .unchanged : .rewritten
  }
}
