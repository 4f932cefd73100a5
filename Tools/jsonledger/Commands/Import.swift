import ArgumentParser
import Foundation
import JSONLedger
import Synchronization

struct Import: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Apply JSON files (or - for stdin) as one batch.",
    discussion: """
      Without --entity a file is an object whose top-level keys name collections \
      ("bands", "band_members"); with --entity it is an array of objects (or one object) of that entity. \
      Several files are one batch: the pages of a paginated response, imported with --prune, keep \
      every object any page holds.
      """)

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Argument(help: "The JSON files (several are one batch), or - to read standard input.")
  var files: [String]

  /// The one file, when one is given.
  private var file: String { files.first ?? "-" }

  @Option(help: "The entity of the objects in the file.")
  var entity: String?

  @Flag(help: "Delete objects of the entity that none of the files lists.")
  var prune = false

  @Option(help: "ENTITY:KEY of a parent object; limits --prune to its --relationship and links the objects to it.")
  var parent: ParentReference?

  @Option(help: "The parent's to-many relationship that holds the imported objects.")
  var relationship: String?

  @Option(help: "Comma-separated subset of insert,update,delete (default insert,update).")
  var operations: OperationList?

  @Flag(help: "A reference to a key that exists nowhere is an error instead of creating a stub.")
  var strict = false

  @Option(
    help: ArgumentHelp(
      "Where the items are in an envelope: a JSON path such as results (of {count, next, results}).",
      valueName: "path"))
  var itemsAt: String?

  @Option(help: "Why this batch was applied.")
  var message: String?

  @Option(help: "Who applied it.")
  var author: String?

  @Option(help: "A key that makes re-applying the same batch a no-op.")
  var idempotencyKey: String?

  @Option(
    help:
      "Stream the file and apply it in batches of at most this many objects (bounded memory; each batch all or nothing)."
  )
  var chunkSize: Int?

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func validate() throws {
    if files.isEmpty { throw ValidationError("give a JSON file, or - to read standard input") }
    if files.count > 1, chunkSize != nil { throw ValidationError("--chunk-size takes one file") }
    if files.count > 1, files.filter({ $0 == "-" }).count > 0 {
      throw ValidationError("standard input (-) is imported alone")
    }
    if (parent == nil) != (relationship == nil) {
      throw ValidationError("--parent and --relationship go together")
    }
    if parent != nil, entity == nil { throw ValidationError("--parent needs --entity") }
    if itemsAt != nil, chunkSize != nil {
      throw ValidationError("--items-at reads each file whole: it does not go with --chunk-size")
    }
  }

  func stagingOptions() throws -> StagingOptions {
    var scope: ParentScope?
    if let parent, let relationship {
      scope = ParentScope(entity: parent.entity, key: .string(parent.key), relationship: relationship)
    }
    return StagingOptions(
      operations: operations?.set ?? .upsert, prune: prune, parent: scope, strict: strict, itemsAt: itemsAt)
  }

  func run() async throws {
    let ledger = try storeOptions.open(durability: writeOptions.durability)
    let isReplica = try ReplicaRoute.isReplica(ledger)
    if let chunkSize {
      try await importInChunks(ledger, chunkSize: chunkSize, throughRemote: isReplica)
      return
    }
    if files.count > 1 {
      try await importAsOneBatch(ledger)
      return
    }
    if file != "-" {
      // Streamed: parsed, mapped and resolved part by part, one batch.
      let line = ProgressLine(shown: !json && !isReplica)
      let summary: BatchSummary
      do {
        if isReplica {
          let (file, entity, options, message, author, key) = (
            file, entity, try stagingOptions(), message, author, idempotencyKey
          )
          summary = try await ReplicaRoute.write(ledger, "an import") { ledger in
            try ledger.importFile(
              at: file, entity: entity, options: options, message: message, author: author,
              source: file, idempotencyKey: key)
          }
        } else {
          summary = try await ledger.importFile(
            at: file, entity: entity, options: try stagingOptions(), message: message,
            author: author, source: file, idempotencyKey: idempotencyKey, progress: { line.show($0) })
        }
      } catch {
        line.finish()
        throw error
      }
      line.finish()
      report(summary)
      return
    }
    let staged = try stagedFromStandardInput(ledger, options: try stagingOptions())
    let (message, author, key) = (message, author, idempotencyKey)
    let summary = try await ReplicaRoute.write(ledger, "an import") { ledger in
      try ledger.applySynchronously(staged, message: message, author: author, source: "stdin", idempotencyKey: key)
    }
    report(summary)
  }

  /// Standard input, read whole and staged as text, as a file is: objects the store holds as
  /// they are here are skipped unparsed, and the rest is mapped element by element.
  private func stagedFromStandardInput(_ ledger: Ledger, options: StagingOptions) throws -> ChangeBatch {
    let bytes = FileHandle.standardInput.readDataToEndOfFile()
    var batch = ledger.makeBatch()
    // A syntax error names the input, as one in a file names the file.
    if let entity {
      try batch.stage(json: bytes, as: entity, options: options, source: "stdin")
    } else {
      try batch.stageDocument(json: bytes, options: options, source: "stdin")
    }
    return batch
  }

  /// Several files, read whole, staged into one batch in the order given.
  private func importAsOneBatch(_ ledger: Ledger) async throws {
    var batch = ledger.makeBatch()
    let options = try stagingOptions()
    for file in files {
      try batch.stage(fileAt: file, as: entity, options: options)
    }
    let staged = batch
    let (message, author, source, key) = (message, author, files.joined(separator: ", "), idempotencyKey)
    let summary = try await ReplicaRoute.write(ledger, "an import") { ledger in
      try ledger.applySynchronously(staged, message: message, author: author, source: source, idempotencyKey: key)
    }
    report(summary)
  }

  private func report(_ summary: BatchSummary) {
    if json {
      Output.json(BatchSummary.jsonValue(of: [summary]))
    } else if summary.wasAlreadyApplied {
      Output.line("already applied as batch \(summary.batchID) (idempotency key \(idempotencyKey ?? ""))")
    } else if !summary.wroteRecord {
      Output.line(
        "nothing changed: \(Describe.counts(summary)); no batch written (the head is still \(summary.batchID))")
      Self.reportKept(summary.placeholdersKept)
      if !summary.ignoredKeys.isEmpty { Output.line("ignored keys: \(summary.ignoredKeys.joined(separator: ", "))") }
    } else {
      Output.line("batch \(summary.batchID): \(Describe.counts(summary))")
      for entity in summary.emptiedByPrune {
        Output.line("deleted all \(entity) objects: the payload named none of them (--prune)")
      }
      Self.reportKept(summary.placeholdersKept)
      if !summary.ignoredKeys.isEmpty { Output.line("ignored keys: \(summary.ignoredKeys.joined(separator: ", "))") }
    }
  }

  /// The placeholders a prune kept, and why.
  static func reportKept(_ count: Int) {
    guard count > 0 else { return }
    Output.line(
      "kept \(count) placeholder\(count == 1 ? "" : "s") the payload does not hold: other objects still refer to "
        + "\(count == 1 ? "it" : "them") (--prune deletes only what an import delivered)")
  }

  private func importLocally(_ ledger: Ledger, at path: String, chunkSize: Int, line: ProgressLine) throws
    -> [BatchSummary]
  {
    // An interrupt or a termination stops the import between two parts, each whole, and the
    // error names the parts applied (a signal's default would leave that unsaid).
    let stop = StopSignals()
    defer { stop.restore() }
    return try ledger.importFile(
      at: path, entity: entity, chunkSize: chunkSize, options: try stagingOptions(), message: message,
      author: author, idempotencyKey: idempotencyKey, progress: { line.show($0) },
      stopRequested: { stop.isRequested })
  }

  /// A batch per part; a replica's parts each go through its remote.
  func importInChunks(_ ledger: Ledger, chunkSize: Int, throughRemote: Bool) async throws {
    let line = ProgressLine(shown: !json && !throughRemote, writesAtEnd: false)
    let summaries: [BatchSummary]
    let path = file == "-" ? "/dev/stdin" : file
    do {
      if throughRemote {
        summaries = try await ReplicaRoute.replica(of: ledger, store: storeOptions.store).importFile(
          at: path, entity: entity, chunkSize: chunkSize, options: try stagingOptions(), message: message,
          author: author, idempotencyKey: idempotencyKey)
      } else {
        summaries = try importLocally(ledger, at: path, chunkSize: chunkSize, line: line)
      }
    } catch {
      line.finish()
      throw error
    }
    line.finish()
    let skipped = summaries.filter(\.wasAlreadyApplied).count
    let total = summaries.filter { !$0.wasAlreadyApplied }.reduce(
      into: (created: 0, updated: 0, deleted: 0, unchanged: 0)
    ) {
      $0.created += $1.created
      $0.updated += $1.updated
      $0.deleted += $1.deleted
      $0.unchanged += $1.unchanged
    }
    if json {
      Output.json(BatchSummary.jsonValue(of: summaries))
    } else {
      let ids = summaries.filter(\.wroteRecord).map(\.batchID)
      let range = ids.isEmpty ? "no batches" : ids.count == 1 ? "batch \(ids[0])" : "batches \(ids.first!)–\(ids.last!)"
      Output.line(
        "\(range): \(total.created) created, \(total.updated) updated, \(total.deleted) deleted, \(total.unchanged) unchanged"
      )
      let ignored = Set(summaries.flatMap(\.ignoredKeys)).sorted()
      if !ignored.isEmpty { Output.line("ignored keys: \(ignored.joined(separator: ", "))") }
      if skipped > 0 {
        Output.line(
          "\(skipped) part\(skipped == 1 ? " was" : "s were") already applied (idempotency key \(idempotencyKey ?? ""))"
        )
      }
    }
  }
}

