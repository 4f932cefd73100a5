// The byte-level staging path: a payload kept as its text, mapped only when it changed.
//
// Reference: staging the parsed document (`ChangeBatch.stage(_:as:)` of a `JSONValue`) — a
// batch staged from text must apply the same changes and report the same problems.
// Held by: `TextStagingTests.textStagedIntoAnEmptyStoreHasTheProblemsAndObjectsOfTheParsedText`,
// `UnchangedPayloadTests.skippingUnchangedPayloadsGivesTheChangesOfMergingThem` (random
// histories, skipped and merged) and `StreamedImportTests.aStreamedImportStoresWhatStagingTheWholeDocumentStores`.

import Foundation
import JSONLedgerSupport

/// An object staged from JSON text and not mapped, because its text is the very text the
/// store holds as having made the object what it is: applying it again would change nothing.
///
/// Its fingerprint (`textFingerprint`) is a hash of the text's bytes, the model and the
/// entity. The mapper is a function of those three for the entities skimmed (no transformer,
/// entity mapper, sub-entity or key path), so the same text maps to the same object, and
/// it mapped without a problem when it was applied. The resolver checks the fingerprint
/// again inside the write transaction; an object changed since staging is mapped from its
/// text then. Its nested objects are payloads of their own, each skimmed with its own text.
struct SkimmedPayload: Sendable {
  /// What the skim read, held by one reference: a payload is handed from the skimmer to its
  /// parent's list, the staged steps and the resolver, and a copy of these fields retained
  /// each of them.
  private final class Body: Sendable {
    let entity: ResolvedEntity
    let text: JSONSkim
    let range: Range<Int>
    let fingerprint: UInt64
    let identity: [AttributeValue]
    let mask: UInt64
    let key: String
    let index: Int?
    /// The first nested object apart, so that one (a nested author) allocates no list.
    let firstNested: SkimmedPayload?
    let moreNested: [SkimmedPayload]

    init(
      entity: ResolvedEntity, text: JSONSkim, range: Range<Int>, fingerprint: UInt64, identity: [AttributeValue],
      mask: UInt64, key: String, index: Int?, nested: (first: SkimmedPayload?, more: [SkimmedPayload])
    ) {
      self.entity = entity
      self.text = text
      self.range = range
      self.fingerprint = fingerprint
      self.identity = identity
      self.mask = mask
      self.key = key
      self.index = index
      firstNested = nested.first
      moreNested = nested.more
    }
  }
  private let body: Body

  /// `nested`: the objects nested in its relationships, in the order the mapper meets them,
  /// the first apart.
  init(
    entity: ResolvedEntity, text: JSONSkim, range: Range<Int>, fingerprint: UInt64, identity: [AttributeValue],
    mask: UInt64, key: String, index: Int?, nested: (first: SkimmedPayload?, more: [SkimmedPayload])
  ) {
    body = Body(
      entity: entity, text: text, range: range, fingerprint: fingerprint, identity: identity, mask: mask, key: key,
      index: index, nested: nested)
  }

  var entity: ResolvedEntity { body.entity }
  var text: JSONSkim { body.text }
  /// The object's text in `text`, braces included.
  var range: Range<Int> { body.range }
  var fingerprint: UInt64 { body.fingerprint }
  var identity: [AttributeValue] { body.identity }
  /// The relationships the object names (`PayloadFingerprint.maskBit`).
  var mask: UInt64 { body.mask }
  /// Where it is in what holds it: the member key of its parent ("" for an object of the
  /// collection staged) and its index there (nil in a to-one, or for a collection's one object).
  var key: String { body.key }
  var index: Int? { body.index }
  /// Calls `visit` with each object nested in its relationships, in the order the mapper
  /// meets them.
  func forEachNested(_ visit: (SkimmedPayload) throws -> Void) rethrows {
    guard let first = body.firstNested else { return }
    try visit(first)
    for nested in body.moreNested { try visit(nested) }
  }
  /// For an object of the collection staged: the id the store held for its identity, with
  /// this very fingerprint, as of batch `head`, when staging found it so.
  var stored: (id: UInt64, head: UInt64)?

  /// The path of this object in what holds it, at `parent`.
  func path(under parent: JSONPath) -> JSONPath {
    let member = key.isEmpty ? parent : parent.appending(key: key)
    return index.map { member.appending(index: $0) } ?? member
  }

