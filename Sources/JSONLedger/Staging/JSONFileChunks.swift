import Foundation
import JSONLedgerSupport

/// A JSON file of any size cut into staged batches of at most `chunkSize` top-level objects,
/// read by streaming: one element at a time, so memory holds one chunk.
///
/// The file is a top-level array of objects of one entity, or (with no entity) an object
/// whose keys name collections.
struct JSONFileChunks {
  let path: String
  let entity: ResolvedEntity?
  let chunkSize: Int
  let options: StagingOptions
  let makeBatch: () -> ChangeBatch

  /// Stages the file chunk by chunk, handing each staged batch, the number of top-level
  /// objects in it and the bytes of the file read so far to `body` before reading further.
  func forEachChunk(_ body: (ChangeBatch, Int, Int) throws -> Void) throws {
    try forEachChunk(digesting: false) { batch, count, bytesRead, _ in try body(batch, count, bytesRead) }
  }

  /// `forEachChunk`, with a digest of each chunk's text (its elements' bytes, the collection
  /// each is in, and where each starts): two chunks of the same elements have one digest.
  func forEachDigestedChunk(_ body: (ChangeBatch, Int, Int, UInt64) throws -> Void) throws {
    try forEachChunk(digesting: true, body)
  }

  /// An element read and not yet staged: its text is `range` of the chunk's text.
  private struct Pending {
    let entity: ResolvedEntity
    let key: String
    let index: Int
    let place: JSONElementPlace
    let range: Range<Int>
  }

  /// The chunks, each with its digest when `digesting` (0 otherwise: hashing every byte of
  /// the file costs more than a tenth of reading it).
  private func forEachChunk(digesting: Bool, _ body: (ChangeBatch, Int, Int, UInt64) throws -> Void) throws {
    var stream = try Self.reading(path) { try JSONStream(path: path) }
    // Without an entity, a top-level array's elements and a document of one scalar both come
    // without a collection: which it is decides the error.
    let isArray = try Self.reading(path) { try stream.firstByte() } == UInt8(ascii: "[")
    var chunker = Chunker(file: self, model: makeBatch().mapper.model, isArray: isArray, digesting: digesting)
    try Self.reading(path) { try chunker.read(&stream, body) }
    try chunker.flush(body)
  }

  /// What reading a file into chunks keeps between elements. One value, so that the closures
  /// the stream calls for each element reach it through `self`, whose exclusive access the
  /// compiler proves, rather than through captured variables each checked as it runs (four
  /// such checks an element, with their bookkeeping, cost 1.3% of a streamed import;
  /// RESULTS.md).
  private struct Chunker {
    let file: JSONFileChunks
    let model: Model
    let isArray: Bool
    let digesting: Bool
    /// The elements read and not yet staged; each one's text is a range of `text`.
    var pending: [Pending] = []
    var text: [UInt8] = []
    /// How many elements each collection has had so far.
    var counters: [String: Int] = [:]
    /// What mapping remembers (nested texts mapped, keys met), kept from one chunk to the next.
    var remembered = Mapper.Remembered()
    var bytesRead = 0
    /// The entity of the collection the last element was in: found by name once per run of
    /// elements, not once for each.
    var lastCollection: (key: String, entity: ResolvedEntity)?

    init(file: JSONFileChunks, model: Model, isArray: Bool, digesting: Bool) {
      self.file = file
      self.model = model
      self.isArray = isArray
      self.digesting = digesting
    }

    /// Reads every element of `stream`, staging and handing on a chunk each time one fills.
    mutating func read(_ stream: inout JSONStream, _ body: (ChangeBatch, Int, Int, UInt64) throws -> Void) throws {
      // With an entity, one object (not in an array) is one element of it.
      try stream.forEachElementText(
        objectIsOneElement: file.entity != nil, collectionStarts: { _ = try collectionEntity($0) },
        bytesRead: { bytesRead = $0 }, { collection, bytes, place in try add(collection, bytes, place, body) })
    }

