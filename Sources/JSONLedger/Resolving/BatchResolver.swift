/// Resolves a staged batch against the current state into the object changes of the next
/// record: finds objects by identity, merges values, creates stubs, prunes, and skips
/// payloads the store already holds. Links go through the `LinkGraph`, which keeps both
/// sides; the `WorkingSet` holds the before-image of everything touched.
struct BatchResolver {
  let model: Model
  /// Whether the step being resolved has strict references (`StagingOptions.isStrict`).
  private var strict = false
  /// Strict references for every step (the batch-wide switch).
  private var strictForAll = false
  private var graph: LinkGraph
  private var identities: IdentityIndex
  private var problems = ProblemCollector()
  private var mapper: Mapper?
  /// In a batch that prunes: every object any of its steps names, nested ones too. A prune
  /// acts once every step has resolved (`finish`), on everything the batch staged, so that
  /// two pages of one response staged with prune keep both pages.
  private var staged: Set<UInt64>?
  /// The collections to prune once every step has resolved: entity, parent scope, path; once
  /// each.
  private var pruneScopes: [PruneScope] = []
  /// Entities whose every object a prune deleted (the payload named none of them).
  private(set) var emptiedByPrune: [String] = []
  /// Placeholders a prune kept because something still refers to them (`prune()`).
  private(set) var placeholdersKeptByPrune = 0

  private struct PruneScope: Equatable {
    let entity: String
    let parent: UInt64?
    let relationship: UInt32?
    let path: String
  }
  /// Whether any entity has non-optional attributes to check on creation.
  private let checksRequiredAttributes: Bool
  private let origin: UInt64
  /// Whether the step being resolved was staged against this very store (`origin`).
  private var stagedHere = false
  /// The store's head (`StateSource.head()`), read once.
  private var head: UInt64?
  private mutating func storeHead() throws -> UInt64 {
    if let head { return head }
    let read = try source.head()
    head = read
    return read
  }
  /// Skimmed payloads mapped from their text, by fingerprint (at most `remappedLimit`).
  private var remapped: [UInt64: MappedObject] = [:]
  private static let remappedLimit = 4_096
  /// Merges a payload met again in the batch even when it made its object what it is
  /// (`isMadeAgain`): what the tests compare that skip with.
  var mergesEveryPayload = false
  /// How many parts `resolveSteps` has merged.
  private var resolvedParts = 0
  /// Objects created from a payload, with its path, for the non-optional check.
  private var createdFromPayloads: [(UInt64, JSONPath)] = []
  /// Objects created ahead of their payloads (`createAheadIfDue`), until merged.
  private var createdAhead: Set<UInt64> = []

  /// `origin`: the `Ledger.batchOrigin` of the ledger whose store `source` reads (0: none),
  /// whose batches' staging found what holds while no batch has been applied since.
  init(model: Model, source: any StateSource, origin: UInt64 = 0) throws {
    self.model = model
    self.origin = origin
    graph = LinkGraph(objects: WorkingSet(model: model, source: source))
    checksRequiredAttributes = model.resolvedInOrder.contains { !$0.requiredAttributes.isEmpty }
    identities = try IdentityIndex(source: source)
  }

  private var source: any StateSource { graph.objects.source }

  /// The changes, in first-touch order, and the counts.
  mutating func resolve(_ batch: ChangeBatch) throws -> (changes: [ObjectChange], statistics: ChangeRecord.Statistics) {
    // Sized for the staged objects and a link partner each: growing by doubling costs more
    // than the work itself on large batches.
    graph.objects.reserveCapacity(batch.stagedObjectCount * 2)
    identities.reserveCapacity(batch.stagedObjectCount)
    // Skimmed objects are mostly skipped (the store holds their text); a fresh import's
    // mapped ones are not, and reserve nothing here.
    graph.objects.unchanged.reserveCapacity(batch.skimmedObjectCount)
    try resolveSteps(of: batch)
    return try finish(ignoredKeys: batch.ignoredKeys.sorted())
  }

  /// Merges the steps of `batch` into what this resolver holds: one part of a record that
  /// `finish` completes. A payload read in parts resolves part by part, so that only one part
  /// of it is held at a time.
  mutating func resolveSteps(of batch: ChangeBatch) throws {
    // From the second part of a batch read in parts on, the objects the batch created and the
    // last part left alone are held packed (`WorkingSet.packColdStates`).
    if resolvedParts > 0 { graph.objects.packColdStates() }
    resolvedParts += 1
    mapper = batch.mapper
    strictForAll = batch.strictForAll
    stagedHere = origin != 0 && batch.origin == origin
    // Refused with every problem at once: the payload's (found while staging) and the store's.
    problems.add(contentsOf: batch.collected)
    let prunes = batch.steps.contains { step in
      if case .collection(_, _, let options, _) = step { options.prunes } else { false }
    }
    if prunes, staged == nil { staged = [] }
    ahead = AheadCursor(steps: batch.steps)
    for step in batch.steps {
      switch step {
      case .collection(let entityName, let objects, let options, let path):
        try resolveCollection(entityName, objects, options, path: path, mapper: batch.mapper)
      case .deletion(let entityName, let identity, let path):
        guard let entity = model.resolved(entityName) else { continue }
        if let id = try lookup(root: entity.rootID, identity: identity), try graph.objects.exists(id) {
          try delete(id, path: JSONPath(path))
        }
      }
    }
  }

