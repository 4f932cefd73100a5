import ArgumentParser
import JSONLedger

struct Verify: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract: "Check every page, every record's checksum, and the projections against the log.",
    discussion: """
      By default the projections are read once and checked against the digest the store keeps of \
      them. With --full, the whole log is replayed into scratch projections and compared with the \
      live ones byte for byte. A store that keeps no digest (one written by a version before 0.14) \
      is replayed; with --keep-digest it keeps the digest the replay proves, and later verifies \
      read it once.
      """)

  @OptionGroup var storeOptions: StoreOptions

  @Flag(help: "Replay the whole log and compare every projection entry, instead of checking the kept digest.")
  var full = false

  @Flag(help: "Open the store as a writer, so that a replay keeps the digest it proves (read-only otherwise).")
  var keepDigest = false

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    // Read-only unless asked, like every command that reads.
    let ledger = try keepDigest ? storeOptions.open() : storeOptions.openForReading()
    let report = try await ledger.verify(full ? .fullReplay : .keptDigest)
    if json {
      Output.json([
        "ok": true, "batches": .number(JSONNumber(report.batches)), "objects": .number(JSONNumber(report.objects)),
        "entriesCompared": .number(JSONNumber(report.entriesCompared)), "mode": .string(report.mode.rawValue),
      ])
    } else if report.mode == .keptDigest {
      Output.line(
        "ok: \(report.batches) batches checked, \(report.objects) objects, \(report.entriesCompared) projection entries match their kept digest"
      )
    } else {
      Output.line(
        "ok: \(report.batches) batches replayed, \(report.objects) objects, \(report.entriesCompared) projection entries identical"
      )
      if !full, !keepDigest {
        Output.line(
          "the store keeps no digest of its projections yet: `jsonledger verify --keep-digest \(storeOptions.store)` keeps the one a replay proves"
        )
      }
    }
  }
}
