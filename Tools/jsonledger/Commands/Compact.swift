import ArgumentParser
import Foundation
import JSONLedger
import JSONLedgerPostgres

struct Compact: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "compact",
    abstract: "Move the oldest batches to an archive file and start the log at a checkpoint.",
    discussion: """
      The batches up to the cut (--keep-batches or --before) are written to the archive (which \
      restore-log replays into a new store) and replaced by one checkpoint record holding the \
      whole state after the cut's batch, the log's new first batch. Batch ids go on; as-of reads \
      before the first batch are refused. Nothing is dropped \
      without an archive unless --discard is given. On a replica the checkpoint is also \
      published to the remote as a snapshot, from which new replicas start (clone); the remote's \
      log keeps every batch.
      """)

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var writeOptions: WriteOptions

  @Option(help: "Keep this many of the newest batches.")
  var keepBatches: Int?

  @Option(
    help:
      "Keep the batches applied at or after this time (ISO 8601 as imports read it: 2026-01-01, 2026-01-01T00:00:00Z, fractions, offsets)."
  )
  var before: String?

  @Option(help: "A new file for the batches moved out of the log.")
  var archive: String?

  @Flag(help: "Drop the batches without an archive.")
  var discard = false

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func validate() throws {
    _ = try before.map(Self.cutoff)
  }

  /// The time `--before` gives: the whole argument, strictly (`2026-01-01T00:00:00Zjunk` is
  /// no time).
  static func cutoff(_ text: String) throws -> Date {
    guard let date = Ledger.time(fromISO8601: text) else {
      throw ValidationError(
        "--before takes an ISO 8601 time such as 2026-01-01 or 2026-01-01T00:00:00Z, not \"\(text)\"")
    }
    return date
  }

  func run() async throws {
    let date = try before.map(Self.cutoff)
    guard archive != nil || discard else {
      throw CommandFailure(message: "compact needs an archive file for the batches it moves out: \(Hints.discard)")
    }
    let ledger = try storeOptions.open(durability: writeOptions.durability)
    let replica = try Replica.ifReplica(ledger)
    let report =
      if let replica {
        try await replica.compact(keepingBatches: keepBatches, before: date, archive: archive, discarding: discard)
      } else {
        try ledger.compact(keepingBatches: keepBatches, before: date, archive: archive, discarding: discard)
      }
    if json {
      Output.json([
        "firstBatch": .number(JSONNumber(Int(report.firstBatch))),
        // The same number, by the name of earlier versions: kept for scripts that read it.
        "horizon": .number(JSONNumber(Int(report.firstBatch))),
        "archivedBatches": .number(JSONNumber(report.archivedBatches)),
        "archive": report.archivePath.map { .string($0) } ?? .null, "objects": .number(JSONNumber(report.objects)),
        "snapshot": replica != nil && report.firstBatch > 1 ? .number(JSONNumber(Int(report.firstBatch))) : .null,
      ])
    } else if report.archivedBatches == 0 {
      Output.line("nothing to compact: the log starts at batch \(report.firstBatch)")
    } else {
      Output.line(
        "moved \(report.archivedBatches) batches \(report.archivePath.map { "to \($0)" } ?? "out (discarded)"); the log starts at batch \(report.firstBatch), a checkpoint of \(report.objects) objects"
      )
    }
    if replica != nil, report.firstBatch > 1, !json {
      Output.line("the checkpoint at batch \(report.firstBatch) is published as the remote's snapshot")
    }
  }
}
