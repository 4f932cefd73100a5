import JSONLedger

/// What went wrong with a replica's remote log, naming the batch and the checksums where there
/// are some.
public enum RemoteError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The location does not read (a URL, a ledger name).
  case invalidLocation(String)
  /// The server could not be reached or dropped the connection.
  case unavailable(String)
  /// A call did not answer in time; it was abandoned.
  case timedOut(String, after: Duration)
  /// The database has no JSONLedger tables, or a newer version of them.
  case schema(String)
  /// The database has no ledger of that name.
  case ledgerNotFound(String)
  /// A ledger of that name exists already (publishing twice).
  case ledgerExists(String)
  /// The replica's history differs from the remote's at `batch`: nothing was applied.
  case diverged(batch: UInt64, local: String, remote: String)
  /// A record from the remote is not what its row says (its checksum, its batch).
  case corruptRecord(batch: UInt64, reason: String)
  /// The remote's next record needs what this replica cannot do yet (a model version it does
  /// not have, a log that starts after batch 1).
  case unsupported(String)
  /// The server refused a statement.
  case refused(String)

  public var description: String {
    switch self {
    case .invalidLocation(let reason): "remote: \(reason)"
    case .unavailable(let reason): "the remote log is unavailable: \(reason)"
    case .timedOut(let what, let after): "the remote log did not answer \(what) within \(after.formatted())"
    case .schema(let reason): "the remote database: \(reason)"
    case .ledgerNotFound(let name): "the remote database has no ledger \"\(name)\""
    case .ledgerExists(let name): "the remote database already has a ledger \"\(name)\""
    case .diverged(let batch, let local, let remote):
      "the replica has diverged from the remote log at batch \(batch): the replica's record has checksum \(local), the remote's \(remote); nothing was applied"
    case .corruptRecord(let batch, let reason): "the remote's record of batch \(batch) is corrupt: \(reason)"
    case .unsupported(let reason): reason
    case .refused(let reason): "the remote log refused: \(reason)"
    }
  }
}

extension Duration {
  fileprivate func formatted() -> String {
    let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
  }
}