    /// Stages the pending elements as one batch and hands it to `body`.
    mutating func flush(_ body: (ChangeBatch, Int, Int, UInt64) throws -> Void) throws {
      guard !pending.isEmpty else { return }
      var batch = file.makeBatch()
      var start = 0
      var elements: [(range: Range<Int>, place: JSONElementPlace)] = []
      while start < pending.count {
        let key = pending[start].key
        var end = start + 1
        while end < pending.count, pending[end].key == key { end += 1 }
        elements.removeAll(keepingCapacity: true)
        for index in start..<end { elements.append((pending[index].range, pending[index].place)) }
        try batch.stage(
          elements: elements, of: JSONSkim(text), entity: pending[start].entity, path: key,
          firstIndex: pending[start].index, options: file.options, source: file.path, remembered: &remembered)
        start = end
      }
      let count = pending.count
      let digest = digesting ? JSONFileChunks.digest(text, pending) : 0
      pending.removeAll(keepingCapacity: true)
      text.removeAll(keepingCapacity: true)
      try body(batch, count, bytesRead, digest)
    }

    /// The entity of the collection `collection`; each collection key is checked where it
    /// starts, so an empty one is checked too.
    func collectionEntity(_ collection: String) throws -> ResolvedEntity {
      guard file.entity == nil else {
        throw LedgerError.invalidBatch(
          "with an entity, the file must be a top-level array, not an object of collections")
      }
      guard let resolved = CollectionNames.entity(forKey: collection, in: model) else {
        if let envelope = JSONFileChunks.envelopeError(file.path) { throw envelope }
        throw LedgerError.unknownCollection(collection, known: CollectionNames.knownKeys(in: model))
      }
      return resolved
    }

    /// Adds one element, read in `collection` (nil: a top-level array's), to the chunk: its
    /// bytes copied into the chunk's text.
    private mutating func add(
      _ collection: String?, _ bytes: UnsafeBufferPointer<UInt8>, _ place: JSONElementPlace,
      _ body: (ChangeBatch, Int, Int, UInt64) throws -> Void
    ) throws {
      let target: ResolvedEntity
      let key = collection ?? ""
      if let collection {
        if let lastCollection, lastCollection.key == collection {
          target = lastCollection.entity
        } else {
          target = try collectionEntity(collection)
          lastCollection = (collection, target)
        }
      } else {
        guard let entity = file.entity else {
          guard isArray else {
            // A document of one value that is neither an object nor an array: refused as
            // staging it whole refuses it.
            do { throw ChangeBatch.notADocument(try JSONParser.parse(element: bytes)) } catch let error
              as JSONSyntaxError
            {
              throw LedgerError.syntax(place.placing(error), source: file.path)
            }
          }
          throw LedgerError.invalidBatch("a top-level array needs an entity: name the entity its objects are")
        }
        target = entity
      }
      // Taken and counted up in one access of the dictionary, not a read and a write.
      let index = JSONFileChunks.takeNext(&counters[key, default: 0])
      let range = text.count..<(text.count + bytes.count)
      text.append(contentsOf: bytes)
      pending.append(Pending(entity: target, key: key, index: index, place: place, range: range))
      if pending.count >= file.chunkSize { try flush(body) }
    }
  }

  /// `counter`'s value, which is counted up.
  private static func takeNext(_ counter: inout Int) -> Int {
    defer { counter += 1 }
    return counter
  }

  /// A chunk's digest: its text, then the collection and the place of each element.
  private static func digest(_ text: [UInt8], _ pending: [Pending]) -> UInt64 {
    var digest = FNV1a()
    digest.combine(text.span)
    for element in pending {
      digest.combine(element.key.utf8.span)
      digest.combine(word: UInt64(element.index))
    }
    return digest.value
  }

  /// The error that says the file is an envelope around its items (`LedgerError.envelope`),
  /// when it is one: read whole, only once a document's key named no collection.
  private static func envelopeError(_ path: String) -> LedgerError? {
    guard let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size < 256 << 20,
      let data = FileManager.default.contents(atPath: path), case .object(let object)? = try? JSONParser.parse(data),
      object.count > 1, let (key, count) = ChangeBatch.soleArrayOfObjects(in: object)
    else { return nil }
    return .envelope(arrayAt: key, count: count, entity: nil)
  }

  /// `body`, with the stream's errors in the library's terms: a file that cannot be read, or
  /// malformed JSON in it (the file named). Errors of the staging it calls pass as they are.
  private static func reading<R>(_ path: String, _ body: () throws -> R) throws -> R {
    do { return try body() } catch let error as JSONSyntaxError {
      throw LedgerError.syntax(error, source: path)
    } catch let error as JSONFileError {
      throw LedgerError.unreadableFile(error.description, path: path)
    }
  }
}