  /// How many top-level objects `createAhead` looks at once: the part a file streamed into
  /// one batch is resolved in (`Ledger.importFile`), so that a file streamed and the same
  /// text staged whole give one record.
  static let aheadWindow = 1_000

  /// Where `createAhead` stands in the steps being resolved.
  private struct AheadCursor {
    var steps: [ChangeBatch.Step] = []
    /// The step and object the next window starts at.
    var step = 0
    var object = 0
    /// Top-level objects resolved, and where the next window begins among them.
    var resolved = 0
    var windowEnd = 0
  }
  private var ahead = AheadCursor()

  /// Before the next `aheadWindow` top-level objects are resolved, when they belong to
  /// several collections (a document) or to one whose objects refer to one another,
  /// creates the new objects they deliver, in the order the collections list them: a
  /// reference to an object listed further on then finds it, instead of making it a
  /// placeholder first. Objects are so stored in the order their own collections give, and
  /// an export imported again lists them as the export did.
  private mutating func createAheadIfDue() throws {
    defer { ahead.resolved += 1 }
    guard ahead.resolved == ahead.windowEnd else { return }
    ahead.windowEnd += Self.aheadWindow
    var window: [(entity: ResolvedEntity, object: MappedObject)] = []
    var collections: Set<String> = []
    var taken = 0
    while taken < Self.aheadWindow, ahead.step < ahead.steps.count {
      guard case .collection(let name, let objects, let options, _) = ahead.steps[ahead.step] else {
        ahead.step += 1
        ahead.object = 0
        continue
      }
      let end = min(objects.count, ahead.object + Self.aheadWindow - taken)
      if end > ahead.object { collections.insert(name) }
      if options.operations.contains(.insert), options.parent == nil, let entity = model.resolved(name),
        !entity.isInsertOnly, !entity.isOwned, !entity.declaration.isAbstract, entity.family.count == 1
      {
        for index in ahead.object..<end {
          if case .mapped(let object) = objects[index] { window.append((entity, object)) }
        }
      }
      taken += end - ahead.object
      if end == objects.count {
        ahead.step += 1
        ahead.object = 0
      } else {
        ahead.object = end
      }
    }
    // One collection needs it only when its objects refer to one another (a tree of units
    // each naming its parent and children).
    guard collections.count > 1 || window.first.map({ refersToItsOwnFamily($0.entity) }) == true else { return }
    for (entity, object) in window {
      guard let identity = object.identity, object.ownerPart == nil, object.entity === entity, !object.isKeyOnly,
        try lookup(root: entity.rootID, identity: identity) == nil
      else { continue }
      createdAhead.insert(try create(entity, identity: identity, reuse: nil))
    }
  }

  private func refersToItsOwnFamily(_ entity: ResolvedEntity) -> Bool {
    entity.relationships.contains { model.destination(of: $0)?.rootID == entity.rootID }
  }

  /// The changes of every step resolved, in first-touch order, and the counts, once the
  /// non-optional attributes of the objects created are checked.
  mutating func finish(ignoredKeys: [String]) throws -> (
    changes: [ObjectChange], statistics: ChangeRecord.Statistics
  ) {
    // A payload with bad objects does not say which objects the backend has: nothing is
    // pruned for it, so that no deletion is judged on objects only missing for that.
    if problems.problems.isEmpty { try prune() }
    try checkRequiredAttributes()
    do { try problems.check() } catch { throw LedgerError.mapping(error) }
    #if JSONLEDGER_INTERNAL_CHECKS
      try graph._checkInvariants()
    #endif
    // Nothing is looked up by identity from here on.
    identities.dropCache()
    return graph.objects.finish(ignoredKeys: ignoredKeys)
  }

  /// The state after the batch of each change's object, in change order (after a resolve); nil
  /// when every change is a creation.
  mutating func takeAfterStates() -> [ObjectState?]? { graph.objects.takeAfterStates() }

  private mutating func lookup(root: UInt32, identity: [AttributeValue]) throws -> UInt64? {
    try identities.registration(root: root, identity: identity, source: source)?.id
  }

  /// Creates an object (or brings back the deleted object `id`) with the given identity,
  /// which must be the identity last looked up; `placeholder`: a stub, known only because
  /// something referred to it by key (`AttributeList.placeholderMark`).
  private mutating func create(
    _ entity: ResolvedEntity, identity: [AttributeValue], reuse id: UInt64?, placeholder: Bool = false
  ) throws -> UInt64 {
    let objectID: UInt64
    if let id {
      objectID = id
    } else {
      objectID = identities.allocateID(root: entity.rootID)
      _ = graph.objects.addNewSlot(objectID)
    }
    var state = ObjectState(entity: entity.name, identity: identity)
    state.attributes = AttributeList(minimumCapacity: entity.attributes.count)
    // Room for a list per relationship: growing the lists one relationship at a time
    // reallocates them as each is linked.
    state.links.reserveCapacity(entity.relationships.count)
    for (part, value) in zip(entity.identityParts, identity) {
      if case .attribute(let attribute) = part { state.attributes[attribute.name] = value }
    }
    if placeholder { state.attributes[AttributeList.placeholderMark] = .bool(true) }
    try graph.objects.set(objectID, to: state)
    if !identity.isEmpty { try identities.registerNew(objectID, root: entity.rootID, identity: identity) }
    return objectID
  }