/// `--parent ENTITY:KEY`.
struct ParentReference: ExpressibleByArgument {
  var entity: String
  var key: String

  init?(argument: String) {
    guard let colon = argument.firstIndex(of: ":"), colon != argument.startIndex else { return nil }
    entity = String(argument[..<colon])
    key = String(argument[argument.index(after: colon)...])
  }

  static var defaultValueDescription: String { "ENTITY:KEY" }
}

/// `--operations insert,update,delete` (any subset).
struct OperationList: ExpressibleByArgument {
  var set: Operations

  init?(argument: String) {
    var set: Operations = []
    for name in argument.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
      switch name {
      case "insert": set.insert(.insert)
      case "update": set.insert(.update)
      case "delete": set.insert(.delete)
      default: return nil
      }
    }
    guard !set.isEmpty else { return nil }
    self.set = set
  }

  static var allValueStrings: [String] { ["insert", "update", "delete"] }
}

/// SIGINT and SIGTERM turned into a request to stop, asked for between the parts of an
/// import; the signals' default actions come back with `restore()`.
final class StopSignals {
  /// Set from the signal sources' queue, read on the import's thread.
  private final class Flag: Sendable {
    let requested = Mutex(false)
  }
  private let flag = Flag()
  private var sources: [any DispatchSourceSignal] = []

  init() {
    let flag = flag
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { flag.requested.withLock { $0 = true } }
      source.resume()
      sources.append(source)
    }
  }

  var isRequested: Bool { flag.requested.withLock { $0 } }

  func restore() {
    for source in sources { source.cancel() }
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
  }
}
