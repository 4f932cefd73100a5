import JSONLedger

/// What to type next, for the errors whose way on is a command of this tool: the library
/// says what happened in its own terms; the tool adds its commands and flags here, keyed by
/// the error, so that both stay true as either changes.
enum Hints {
  static func hint(for error: LedgerError) -> String? {
    let path = error.path ?? "STORE"
    return switch error.code {
    case .storeNotFound: "create one with `jsonledger init \(path) --model MODEL`"
    case .upgradeNeeded: "run `jsonledger upgrade \(path)`"
    case .upgradeInterrupted: "run `jsonledger upgrade \(path)` again to finish it"
    case .batchArchived: "`jsonledger restore-log NEWSTORE ARCHIVE` replays the archive compact wrote"
    case .damagedFile: "restore the store from a backup (`jsonledger backup` writes them)"
    case .modelDiffers: "migrate the store with `jsonledger migrate \(path) --model MODEL`"
    case .importStopped: "run the same import again with the same --idempotency-key to apply the rest"
    case .storeChanged: "run the same command again"
    case .envelope: error.known.first.map { "give --items-at \($0)" }
    case .replicaWrite:
      "import, revert and rewind write through the remote; migrate and compact do not run on a replica yet"
    default: nil
    }
  }

  /// The hint for a refused revert.
  static let forceRevert = "use --force to revert anyway, or --keep-later to revert only what no later batch changed"

  /// The hint for a compact without an archive.
  static let discard = "give --archive FILE, or --discard to drop the batches"
}