  // MARK: - Upserts

  private mutating func resolveCollection(
    _ entityName: String, _ objects: [ChangeBatch.StagedObject], _ options: StagingOptions, path: String,
    mapper: Mapper
  ) throws {
    guard let entity = model.resolved(entityName) else { return }
    strict = options.isStrict || strictForAll
    defer { strict = strictForAll }
    var parent: (id: UInt64, relationship: ResolvedRelationship)?
    if let scope = options.parent {
      guard let parentEntity = model.resolved(scope.entity) else {
        throw LedgerError.unknownEntity(scope.entity, known: model.entities.map(\.name))
      }
      guard let relationship = parentEntity.relationshipIndex[scope.relationship] else {
        throw LedgerError.invalidBatch("\(scope.entity) has no relationship \"\(scope.relationship)\"")
      }
      var report = Mapper.Report()
      let identity = mapper.identity(ofKey: scope.key, of: parentEntity, path: "parent", report: &report)
      guard let identity, let id = try lookup(root: parentEntity.rootID, identity: identity),
        try graph.objects.exists(id)
      else {
        throw LedgerError.objectNotFound(entity: scope.entity, key: scope.key)
      }
      parent = (id, relationship)
    }
    let collectionPath = JSONPath(path)
    for object in objects {
      try createAheadIfDue()
      let upserted: UInt64?
      switch object {
      case .mapped(let mapped): upserted = try upsert(mapped, operations: options.operations)
      case .skimmed(let skimmed):
        upserted = try upsert(
          PlacedPayload(payload: skimmed, parentPath: collectionPath), operations: options.operations)
      }
      if let id = upserted, let parent { try graph.link(parent.id, parent.relationship.id, id) }
    }
    guard options.prunes else { return }
    let scope = PruneScope(
      entity: entity.name, parent: parent?.id, relationship: parent?.relationship.id, path: path)
    if !pruneScopes.contains(scope) { pruneScopes.append(scope) }
  }

  /// Deletes, for each pruned collection, the objects of its entity (or of its parent's
  /// relationship) that no step of the batch named; with prune, every object a payload holds
  /// counts as named, nested ones too (a tree of one entity).
  private mutating func prune() throws {
    guard let keep = staged else { return }
    for scope in pruneScopes {
      guard let entity = model.resolved(scope.entity) else { continue }
      let candidates: [UInt64]
      if let parent = scope.parent, let relationship = scope.relationship {
        candidates = try graph.objects.links(parent, relationship).array
      } else {
        let family = Set(entity.family)
        var ids = try source.objectIDs(root: entity.rootName)
        ids += identities.newIDs(root: entity.rootID)
        candidates = try ids.filter { id in
          guard let name = try graph.objects.concreteEntity(of: id) else { return false }
          return family.contains(name)
        }
      }
      var deleted = 0
      var live = 0
      let path = JSONPath(scope.path)
      // Objects an import delivered first; then placeholders, once those deletions took
      // their references: a placeholder is there because something refers to it, not
      // because an import of its entity delivered it, so while a reference lasts, a prune
      // leaves it.
      var placeholders: [UInt64] = []
      for id in candidates where try graph.objects.exists(id) {
        guard !keep.contains(id) else {
          live += 1
          continue
        }
        if try isPlaceholder(id) {
          placeholders.append(id)
          continue
        }
        live += 1
        try delete(id, path: path)
        deleted += 1
      }
      // In a parent's list, the parent's own link is the one being pruned: not a reference.
      let scoped = scope.relationship.map { (model.counterpart(of: $0), scope.parent ?? 0) }
      for id in placeholders where try graph.objects.exists(id) {
        if try isReferenced(id, apartFrom: scoped) {
          placeholdersKeptByPrune += 1
        } else {
          try delete(id, path: path)
        }
      }
      if live > 0, deleted == live, !emptiedByPrune.contains(scope.entity) { emptiedByPrune.append(scope.entity) }
    }
    pruneScopes = []
  }

  /// Whether `id` is a placeholder.
  private mutating func isPlaceholder(_ id: UInt64) throws -> Bool {
    try graph.objects.state(of: id)?.attributes.isPlaceholder ?? false
  }

  /// Whether some object links to `id`, the link `apartFrom` names (a relationship id of
  /// `id` and the object it links to) left out.
  private mutating func isReferenced(_ id: UInt64, apartFrom ignored: (UInt32, UInt64)?) throws -> Bool {
    guard let state = try graph.objects.state(of: id) else { return false }
    return state.links.contains { relationshipID, targets in
      targets.contains { target in ignored.map { $0.0 != relationshipID || $0.1 != target } ?? true }
    }
  }