  /// The hash of an object's text for `entity` under the model with `modelDigest`: never 0
  /// (no fingerprint), and apart from `PayloadFingerprint`'s hashes of mapped values.
  static func textFingerprint(of text: JSONSkim, _ range: Range<Int>, entity: ResolvedEntity, modelDigest: UInt64)
    -> UInt64
  {
    var hash = FNV1a()
    hash.combine(word: 0x7465_7874_2d70_6179)  // "text-pay": apart from mapped-value hashes
    hash.combine(word: modelDigest)
    hash.combine(word: UInt64(entity.id))
    hash.combine(word: UInt64(range.count))
    let raw = text.bytes.span.extracting(range).bytes
    var offset = 0
    while offset + 8 <= raw.byteCount {
      hash.combine(word: raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
      offset += 8
    }
    while offset < raw.byteCount {
      hash.combine(raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt8.self))
      offset += 1
    }
    let folded = hash.folded
    return folded == 0 ? 1 : folded
  }
}

/// Reads objects of JSON text into `SkimmedPayload`s: their identity, the relationships they
/// name and their nested objects, by the keys of the mapper's tables, without mapping them.
/// One per staging call: it remembers what each key it met means, starting from what the last
/// one of its mapper learned (`LearnedKeys`).
struct PayloadSkimmer {
  let mapper: Mapper
  let text: JSONSkim
  let modelDigest: UInt64
  /// Keys that matched nothing, as the mapper reports them (`Entity.key`).
  private(set) var ignoredKeys: Set<String> = []
  /// What it learned of the keys it met, starting from what its mapper's last skimmer learned.
  private var learned = Learned()

  /// What a member key means to an entity's objects (plain values, read for every member).
  fileprivate enum Role {
    /// The identity attribute at this position of `ResolvedEntity.identity`, of this type.
    case identity(Int, AttributeType)
    case attribute
    /// The relationship at this index of `Learned.relationships`.
    case relationship(Int)
    case ignored
  }

  /// A relationship a key feeds, and how.
  fileprivate struct RelationshipKey {
    let id: UInt32
    let isToMany: Bool
    /// A `<name>_id(s)` key, which holds keys, never nested objects.
    let byKeys: Bool
    let destination: ResolvedEntity?
  }

  fileprivate struct KnownKey {
    let name: String
    let role: Role
  }

  init(mapper: Mapper, text: JSONSkim) {
    self.mapper = mapper
    self.text = text
    modelDigest = mapper.modelDigest
    if let taken = mapper.learnedKeys.take() { learned = taken }
  }

  /// What a skimmer learned of the keys it met. The same for any text under one mapper: its
  /// mapper's `LearnedKeys` holds it from one staging to the next (`handBack()`).
  struct Learned: Sendable {
    /// Whether objects of each entity can be skimmed (nil: not asked yet), by entity id.
    fileprivate var skimmable: [Bool?] = []
    /// The keys met so far, for every entity, by their raw bytes.
    fileprivate var known = KeyMemory<KnownKey>(limit: 256)
    /// By entity id: the slot of the key the last object of that entity began with.
    fileprivate var firstSlots: [Int?] = []
    /// The relationships the keys in `known` feed.
    fileprivate var relationships: [RelationshipKey] = []
  }

  /// Hands what this skimmer learned on to the next one of its mapper.
  func handBack() { mapper.learnedKeys.keep(learned) }

  /// Whether objects of `entity` can be skimmed (`EntityKeyTable.mapsByKeysAlone`).
  mutating func canSkim(_ entity: ResolvedEntity) -> Bool {
    let slot = Int(entity.id)
    if slot < learned.skimmable.count, let known = learned.skimmable[slot] { return known }
    let answer = mapper.box(of: entity)?.table.mapsByKeysAlone ?? false
    if slot >= learned.skimmable.count {
      learned.skimmable.append(contentsOf: repeatElement(nil, count: slot + 1 - learned.skimmable.count))
    }
    learned.skimmable[slot] = answer
    return answer
  }

