import Foundation
import JSONLedgerSupport

extension Ledger {
  /// Imports a JSON file of any size by streaming it: elements are read one at a time and
  /// applied in batches of at most `chunkSize` objects, so memory stays bounded.
  ///
  /// The file is a top-level array of objects of `entity`, or (with `entity` nil) an object
  /// whose keys name collections. Each chunk is its own batch, all or nothing; with an
  /// `idempotencyKey`, chunk *k* carries `key#k@D`, D a digest of the chunk's text, so that
  /// running the same import again after an interruption skips the chunks already applied
  /// and finishes the rest, and a chunk that differs (a corrected file, another chunk size) is
  /// applied, never taken for one that was.
  ///
  /// - Parameters:
  ///   - path: the JSON file.
  ///   - entity: the entity of a top-level array's objects; nil for an object of collections.
  ///   - chunkSize: the most top-level objects in one batch.
  ///   - options: how the objects are staged (operations; no pruning or parent scope).
  ///   - message: why, kept in each record (with the part number).
  ///   - author: who, kept in each record.
  ///   - idempotencyKey: a key for the import; part *k* carries `key#k@D` (D: its digest).
  ///   - progress: called after each chunk with what has been read and applied so far.
  ///   - stopRequested: asked before each chunk is applied; true stops the import there
  ///     (`LedgerError.Code.importStopped`, naming the parts applied; a signal handler sets it).
  public func importFile(
    at path: String, entity: String? = nil, chunkSize: Int, options: StagingOptions = StagingOptions(),
    message: String? = nil, author: String? = nil, idempotencyKey: String? = nil,
    progress: ((ImportProgress) -> Void)? = nil, stopRequested: (() -> Bool)? = nil
  ) throws -> [BatchSummary] {
    try importFile(
      at: path, entity: entity, chunkSize: chunkSize, options: options, message: message, author: author,
      idempotencyKey: idempotencyKey, progress: progress, stopRequested: stopRequested
    ) { batch, part in
      try applySynchronously(
        batch, message: part.message, author: part.author, source: part.source, idempotencyKey: part.idempotencyKey)
    }
  }

  /// `importFile(at:entity:chunkSize:…)` with each part applied by `apply`, which writes it
  /// as one batch and returns its summary: a replica's parts go through its remote.
  @_spi(Replication)
  public func importFile(
    at path: String, entity: String?, chunkSize: Int, options: StagingOptions, message: String?, author: String?,
    idempotencyKey: String?, progress: ((ImportProgress) -> Void)?, stopRequested: (() -> Bool)? = nil,
    applying apply: (ChangeBatch, ImportPart) throws -> BatchSummary
  ) throws -> [BatchSummary] {
    guard chunkSize > 0 else { throw LedgerError.invalidArgument("the chunk size must be at least 1") }
    // Each part's key is made from it (`key#k`): the key itself is checked as the engine would.
    try Self.check(idempotencyKey: idempotencyKey)
    guard !options.prunes, options.parent == nil else {
      throw LedgerError.invalidArgument(
        "pruning and parent scopes need the whole payload in one batch: import without a chunk size")
    }
    guard options.itemsAt == nil else {
      throw LedgerError.invalidArgument("a payload in an envelope is read whole: import it without a chunk size")
    }
    let fixed = try entity.map { name throws(LedgerError) in try makeBatch().resolvedEntity(name) }
    let chunks = JSONFileChunks(
      path: path, entity: fixed, chunkSize: chunkSize, options: options,
      makeBatch: {
        self.makeBatch()
      })
    var summaries: [BatchSummary] = []
    var applied = 0
    let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    do {
      try chunks.forEachDigestedChunk { batch, count, bytesRead, digest in
        let part = summaries.count + 1
        if stopRequested?() == true {
          throw LedgerError(.stopRequested, "it was asked to stop before part \(part) (an interrupt or a termination)")
        }
        // The part's number and its text's digest: a re-run skips a part only when it is the
        // very part applied before, never one that only shares its number.
        let key = idempotencyKey.map { "\($0)#\(part)@\(String(digest, radix: 16))" }
        let summary = try apply(
          batch,
          ImportPart(
            number: part, message: message.map { "\($0) (part \(part))" } ?? "part \(part) of \(path)",
            author: author, source: path, idempotencyKey: key))
        summaries.append(summary)
        applied += count
        // Pages of the map read while resolving this chunk would otherwise stay resident.
        try environment.releaseMappedPages()
        progress?(ImportProgress(objects: applied, bytesRead: bytesRead, totalBytes: fileSize))
      }
    } catch {
      let reason = error as? LedgerError ?? .storage(String(describing: error))
      throw LedgerError.importStopped(
        file: path, failedPart: summaries.count + 1, appliedBatches: summaries.map(\.batchID), reason: reason)
    }
    return summaries
  }

  /// `importFile`, off the caller's executor.
  public func importFile(
    at path: String, entity: String? = nil, chunkSize: Int, options: StagingOptions = StagingOptions(),
    message: String? = nil, author: String? = nil, idempotencyKey: String? = nil,
    progress: (@Sendable (ImportProgress) -> Void)? = nil
  ) async throws -> [BatchSummary] {
    // It waits for the writer, and reads its file as it goes: a thread of its own.
    try await runBlocking("JSONLedger.import") {
      try self.importFile(
        at: path, entity: entity, chunkSize: chunkSize, options: options, message: message,
        author: author, idempotencyKey: idempotencyKey, progress: progress.map { report in { report($0) } })
    }
  }
}