  /// Creates or merges one payload, or skips it when the store holds it as it is; returns its
  /// id (nil when the operations skip it).
  private mutating func upsert<Payload: ResolverPayload>(_ payload: borrowing Payload, operations: Operations) throws
    -> UInt64?
  {
    let id = try upsertUnrecorded(payload, operations: operations)
    if let id, staged != nil { staged?.insert(id) }
    return id
  }

  /// The one rule of skipping, for an object mapped from JSON and for one staged as its text:
  /// a payload already applied (this very payload made the stored object, or made it again in
  /// this batch) is not merged again; its nested objects, payloads of their own, still are.
  fileprivate mutating func upsertUnrecorded<Payload: ResolverPayload>(
    _ payload: borrowing Payload, operations: Operations
  ) throws -> UInt64? {
    // Only a payload that updates can be known to have been applied already.
    guard let fingerprint = payload.skippableFingerprint(under: operations) else {
      return try payload.merge(in: &self, operations: operations, known: nil, fingerprint: nil)
    }
    if let id = graph.objects.unchanged.skippedObject(withFingerprint: fingerprint),
      graph.objects.existingSlot(id) == nil
    {
      try payload.upsertNested(in: &self)
      return id
    }
    // Untouched in this batch, and left as it is by this very payload: applying it again
    // would change nothing, here or on the other side of its links.
    let registered = try payload.registration(in: &self)
    if let stored = registered, stored.payloadFingerprint == fingerprint, graph.objects.existingSlot(stored.id) == nil {
      graph.objects.unchanged.skip(stored.id, mark: PayloadMark(fingerprint: fingerprint, mask: payload.mask))
      try payload.upsertNested(in: &self)
      return stored.id
    }
    if let stored = registered, isMadeAgain(byPayload: fingerprint, stored.id) {
      try payload.upsertNested(in: &self)
      return stored.id
    }
    return try payload.merge(in: &self, operations: operations, known: .some(registered?.id), fingerprint: fingerprint)
  }

  /// The id and payload fingerprint the store holds for `identity`.
  fileprivate mutating func registration(root: UInt32, identity: [AttributeValue]) throws
    -> (id: UInt64, payloadFingerprint: UInt64)?
  {
    try identities.registration(root: root, identity: identity, source: source)
  }

  /// A mapped object merged (it was not skipped), its payload fingerprint kept when it has one.
  fileprivate mutating func mergeMapped(
    _ object: borrowing MappedObject, operations: Operations, known: UInt64??, fingerprint: UInt64?
  ) throws -> UInt64? {
    guard let id = try mergeRemapped(object, operations: operations, known: known) else { return nil }
    if let fingerprint { graph.objects.setPayload(id, fingerprint: fingerprint, mask: object.fingerprint.mask) }
    return id
  }

  /// What staging found of a skimmed payload's object, while no batch has been applied since;
  /// else the store's registration.
  fileprivate mutating func registration(of payload: SkimmedPayload) throws -> (id: UInt64, payloadFingerprint: UInt64)?
  {
    if stagedHere, let found = payload.stored, try found.head == storeHead() {
      return (found.id, payload.fingerprint)
    }
    return try registration(root: payload.entity.rootID, identity: payload.identity)
  }

  /// A skimmed payload changed since it was staged, or a nested one the store does not hold:
  /// mapped now, as staging would have (the same text mapped without a problem when it was
  /// applied, so none is expected; any is reported all the same), then upserted as mapped. The
  /// same text met again (a nested object repeated under many parents) is mapped once.
  fileprivate mutating func mergeSkimmed(_ payload: SkimmedPayload, at path: JSONPath, operations: Operations) throws
    -> UInt64?
  {
    if var mapped = remapped[payload.fingerprint] {
      mapped.path = path
      return try upsertUnrecorded(mapped, operations: operations)
    }
    guard let mapper, case .object(let object)? = try? payload.text.parse(payload.range) else {
      throw LedgerError.invalidBatch("the staged text of \(payload.entity.name) at \(path) cannot be read again")
    }
    var report = Mapper.Report()
    report.text = payload.text
    guard let mapped = mapper.mapObject(object, entity: payload.entity, path: path, report: &report) else {
      problems.add(contentsOf: report.problems)
      return nil
    }
    problems.add(contentsOf: report.problems)
    if report.problems.problems.isEmpty, remapped.count < Self.remappedLimit { remapped[payload.fingerprint] = mapped }
    return try upsertUnrecorded(mapped, operations: operations)
  }

  /// Upserts the skimmed payloads nested in one at `path`.
  fileprivate mutating func upsertNested(of payload: SkimmedPayload, at path: JSONPath) throws {
    try payload.forEachNested { _ = try upsert(PlacedPayload(payload: $0, parentPath: path), operations: .upsert) }
  }

  /// Whether a payload met again in this batch (a producer nested in each of its albums) made
  /// the object's working state what it is, with nothing it names changed since: merging it
  /// again would change nothing, so it is not merged; its nested objects, payloads of their
  /// own, still are. Only while no problem has been found: merged again, a payload that had
  /// one reports it at this place too.
  private func isMadeAgain(byPayload fingerprint: UInt64, _ id: UInt64) -> Bool {
    !mergesEveryPayload && problems.problems.isEmpty && graph.objects.isMade(byPayload: fingerprint, id)
  }

