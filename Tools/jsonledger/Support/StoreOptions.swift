public import ArgumentParser
import Foundation
import JSONLedger

/// The options every command that opens a store shares.
struct StoreOptions: ParsableArguments {
  @Argument(help: "The store directory.")
  var store: String

  @Flag(
    help:
      "Open a model that names value transformers this tool cannot register, passing their values through unchanged.")
  var passThroughTransformers = false

  /// Opens the store for a command that writes.
  func open(durability: Ledger.Durability = .full) throws -> Ledger {
    try open(durability: durability, readOnly: false)
  }

  /// Opens the store for a command that only reads: read-only, so that it never writes, and
  /// reads a store on a read-only file system (a snapshot, a read-only mount).
  func openForReading() throws -> Ledger {
    try open(durability: .full, readOnly: true)
  }

  private func open(durability: Ledger.Durability, readOnly: Bool) throws -> Ledger {
    var options = Ledger.Options()
    options.durability = durability
    options.readOnly = readOnly
    options.transformers.passesUnknownThrough = passThroughTransformers
    // A damaged data file is an error, not a crash in LMDB, for the cost of reading it once.
    let size = (try? FileManager.default.attributesOfItem(atPath: store + "/data.mdb")[.size] as? Int) ?? 0
    options.checksPagesOnOpen = size <= 256 << 20
    return try Ledger.open(at: store, options: options)
  }
}

/// `--durability`, offered by the commands that write.
struct WriteOptions: ParsableArguments {
  @Option(help: "Commit durability: full, noMetaSync or noSync (see the README's Reliability section).")
  var durability: Ledger.Durability = .full
}

extension Ledger.Durability: ExpressibleByArgument {}