  /// The object whose `{` is at `start` as a payload of `entity`, and the offset after its
  /// `}`; a nil payload when it must be mapped (its entity or a nested one's cannot be
  /// skimmed, its identity is missing or not of its type), and a nil end as well when its
  /// text is malformed or nests more than `depthLimit` deep (the parser will say how).
  mutating func skim(
    at start: Int, entity: ResolvedEntity, key: String, index: Int?, depthLimit: Int, nesting: Int = 0
  ) -> (payload: SkimmedPayload?, end: Int?) {
    // A local copy: reading the stored one anew for each call would retain its bytes each time.
    let text = self.text
    let bytes = text.bytes
    guard canSkim(entity), nesting <= NestingLimit.objects, depthLimit > 0,
      var item = text.firstItem(ofContainerAt: start), bytes[start] == UInt8(ascii: "{")
    else { return (nil, nil) }
    // The identity's values as given: the first apart, so that a single identity allocates nothing.
    var firstIdentity: (range: Range<Int>, type: AttributeType)?
    var moreIdentity: [(range: Range<Int>, type: AttributeType)?] = []
    var mask: UInt64 = 0
    var nested: (first: SkimmedPayload?, more: [SkimmedPayload]) = (nil, [])
    var skimmable = true
    var previousSlot: Int?
    while !item.closed {
      guard let member = text.memberKey(at: item.index),
        let slot = knownKey(of: member, in: entity, after: previousSlot)
      else { return (nil, nil) }
      previousSlot = slot
      let valueStart = member.value
      var valueEnd: Int?
      switch learned.known[slot].role {
      case .identity(let position, let type):
        valueEnd = text.valueEnd(from: valueStart, depthLimit: depthLimit - 1)
        let given = valueEnd.map { (range: valueStart..<$0, type: type) }
        if position == 0 {
          firstIdentity = given
        } else {
          if moreIdentity.isEmpty {
            moreIdentity = Array(repeatElement(nil, count: entity.identity.count - 1))  // CONTRIBUTING.md, "Hot paths"
          }
          moreIdentity[position - 1] = given
        }
      case .attribute:
        valueEnd = text.valueEnd(from: valueStart, depthLimit: depthLimit - 1)
      case .ignored:
        ignoredKeys.insert("\(entity.name).\(learned.known[slot].name)")
        valueEnd = text.valueEnd(from: valueStart, depthLimit: depthLimit - 1)
      case .relationship(let index):
        mask |= PayloadFingerprint.maskBit(learned.relationships[index].id)
        let isToMany = learned.relationships[index].isToMany
        guard valueStart < bytes.count, !learned.relationships[index].byKeys,
          let destination = learned.relationships[index].destination,
          skimmable
        else {
          valueEnd = text.valueEnd(from: valueStart, depthLimit: depthLimit - 1)
          break
        }
        if bytes[valueStart] == UInt8(ascii: "{") {
          let object = skim(
            at: valueStart, entity: destination, key: learned.known[slot].name, index: nil, depthLimit: depthLimit - 1,
            nesting: nesting + 1)
          valueEnd = object.end ?? text.valueEnd(from: valueStart, depthLimit: depthLimit - 1)
          if let payload = object.payload, !isToMany { Self.add(payload, to: &nested) } else { skimmable = false }
        } else if bytes[valueStart] == UInt8(ascii: "["), isToMany {
          guard var element = text.firstItem(ofContainerAt: valueStart) else { return (nil, nil) }
          var position = 0
          while !element.closed {
            var end: Int?
            if bytes[element.index] == UInt8(ascii: "{") {
              let object = skim(
                at: element.index, entity: destination, key: learned.known[slot].name, index: position,
                depthLimit: depthLimit - 2,
                nesting: nesting + 1)
              end = object.end
              if let payload = object.payload { Self.add(payload, to: &nested) } else { skimmable = false }
            }
            guard let elementEnd = end ?? text.valueEnd(from: element.index, depthLimit: depthLimit - 2),
              let next = text.nextItem(after: elementEnd, closing: UInt8(ascii: "]"))
            else { return (nil, nil) }
            element = next
            position += 1
          }
          valueEnd = element.index
        } else {
          valueEnd = text.valueEnd(from: valueStart, depthLimit: depthLimit - 1)
          if bytes[valueStart] == UInt8(ascii: "[") { skimmable = false }
        }
      }
      guard let end = valueEnd, let next = text.nextItem(after: end, closing: UInt8(ascii: "}")) else {
        return (nil, nil)
      }
      item = next
    }
    let range = start..<item.index
    guard skimmable, moreIdentity.count == entity.identity.count - 1 else { return (nil, range.upperBound) }
    // Not `[AttributeValue].identity(count:_:)`: its closure would call `identityValue`, a
    // method, and so hold a copy of this skimmer, copied for every object (RESULTS.md).
    var identity: [AttributeValue] = []
    identity.reserveCapacity(entity.identity.count)
    for position in 0..<entity.identity.count {
      guard let given = position == 0 ? firstIdentity : moreIdentity[position - 1],
        let json = identityValue(given.range), json != .null,
        case .success(let value) = ValueCoercion.coerce(json, to: given.type)
      else { return (nil, range.upperBound) }
      identity.append(value)
    }
    let payload = SkimmedPayload(
      entity: entity, text: text, range: range,
      fingerprint: SkimmedPayload.textFingerprint(of: text, range, entity: entity, modelDigest: modelDigest),
      identity: identity, mask: mask, key: key, index: index, nested: nested)
    return (payload, range.upperBound)
  }