  /// `known`: the id `lookup` gave for the object's identity, when the caller has it
  /// (`.some(nil)`: none).
  private mutating func mergeRemapped(
    _ object: borrowing MappedObject, operations: Operations, known: UInt64?? = nil
  ) throws -> UInt64? {
    // Passed on, not copied into a variable (a copy retains each of its fields).
    if let remapped = try remappedToStoredSubentity(object) { return try merge(remapped, operations: operations) }
    return try merge(object, operations: operations, known: known)
  }

  /// Upserts the objects nested in a skipped object's relationships, as merging it would.
  fileprivate mutating func upsertNestedObjects(of object: borrowing MappedObject) throws {
    for named in object.relationships {
      switch named.value {
      case .clear, .toOne(.key): continue
      case .toOne(.object(let nested)): _ = try upsert(nested.object, operations: .upsert)
      case .toMany(let references):
        for case .object(let nested) in references { _ = try upsert(nested.object, operations: .upsert) }
      // A payload holding an owned row, or one whose key waits for its owner's, is never
      // skipped (`Mapper.reference`): every nested object here is a payload of its own.
      }
    }
  }

  /// A payload typed as an ancestor updates an existing object of a sub-entity with the
  /// sub-entity's own keys (Groot: no `type` needed to update a ConcreteA via Abstract): the
  /// object mapped again as that sub-entity, or nil when no such object is stored.
  private mutating func remappedToStoredSubentity(_ object: borrowing MappedObject) throws -> MappedObject? {
    let entity = object.entity
    guard let identity = object.identity, let source = object.source, let mapper,
      let known = try lookup(root: entity.rootID, identity: identity),
      let stored = try graph.objects.concreteEntity(of: known),
      stored != entity.name, entity.family.contains(stored), let concrete = model.resolved(stored)
    else { return nil }
    var report = Mapper.Report()
    var remapped = mapper.mapObject(source, entity: concrete, path: object.path, report: &report)
    remapped?.entity = concrete
    problems.add(contentsOf: report.problems)
    return remapped
  }

  private mutating func merge(
    _ object: borrowing MappedObject, operations: Operations, known knownByCaller: UInt64?? = nil
  ) throws -> UInt64? {
    let entity = object.entity
    let id: UInt64
    var isNew = false
    if let identity = object.identity {
      // The caller's lookup left the identity encoded, as `create` needs.
      let known = try knownByCaller ?? lookup(root: entity.rootID, identity: identity)
      // Created ahead of this payload (`createAheadIfDue`): its payload creates it.
      if let known, !createdAhead.isEmpty, createdAhead.remove(known) != nil {
        guard operations.contains(.insert) else { return nil }
        id = known
        isNew = true
        try graph.objects.mention(id)
      } else if let known, try graph.objects.exists(known) {
        id = known
        try graph.objects.mention(id)
        guard operations.contains(.update) else { return id }
        // A sub-entity named in the JSON refines an object stored as its ancestor; a sibling
        // never replaces it.
        if let stored = try graph.objects.concreteEntity(of: id), stored != entity.name {
          if model.resolved(stored)?.family.contains(entity.name) == true {
            try graph.objects.update(id) { $0.entity = entity.name }
          } else if !entity.family.contains(stored) {
            problems.add(
              entity.name, object.path, nil,
              "the stored object with this key is a \(stored): a payload cannot turn it into a \(entity.name)")
            return nil
          }
        }
      } else {
        guard operations.contains(.insert) else { return nil }
        if entity.declaration.isAbstract {
          problems.add(entity.name, object.path, nil, abstractProblem(entity))
          return nil
        }
        // A bare key (`"1699"`) delivers nothing but the key: the object is a placeholder
        // until a payload with its fields comes, as one a reference made would be.
        id = try create(entity, identity: identity, reuse: known, placeholder: object.isKeyOnly)
        isNew = true
        try graph.objects.mention(id)
      }
    } else {
      guard operations.contains(.insert) else { return nil }
      guard !entity.declaration.isAbstract else {
        problems.add(entity.name, object.path, nil, abstractProblem(entity))
        return nil
      }
      id = try create(entity, identity: [], reuse: nil)
      isNew = true
      try graph.objects.mention(id)
    }
    // The closure captures the attribute list alone: capturing `object` would copy all of it.
    let attributes = object.attributes
    let isKeyOnly = object.isKeyOnly
    try graph.objects.update(id) { state in
      // A payload of its own delivers a placeholder; a bare key does not.
      if !isKeyOnly, state.attributes.isPlaceholder { state.attributes[AttributeList.placeholderMark] = nil }
      // By index: a loop over the list copies each attribute before its value is copied in.
      for index in attributes.indices where !entity.identity.contains(attributes[index].name) {
        // Writing only what differs keeps an unchanged object's attributes shared with its
        // before-image, so that comparing the two is one pointer check.
        if isNew {
          state.attributes[attributes[index].name] = attributes[index].value
        } else if state.attributes[attributes[index].name] != attributes[index].value {
          state.attributes[attributes[index].name] = attributes[index].value
        }
      }
    }
    if isNew, checksRequiredAttributes, !object.isKeyOnly { createdFromPayloads.append((id, object.path)) }
    for named in object.relationships {
      let relationship = named.relationship
      if relationship.declaration.owns {
        try mergeOwned(named.value, of: id, through: relationship, path: object.path)
        continue
      }
      switch named.value {
      case .clear:
        try graph.setLinks(id, relationship, [])
      case .toOne(let reference):
        if let target = try resolve(reference, owner: id) {
          if relationship.isToMany {
            try graph.setLinks(id, relationship, [target])
          } else {
            try graph.setLink(id, relationship, to: target)
          }
        }
      case .toMany(let references):
        var targets: [UInt64] = []
        for reference in references {
          if let target = try resolve(reference, owner: id) {
            targets.append(target)
          }
        }
        try graph.setLinks(id, relationship, targets)
      }
    }
    return id
  }