extension Ledger {
  /// Imports a JSON file as one batch, all or nothing, reading it as a stream: its elements
  /// are parsed, mapped and resolved part by part inside the batch's one write transaction,
  /// so memory holds what the batch changes, never the whole document or all of it mapped.
  ///
  /// The file is a top-level array of objects of `entity`, or (with `entity` nil) an object
  /// whose keys name collections. Pruning and parent scopes need the whole payload at once:
  /// with them the file is read whole first. A mapping problem stops the import at the part
  /// that has it, naming its JSON path; nothing is written.
  ///
  /// - Parameters:
  ///   - path: the JSON file.
  ///   - entity: the entity of a top-level array's objects (or of one object); nil for an
  ///     object of collections.
  ///   - options: how the objects are staged.
  ///   - message: why, kept in the record.
  ///   - author: who, kept in the record.
  ///   - source: where the data came from (the path when nil).
  ///   - idempotencyKey: a file already applied with this key makes this call a no-op.
  ///   - expectedHead: fail with `LedgerError.headMoved` unless the log head is this batch id.
  ///   - progress: called as the file is read (every 1,000 top-level objects) with what has
  ///     been read so far; not called when the file is read whole.
  public func importFile(
    at path: String, entity: String? = nil, options: StagingOptions = StagingOptions(),
    message: String? = nil, author: String? = nil, source: String? = nil, idempotencyKey: String? = nil,
    expectedHead: UInt64? = nil, progress: ((ImportProgress) -> Void)? = nil
  ) throws -> BatchSummary {
    let metadata = ChangeRecord.Metadata(
      message: message, author: author, source: source ?? path, idempotencyKey: idempotencyKey)
    // One object of `entity` (not an array) is read whole as well: it is a single element.
    try SystemError.checkReadableFile(path)
    guard !options.prunes, options.parent == nil, options.itemsAt == nil, entity == nil || Self.startsWithArray(path)
    else {
      var batch = makeBatch()
      try batch.stage(fileAt: path, as: entity, options: options)
      return try applySynchronously(
        batch, message: message, author: author, source: metadata.source, idempotencyKey: idempotencyKey,
        expectedHead: expectedHead)
    }
    let fixed = try entity.map { name throws(LedgerError) in try makeBatch().resolvedEntity(name) }
    // Parts of the window the resolver creates objects ahead in: the file streamed gives the
    // record of the same text staged whole.
    let chunks = JSONFileChunks(
      path: path, entity: fixed, chunkSize: BatchResolver.aheadWindow, options: options,
      makeBatch: {
        self.makeBatch()
      })
    let fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    return try streamedImport(
      chunks, metadata: metadata, expectedHead: expectedHead, fileSize: fileSize, progress: progress)
  }

  /// Whether the file's first character after any white space is `[`.
  private static func startsWithArray(_ path: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else { return true }
    defer { try? handle.close() }
    while let chunk = try? handle.read(upToCount: 4096), !chunk.isEmpty {
      if let first = chunk.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
        return first == UInt8(ascii: "[")
      }
    }
    return true
  }

  private func streamedImport(
    _ chunks: JSONFileChunks, metadata: ChangeRecord.Metadata, expectedHead: UInt64?, fileSize: Int,
    progress: ((ImportProgress) -> Void)?
  ) throws -> BatchSummary {
    try perform {
      importing(metadata: metadata, expectedHead: expectedHead, estimatedObjects: fileSize / 64, kind: .import) {
        resolver in
        var ignoredKeys: Set<String> = []
        var objects = 0
        try chunks.forEachChunk { part, count, bytesRead in
          try resolver.resolveSteps(of: part)
          ignoredKeys.formUnion(part.ignoredKeys)
          objects += count
          progress?(ImportProgress(objects: objects, bytesRead: bytesRead, totalBytes: fileSize))
        }
        return try resolver.finish(ignoredKeys: ignoredKeys.sorted())
      }
    }
  }

  /// `importFile(at:entity:options:…)` as one batch, off the caller's executor.
  public func importFile(
    at path: String, entity: String? = nil, options: StagingOptions = StagingOptions(),
    message: String? = nil, author: String? = nil, source: String? = nil, idempotencyKey: String? = nil,
    expectedHead: UInt64? = nil, progress: (@Sendable (ImportProgress) -> Void)? = nil
  ) async throws -> BatchSummary {
    // It waits for the writer, and reads its file as it goes: a thread of its own.
    try await runBlocking("JSONLedger.import") {
      try self.importFile(
        at: path, entity: entity, options: options, message: message, author: author, source: source,
        idempotencyKey: idempotencyKey, expectedHead: expectedHead, progress: progress.map { report in { report($0) } })
    }
  }
}

/// How far a streamed import of a file has read.
public struct ImportProgress: Sendable, Equatable {
  /// Top-level objects read, mapped and resolved.
  public var objects: Int
  /// Bytes of the file read.
  public var bytesRead: Int
  /// The file's size in bytes (0 when it has none, as a pipe).
  public var totalBytes: Int

  /// Progress with these counts.
  public init(objects: Int, bytesRead: Int, totalBytes: Int) {
    self.objects = objects
    self.bytesRead = bytesRead
    self.totalBytes = totalBytes
  }

  /// The part of the file read, 0 to 1 (nil when the size is unknown).
  public var fractionRead: Double? { totalBytes > 0 ? min(1, Double(bytesRead) / Double(totalBytes)) : nil }
}

/// One part of a chunked import, with the metadata its batch is applied with.
@_spi(Replication)
public struct ImportPart: Sendable {
  /// 1 for the first part.
  public var number: Int
  public var message: String
  public var author: String?
  public var source: String
  /// `key#number@digest`, when the import has a key (`importFile(at:entity:chunkSize:…)`).
  public var idempotencyKey: String?
}