  /// Appends a nested payload: the first is kept apart, without a list.
  private static func add(
    _ payload: consuming SkimmedPayload, to list: inout (first: SkimmedPayload?, more: [SkimmedPayload])
  ) {
    if list.first == nil { list.first = payload } else { list.more.append(payload) }
  }

  /// An identity's value: a plain string read directly, anything else parsed.
  private func identityValue(_ range: Range<Int>) -> JSONValue? {
    let bytes = text.bytes
    if range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\""),
      bytes[range.upperBound - 1] == UInt8(ascii: "\"")
    {
      let inner = (range.lowerBound + 1)..<(range.upperBound - 1)
      var plain = true
      for index in inner where bytes[index] < 0x20 || bytes[index] == UInt8(ascii: "\\") || bytes[index] >= 0x80 {
        plain = false
        break
      }
      if plain { return .string(String(decoding: bytes[inner], as: UTF8.self)) }
    }
    return try? text.parse(range)
  }

  /// The slot in `known` of a member's key, learned once per distinct raw key; nil when the
  /// key is not a valid string. `previous`: the slot of the member before it in its object.
  /// Objects of one entity mostly list their keys in one order, so the slot after the
  /// previous one's (or, for a first member, the first member's last time) is tried first.
  private mutating func knownKey(
    of member: (key: Range<Int>, hasEscapes: Bool, value: Int), in entity: ResolvedEntity, after previous: Int?
  ) -> Int? {
    let bytes = text.bytes
    let id = entity.id
    let guess = previous.map { $0 + 1 } ?? (Int(id) < learned.firstSlots.count ? learned.firstSlots[Int(id)] : nil)
    if let slot = learned.known.slot(of: member.key, in: bytes, entity: id, guess: guess) {
      if previous == nil, slot != guess { rememberFirstSlot(slot, of: id) }
      return slot
    }
    // Bounded: text with ever new keys starts the memory over rather than searching a long list.
    if learned.known.makeRoom() {
      learned.firstSlots.removeAll(keepingCapacity: true)
      learned.relationships.removeAll(keepingCapacity: true)
    }
    let name: String
    if member.hasEscapes {
      guard case .string(let decoded)? = try? text.parse((member.key.lowerBound - 1)..<(member.key.upperBound + 1))
      else { return nil }
      name = decoded
    } else {
      guard let decoded = String(validating: bytes[member.key], as: UTF8.self),
        !decoded.utf8.contains(where: { $0 < 0x20 })
      else { return nil }
      name = decoded
    }
    let role: Role
    switch mapper.box(of: entity)?.table.target(forKey: name) {
    case .attribute(let attribute, _)?:
      role = entity.identity.firstIndex(of: attribute.name).map { .identity($0, attribute.type) } ?? .attribute
    case .relationship(let relationship, let byKeys)?:
      learned.relationships.append(
        RelationshipKey(
          id: relationship.id, isToMany: relationship.isToMany, byKeys: byKeys,
          destination: mapper.model.destination(of: relationship)))
      role = .relationship(learned.relationships.count - 1)
    case nil:
      role = .ignored
    }
    let slot = learned.known.remember(member.key, in: bytes, entity: id, as: KnownKey(name: name, role: role))
    if previous == nil { rememberFirstSlot(slot, of: id) }
    return slot
  }

  private mutating func rememberFirstSlot(_ slot: Int, of entity: UInt32) {
    let index = Int(entity)
    if index >= learned.firstSlots.count {
      learned.firstSlots.append(contentsOf: repeatElement(nil, count: index + 1 - learned.firstSlots.count))
    }
    learned.firstSlots[index] = slot
  }
}