  // MARK: - Owned rows

  /// Sets the rows `owner` owns through `relationship` to those `value` gives, and deletes
  /// the ones it no longer holds. Rows with an identity (their own, or one through a
  /// relationship the owner fills) are upserted by it; rows without one are matched to the
  /// rows the owner holds by position (an ordered list, a to-one) or by value (any other
  /// list), and each takes exactly the row's values (`replaceRow`): a row with no identity
  /// is its values.
  private mutating func mergeOwned(
    _ value: RelationshipValue, of owner: UInt64, through relationship: ResolvedRelationship, path: JSONPath
  ) throws {
    guard let destination = model.destination(of: relationship) else { return }
    var rows: [NestedObject] = []
    switch value {
    case .clear: break
    case .toOne(.object(let row)): rows = [row]
    case .toOne(.key): return  // refused while mapping
    case .toMany(let references):
      for case .object(let row) in references { rows.append(row) }
    }
    let held = try graph.objects.links(owner, relationship.id).array
    var ids: [UInt64] = []
    if destination.isInsertOnly {
      ids = try replaceRows(rows, held: held, byPosition: relationship.isOrdered || !relationship.isToMany)
    } else {
      for row in rows {
        if let id = try resolve(.object(row), owner: owner) { ids.append(id) }
      }
    }
    if relationship.isToMany {
      try graph.setLinks(owner, relationship, ids)
    } else {
      try graph.setLink(owner, relationship, to: ids.last)
    }
    let kept = Set(ids)
    for row in held where !kept.contains(row) {
      if try graph.objects.exists(row) { try delete(row, path: path) }
    }
  }

  /// The rows of an entity without identity after a payload: each of `rows` takes the place
  /// of a row `held` (the same position, or a row of equal values), else is created; the ids
  /// in the payload's order.
  private mutating func replaceRows(_ rows: [NestedObject], held: [UInt64], byPosition: Bool) throws
    -> [UInt64]
  {
    // Each row's links resolved first: they are part of what a row is when matched by value.
    var contents: [RowContent] = []
    contents.reserveCapacity(rows.count)
    for row in rows { contents.append(try content(of: row.object)) }
    var places = [UInt64?](repeating: nil, count: rows.count)
    var free = held
    if byPosition {
      for index in places.indices where index < held.count { places[index] = held[index] }
      free = []
    } else {
      for (index, content) in contents.enumerated() {
        guard let match = try free.firstIndex(where: { try holds(content, $0) }) else { continue }
        places[index] = free.remove(at: match)
      }
      // What is left takes the place of what is left, in order: a changed row is an update.
      for index in places.indices where places[index] == nil && !free.isEmpty { places[index] = free.removeFirst() }
    }
    var ids: [UInt64] = []
    ids.reserveCapacity(rows.count)
    for (index, row) in rows.enumerated() {
      ids.append(try replaceRow(places[index], with: row.object, content: contents[index]))
    }
    return ids
  }

  /// What a row without identity says: its attributes, the targets of the relationships it
  /// names (resolved), and the values of the ones that own rows in turn.
  private struct RowContent {
    var attributes = AttributeList()
    var links: [(ResolvedRelationship, [UInt64])] = []
    var owned: [(ResolvedRelationship, RelationshipValue)] = []
  }

  private mutating func content(of row: borrowing MappedObject) throws -> RowContent {
    var content = RowContent()
    for attribute in row.attributes {
      content.attributes[attribute.name] = attribute.value
    }
    for named in row.relationships {
      let relationship = named.relationship
      if relationship.declaration.owns {
        content.owned.append((relationship, named.value))
        continue
      }
      var targets: [UInt64] = []
      switch named.value {
      case .clear: break
      case .toOne(let reference): if let target = try resolve(reference, owner: nil) { targets = [target] }
      case .toMany(let references):
        for reference in references {
          if let target = try resolve(reference, owner: nil) { targets.append(target) }
        }
      }
      content.links.removeAll { $0.0 === relationship }
      content.links.append((relationship, targets))
    }
    return content
  }

