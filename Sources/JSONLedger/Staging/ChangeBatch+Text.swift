extension ChangeBatch {
  /// Stages JSON text: objects of `entity`, or (nil) a document whose keys name collections.
  ///
  /// A collection is staged element by element: each is mapped as `stage(_:as:)` maps it,
  /// straight from its text where it is plain (`Mapper.mapPlainObject`), parsed into a tree
  /// otherwise and that tree let go before the next is read, so that no tree of the whole
  /// text is held. Where the store can say which objects it holds (a store that holds a batch,
  /// operations that may update), each object is skimmed first (`PayloadSkimmer`): one whose
  /// text is the text the store holds as having made the object what it is is staged as it
  /// is, neither parsed nor mapped, and every other one takes the fingerprint of its text. A
  /// parent scope, and anything amiss in the text, is staged by parsing the whole text first,
  /// so that errors and problems are the same either way, and nothing is staged when one is
  /// thrown.
  mutating func stageText(_ bytes: [UInt8], entity name: String?, options: StagingOptions, source: String?)
    throws(LedgerError)
  {
    let text = JSONSkim(bytes)
    let entity = name.flatMap { mapper.model.resolved($0) }
    // An envelope, and an entity that is owned or reads its items inside one, are staged from
    // the parsed text.
    // One object staged as an entity's is parsed too: it may be an envelope.
    let plain =
      options.itemsAt == nil && entity?.declaration.collectionPath == nil && entity?.isOwned != true
      && (entity == nil || text.bytes.dropFirst(text.documentStart).first != UInt8(ascii: "{"))
    if name == nil || entity != nil, options.parent == nil, plain {
      var staged = self
      if staged.stageByElement(text, entity: entity, options: options, stored: storeToSkimAgainst(options)) {
        self = staged
        return
      }
    }
    let json: JSONValue
    do { json = try JSONParser.parse(bytes, in: text.documentStart..<bytes.count) } catch {
      throw .syntax(error, source: source)
    }
    if let name {
      try stage(json, entity: try resolvedEntity(name), path: "", options: options, text: text)
    } else {
      try stageDocument(json, options: options, text: text)
    }
  }

  /// Stages `text` element by element, skimming its collections' objects against `stored`
  /// (nil: none skimmed); false when the text must be parsed whole instead (malformed, an
  /// unknown collection, a value of the wrong kind), with this batch then in an unspecified
  /// state.
  private mutating func stageByElement(
    _ text: JSONSkim, entity: ResolvedEntity?, options: StagingOptions, stored: StoredFingerprints?
  ) -> Bool {
    let start = text.documentStart
    guard start < text.bytes.count else { return false }
    var skimmer = PayloadSkimmer(mapper: mapper, text: text)
    defer { skimmer.handBack() }
    if let entity {
      guard
        let end = stageByElement(
          text, at: start, entity: entity, path: "", options: options, skimmer: &skimmer,
          depthLimit: JSONParser.maximumDepth, stored: stored), text.isAtEnd(from: end)
      else { return false }
    } else {
      // A document: its collections are one level deeper than a collection's objects.
      guard text.bytes[start] == UInt8(ascii: "{"), var item = text.firstItem(ofContainerAt: start) else {
        return false
      }
      while !item.closed {
        guard let member = text.memberKey(at: item.index),
          case .string(let key)? = try? text.parse((member.key.lowerBound - 1)..<(member.key.upperBound + 1)),
          let entity = CollectionNames.entity(forKey: key, in: mapper.model),
          let end = stageByElement(
            text, at: member.value, entity: entity, path: key, options: options,
            skimmer: &skimmer, depthLimit: JSONParser.maximumDepth - 1, stored: stored),
          let next = text.nextItem(after: end, closing: UInt8(ascii: "}"))
        else { return false }
        item = next
      }
      guard text.isAtEnd(from: item.index) else { return false }
    }
    ignoredKeys.formUnion(skimmer.ignoredKeys)
    return true
  }

  /// Stages the collection of `entity` whose value starts at `start` (an array of objects,
  /// one object, or anything else, parsed and staged as it is), skimming its objects against
  /// `stored` when its entity can be skimmed; the offset after it, or nil when the text must
  /// be parsed whole.
  private mutating func stageByElement(
    _ text: JSONSkim, at start: Int, entity: ResolvedEntity, path: String, options: StagingOptions,
    skimmer: inout PayloadSkimmer, depthLimit: Int, stored: StoredFingerprints?
  ) -> Int? {
    guard start < text.bytes.count else { return nil }
    let first = text.bytes[start]
    let isArray = first == UInt8(ascii: "[")
    guard isArray || first == UInt8(ascii: "{") else {
      guard let end = text.valueEnd(from: start, depthLimit: depthLimit), let json = try? text.parse(start..<end),
        (try? stage(json, entity: entity, path: path, options: options, text: text)) != nil
      else { return nil }
      return end
    }
    guard let stored, skimmer.canSkim(entity) else {
      return stageParsing(text, at: start, entity: entity, path: path, options: options, depthLimit: depthLimit)
    }
    // Each element's range, and its payload when it was skimmed.
    var ranges: [Range<Int>] = []
    var payloads: [SkimmedPayload?] = []
    var end: Int
    if isArray {
      guard var item = text.firstItem(ofContainerAt: start) else { return nil }
      while !item.closed {
        let elementStart = item.index
        var elementEnd: Int?
        var payload: SkimmedPayload?
        if text.bytes[elementStart] == UInt8(ascii: "{") {
          (payload, elementEnd) = skimmer.skim(
            at: elementStart, entity: entity, key: "", index: ranges.count, depthLimit: depthLimit - 1)
        }
        guard let elementEnd = elementEnd ?? text.valueEnd(from: elementStart, depthLimit: depthLimit - 1),
          let next = text.nextItem(after: elementEnd, closing: UInt8(ascii: "]"))
        else { return nil }
        ranges.append(elementStart..<elementEnd)
        payloads.append(payload)
        item = next
      }
      end = item.index
    } else {
      let object = skimmer.skim(at: start, entity: entity, key: "", index: nil, depthLimit: depthLimit)
      guard let objectEnd = object.end ?? text.valueEnd(from: start, depthLimit: depthLimit) else { return nil }
      ranges.append(start..<objectEnd)
      payloads.append(object.payload)
      end = objectEnd
    }
    let found = Self.registrations(of: payloads, in: stored)
    let collectionPath = JSONPath(path)
    var remembered = Mapper.Remembered()
    remembered.plainKeys = mapper.learnedKeys.takePlainKeys()
    defer { mapper.learnedKeys.keep(remembered.plainKeys) }
    let unparsed = stage(
      ranges: ranges, payloads: &payloads, found: found, of: text, entity: entity, path: path, options: options,
      remembered: &remembered
    ) { index in isArray ? collectionPath.appending(index: index) : collectionPath }
    guard unparsed == nil else { return nil }
    return end
  }

  /// Stages the collection of `entity` whose array or object starts at `start`, mapping one
  /// element at a time (from its text, or from its tree, let go before the next is read); the
  /// offset after it, or nil when the text must be parsed whole. Every element is parsed,
  /// also after the problems found fill their list, so that a syntax error is never missed.
  private mutating func stageParsing(
    _ text: JSONSkim, at start: Int, entity: ResolvedEntity, path: String, options: StagingOptions, depthLimit: Int
  ) -> Int? {
    var reader = JSONValueReader(text.bytes)
    var report = Mapper.Report()
    report.text = text
    var objects: [StagedObject] = []
    let collectionPath = JSONPath(path)
    func stageElement(_ json: JSONValue, path: JSONPath) {
      guard !report.problems.isFull, let mapped = mapper.mapElement(json, entity: entity, path: path, report: &report)
      else { return }
      objects.append(.mapped(mapped))
    }
    let end: Int
    var plainEnd = 0
    if text.bytes[start] == UInt8(ascii: "[") {
      guard var item = text.firstItem(ofContainerAt: start) else { return nil }
      var index = 0
      while !item.closed {
        var elementEnd = 0
        if !report.problems.isFull,
          let plain = mapper.mapPlainObject(
            at: item.index, entity: entity, path: collectionPath.appending(index: index), depthLimit: depthLimit - 1,
            reader: &reader, report: &report, end: &elementEnd)
        {
          objects.append(.mapped(plain))
        } else {
          guard let element = try? reader.value(at: item.index, depthLimit: depthLimit - 1) else { return nil }
          stageElement(element.value, path: collectionPath.appending(index: index))
          elementEnd = element.end
        }
        guard let next = text.nextItem(after: elementEnd, closing: UInt8(ascii: "]")) else { return nil }
        index += 1
        item = next
      }
      end = item.index
    } else if let plain = mapper.mapPlainObject(
      at: start, entity: entity, path: collectionPath, depthLimit: depthLimit, reader: &reader, report: &report,
      end: &plainEnd)
    {
      objects.append(.mapped(plain))
      end = plainEnd
    } else {
      guard let object = try? reader.value(at: start, depthLimit: depthLimit) else { return nil }
      stageElement(object.value, path: collectionPath)
      end = object.end
    }
    collected.add(contentsOf: report.problems)
    ignoredKeys.formUnion(report.ignoredKeys)
    steps.append(.collection(entity: entity.name, objects: objects, options: options, path: path))
    return end
  }

  /// Stages elements of one collection read by `JSONFileChunks` as text: their ranges in
  /// `text`, with where each is in the file (`source`), the first being element `firstIndex`
  /// of its collection. As `stageText` stages a collection: skimmed when the store can say
  /// which objects it holds, parsed and mapped otherwise; a syntax error is placed in the file.
  /// `remembered`: what mapping the parts before remembered, and is left remembering.
  mutating func stage(
    elements: [(range: Range<Int>, place: JSONElementPlace)], of text: JSONSkim, entity: ResolvedEntity,
    path: String, firstIndex: Int, options: StagingOptions, source: String, remembered: inout Mapper.Remembered
  ) throws(LedgerError) {
    if let scope = options.parent { try checkParentScope(scope, of: entity) }
    var skimmer = PayloadSkimmer(mapper: mapper, text: text)
    defer { skimmer.handBack() }
    var payloads = [SkimmedPayload?](repeating: nil, count: elements.count)
    var found: StoredRegistrations?
    if skimmer.canSkim(entity), let storedFingerprints = storeToSkimAgainst(options) {
      for (index, element) in elements.enumerated() where text.bytes[element.range.lowerBound] == UInt8(ascii: "{") {
        let object = skimmer.skim(
          at: element.range.lowerBound, entity: entity, key: "", index: firstIndex + index,
          depthLimit: JSONParser.maximumDepth)
        if object.end == element.range.upperBound { payloads[index] = object.payload }
      }
      found = Self.registrations(of: payloads, in: storedFingerprints)
    }
    let collectionPath = JSONPath(path)
    if let unparsed = stage(
      ranges: elements.map(\.range), payloads: &payloads, found: found, of: text, entity: entity, path: path,
      options: options, remembered: &remembered, elementPath: { collectionPath.appending(index: firstIndex + $0) })
    {
      let element = elements[unparsed]
      do { _ = try JSONParser.parse(element: text.bytes[element.range]) } catch {
        throw .syntax(element.place.placing(error), source: source)
      }
      throw .invalidBatch("the element at line \(element.place.line) of \(source) cannot be read")
    }
    ignoredKeys.formUnion(skimmer.ignoredKeys)
  }

  /// The store to skim objects against, when skimming can find anything: a payload that may
  /// update (only such a payload is ever skipped), no parent scope, and a store that holds a
  /// batch.
  private func storeToSkimAgainst(_ options: StagingOptions) -> StoredFingerprints? {
    guard let storedFingerprints, options.operations.contains(.update), options.parent == nil,
      let head = storedFingerprints([])?.head, head > 0
    else { return nil }
    return storedFingerprints
  }

  /// What the store holds for the identities of `payloads` (those skimmed), in order.
  private static func registrations(of payloads: [SkimmedPayload?], in stored: StoredFingerprints)
    -> StoredRegistrations?
  {
    var candidates: [(root: UInt32, identity: [AttributeValue])] = []
    for index in payloads.indices {
      if let payload = payloads[index] { candidates.append((payload.entity.rootID, payload.identity)) }
    }
    return candidates.isEmpty ? nil : stored(candidates)
  }

  /// Stages the elements at `ranges` of one collection as one step: a skimmed one (in
  /// `payloads`, taken from it) whose fingerprint the store holds (`found`) as it is, every
  /// other parsed and mapped, its objects taking the fingerprints of their text. The index of
  /// an element that does not parse, with nothing staged; nil once staged.
  private mutating func stage(
    ranges: [Range<Int>], payloads: inout [SkimmedPayload?], found: StoredRegistrations?, of text: JSONSkim,
    entity: ResolvedEntity, path: String, options: StagingOptions, remembered: inout Mapper.Remembered,
    elementPath: (Int) -> JSONPath
  ) -> Int? {
    var report = Mapper.Report()
    report.text = text
    // Moved in and back out, not copied: the report changes what it remembers.
    swap(&report.remembered, &remembered)
    defer { swap(&report.remembered, &remembered) }
    var objects: [StagedObject] = []
    objects.reserveCapacity(ranges.count)
    // One reader for every element: it keeps the keys it met and its room for members.
    var reader = JSONValueReader(text.bytes)
    var next = 0
    for index in ranges.indices {
      // Past a full list of problems nothing more is staged, but every element is still
      // parsed: a syntax error anywhere is the error, as when the text is parsed whole.
      if report.problems.isFull {
        guard (try? reader.document(in: ranges[index])) != nil else { return index }
        continue
      }
      // Moved out, not copied: a copy retains each of its fields.
      if var payload = payloads[index].take() {
        defer { next += 1 }
        if let found, next < found.registrations.count, found.registrations[next].fingerprint == payload.fingerprint {
          payload.stored = (found.registrations[next].id, found.head)
          objects.append(.skimmed(payload))
          continue
        }
      }
      var plainEnd = 0
      if let plain = mapper.mapPlainObject(
        at: ranges[index].lowerBound, entity: entity, path: elementPath(index), depthLimit: JSONParser.maximumDepth,
        reader: &reader, report: &report, end: &plainEnd), plainEnd == ranges[index].upperBound
      {
        objects.append(.mapped(plain))
        continue
      }
      guard let json = try? reader.document(in: ranges[index]) else { return index }
      guard let mapped = mapper.mapElement(json, entity: entity, path: elementPath(index), report: &report) else {
        continue
      }
      objects.append(.mapped(mapped))
    }
    collected.add(contentsOf: report.problems)
    ignoredKeys.formUnion(report.ignoredKeys)
    steps.append(.collection(entity: entity.name, objects: objects, options: options, path: path))
    return nil
  }
}