  /// Whether the row `id` holds exactly `content`'s values and links (the link to its owner
  /// and rows it owns aside).
  private mutating func holds(_ content: RowContent, _ id: UInt64) throws -> Bool {
    guard let state = try graph.objects.state(of: id) else { return false }
    guard state.attributes == content.attributes else { return false }
    for (relationship, targets) in content.links {
      let list = state.links[relationship.id]?.array ?? []
      if list != (relationship.isOrdered ? targets : Array(Set(targets)).sorted()) { return false }
    }
    let named = Set(content.links.map(\.0.id))
    guard let entity = model.resolved(state.entity) else { return false }
    for relationship in entity.relationships
    where !relationship.declaration.owns && !named.contains(relationship.id) && !isOwnerLink(relationship) {
      if state.links[relationship.id]?.isEmpty == false { return false }
    }
    return true
  }

  /// Whether `relationship` of a row points to the row's owner (the inverse of an owning one).
  private func isOwnerLink(_ relationship: ResolvedRelationship) -> Bool {
    guard let destination = model.destination(of: relationship),
      let back = relationship.declaration.inverse.flatMap({ destination.relationshipIndex[$0] })
    else { return false }
    return back.declaration.owns
  }

  /// The row `id` (nil: a new one) made to hold exactly what `row` gives: its attributes, the
  /// links it names and none other (its owner's aside), and the rows it owns in turn.
  private mutating func replaceRow(_ id: UInt64?, with row: borrowing MappedObject, content: RowContent) throws
    -> UInt64
  {
    let entity = row.entity
    let rowID: UInt64
    if let id, try graph.objects.concreteEntity(of: id) == entity.name {
      rowID = id
    } else {
      if let id { try delete(id, path: row.path) }
      rowID = try create(entity, identity: [], reuse: nil)
      if checksRequiredAttributes { createdFromPayloads.append((rowID, row.path)) }
    }
    try graph.objects.mention(rowID)
    let attributes = content.attributes
    try graph.objects.update(rowID) { state in
      if state.attributes != attributes { state.attributes = attributes }
    }
    let named = Set(content.links.map(\.0.id))
    for (relationship, targets) in content.links {
      if relationship.isToMany {
        try graph.setLinks(rowID, relationship, targets)
      } else {
        try graph.setLink(rowID, relationship, to: targets.last)
      }
    }
    for relationship in entity.relationships
    where !relationship.declaration.owns && !named.contains(relationship.id) && !isOwnerLink(relationship) {
      try graph.setLinks(rowID, relationship, [])
    }
    let ownedNamed = Set(content.owned.map(\.0.id))
    for (relationship, value) in content.owned {
      try mergeOwned(value, of: rowID, through: relationship, path: row.path)
    }
    for relationship in entity.relationships
    where relationship.declaration.owns && !ownedNamed.contains(relationship.id) {
      try mergeOwned(.clear, of: rowID, through: relationship, path: row.path)
    }
    return rowID
  }

  private func abstractProblem(_ entity: ResolvedEntity) -> String {
    let key = entity.subentityKey.map { " in \"\($0)\"" } ?? ""
    return "\(entity.name) is abstract: a new object must name a sub-entity\(key)"
  }

  /// Deletes an object under its relationships' deletion rules: `deny` refuses while the
  /// relationship links anything (naming what), `cascade` deletes what it links and so on
  /// down, `nullify` (the default) unlinks.
  private mutating func delete(_ id: UInt64, path: JSONPath) throws {
    var pending = [id]
    var deleted: Set<UInt64> = []
    while let next = pending.popLast() {
      guard deleted.insert(next).inserted, let state = try graph.objects.state(of: next),
        let entity = model.resolved(state.entity)
      else { continue }
      var cascades: [UInt64] = []
      for relationship in entity.relationships
      where relationship.declaration.deletionRule != .nullify || relationship.declaration.owns {
        let targets = state.links[relationship.id] ?? []
        guard !targets.isEmpty else { continue }
        // Owned rows go with their owner, whatever the rule says.
        if relationship.declaration.owns {
          cascades += targets
          continue
        }
        switch relationship.declaration.deletionRule {
        case .nullify: continue
        case .cascade: cascades += targets
        case .deny:
          let shown = try targets.prefix(5).map { try graph.objects.state(of: $0)?.identity.map(\.keyText) ?? [] }
          let keys = shown.map { $0.joined(separator: ", ") }.joined(separator: "; ")
          problems.add(
            entity.name, path, nil,
            "cannot delete \(entity.name) \(state.identity.map(\.keyText).joined(separator: ", ")): its "
              + "\(relationship.name) still links \(targets.count) object\(targets.count == 1 ? "" : "s") "
              + "(\(keys)\(targets.count > 5 ? ", …" : "")) and its deletion rule is Deny")
          return
        }
      }
      try graph.delete(next)
      pending += cascades.reversed()
    }
  }

  /// Every object the batch created from a payload (not a stub) carries each non-optional
  /// attribute of its entity, once the whole batch is merged (Groot's validation).
  private mutating func checkRequiredAttributes() throws {
    for (id, path) in createdFromPayloads {
      guard let name = try graph.objects.concreteEntity(of: id), let entity = model.resolved(name),
        !entity.requiredAttributes.isEmpty
      else { continue }
      let slot = try graph.objects.slot(id)
      let missing = graph.objects.peek(slot) { state in
        entity.requiredAttributes.filter { state?.attributes[$0] == nil }
      }
      for attribute in missing {
        problems.add(entity.name, path, nil, "a new \(entity.name) needs \(attribute), which is not optional")
      }
    }
  }

  /// The object a reference names, upserted or found (a key that exists nowhere makes a
  /// placeholder). `owner`: the object the reference is given in, whose key completes the
  /// identity of a nested object that waits for it (`MappedObject.ownerPart`).
  private mutating func resolve(_ reference: ObjectReference, owner: UInt64?) throws -> UInt64? {
    switch reference {
    case .object(let nested):
      guard let part = nested.object.ownerPart else { return try upsert(nested.object, operations: .upsert) }
      guard let owner, let ownerIdentity = try graph.objects.state(of: owner)?.identity, !ownerIdentity.isEmpty,
        var identity = nested.object.identity, part < identity.count
      else {
        problems.add(
          nested.object.entity.name, nested.object.path, nil,
          "the object it is nested in has no key to be part of this one's identity")
        return nil
      }
      identity[part] = Mapper.keyPart(ofIdentity: ownerIdentity)
      var completed = nested.object
      completed.identity = identity
      completed.ownerPart = nil
      // Its text says nothing of its owner: the same row under two owners has one
      // fingerprint, so it is merged, never skipped as a payload met before.
      var fingerprint = completed.fingerprint
      fingerprint.addUnkeyedObject()
      completed.fingerprint = fingerprint
      return try upsert(completed, operations: .upsert)
    case .key(let entity, let value, let path):
      let entityName = entity.name
      // `lookup` without an array of the one value (a `lookup` generic over the collection
      // costs its array callers more than this line saves).
      let known = try identities.registration(root: entity.rootID, identity: CollectionOfOne(value), source: source)?.id
      if let known, try graph.objects.exists(known) { return known }
      if strict {
        problems.add(
          entityName, path, nil,
          "no \(entityName) with key \(value.keyText) exists in the batch or the store (strict references)")
        return nil
      }
      if entity.declaration.isAbstract {
        problems.add(entityName, path, nil, "cannot create a stub of the abstract entity \(entityName)")
        return nil
      }
      // A known id here belongs to a deleted object: its identity comes back.
      return try create(entity, identity: [value], reuse: known, placeholder: true)
    }
  }
}

/// A payload the resolver upserts (`BatchResolver.upsertUnrecorded`): an object mapped from
/// JSON, or one staged as its text and mapped only when it is not skipped. The rule of
/// skipping is the resolver's, once; each kind says how it is found in the store, how its
/// nested payloads are reached, and how it is merged.
protocol ResolverPayload {
  /// The fingerprint by which it may be skipped as applied already, under `operations`; nil
  /// when it cannot be (no identity, or the operations do not update).
  func skippableFingerprint(under operations: Operations) -> UInt64?
  /// Which of its attributes and relationships the fingerprint covers.
  var mask: UInt64 { get }
  /// The id and payload fingerprint the store holds for its identity.
  func registration(in resolver: inout BatchResolver) throws -> (id: UInt64, payloadFingerprint: UInt64)?
  /// Upserts its nested payloads (it is skipped; they are payloads of their own).
  func upsertNested(in resolver: inout BatchResolver) throws
  /// Merges it: `known`, the id found for its identity (`.some(nil)`: none; nil: not looked
  /// up); `fingerprint`, the one it may be skipped by next time.
  func merge(in resolver: inout BatchResolver, operations: Operations, known: UInt64??, fingerprint: UInt64?) throws
    -> UInt64?
}

extension MappedObject: ResolverPayload {
  func skippableFingerprint(under operations: Operations) -> UInt64? {
    identity != nil && operations.contains(.update) ? fingerprint.value : nil
  }

  var mask: UInt64 { fingerprint.mask }

  func registration(in resolver: inout BatchResolver) throws -> (id: UInt64, payloadFingerprint: UInt64)? {
    guard let identity else { return nil }
    return try resolver.registration(root: entity.rootID, identity: identity)
  }

  func upsertNested(in resolver: inout BatchResolver) throws { try resolver.upsertNestedObjects(of: self) }

  func merge(in resolver: inout BatchResolver, operations: Operations, known: UInt64??, fingerprint: UInt64?) throws
    -> UInt64?
  {
    try resolver.mergeMapped(self, operations: operations, known: known, fingerprint: fingerprint)
  }
}

/// A skimmed payload where it was met: under `parentPath`, the path of the object it is nested
/// in (or of its collection).
struct PlacedPayload: ResolverPayload {
  let payload: SkimmedPayload
  let parentPath: JSONPath

  func skippableFingerprint(under operations: Operations) -> UInt64? { payload.fingerprint }

  var mask: UInt64 { payload.mask }

  func registration(in resolver: inout BatchResolver) throws -> (id: UInt64, payloadFingerprint: UInt64)? {
    try resolver.registration(of: payload)
  }

  func upsertNested(in resolver: inout BatchResolver) throws {
    try resolver.upsertNested(of: payload, at: payload.path(under: parentPath))
  }

  func merge(in resolver: inout BatchResolver, operations: Operations, known: UInt64??, fingerprint: UInt64?) throws
    -> UInt64?
  {
    try resolver.mergeSkimmed(payload, at: payload.path(under: parentPath), operations: operations)
  }
}
