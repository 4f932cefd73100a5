/// What went wrong with a replica's remote log: a ``Code`` to branch on, a message in the
/// library's words, and the batch and checksums where there are some.
///
/// ```swift
/// do {
///   try await replica.sync()
/// } catch RemoteError.Code.diverged {
///   // this store's history is not the remote's: clone it again
/// }
/// ```
public struct RemoteError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong, as a value that stays the same when the message's words change.
  public var code: Code
  /// What went wrong and where, in the library's words.
  public var message: String
  /// The batch the error concerns (``Code/diverged``, ``Code/corruptRecord``).
  public var batchID: UInt64?
  /// The replica's checksum of ``batchID``'s record, in hexadecimal (``Code/diverged``).
  public var localChecksum: String?
  /// The remote's checksum of ``batchID``'s record, in hexadecimal, or what it holds instead
  /// (``Code/diverged``).
  public var remoteChecksum: String?

  /// An error with a code and a message; set the fields that apply.
  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { message }

  /// What went wrong, as a value to branch on (its raw value is stable across releases).
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// `catch RemoteError.Code.diverged` matches a remote error with that code.
    public static func ~= (code: Code, error: any Error) -> Bool {
      (error as? RemoteError)?.code == code
    }

    /// The location does not read (a URL, a ledger name).
    public static let invalidLocation = Self(rawValue: "invalidLocation")
    /// The remote could not be reached or dropped the connection.
    public static let unavailable = Self(rawValue: "unavailable")
    /// A call did not answer in time; it was abandoned.
    public static let timedOut = Self(rawValue: "timedOut")
    /// The remote holds no JSONLedger log, or one in a newer form.
    public static let schema = Self(rawValue: "schema")
    /// The remote has no ledger of that name.
    public static let ledgerNotFound = Self(rawValue: "ledgerNotFound")
    /// A ledger of that name exists already (publishing twice).
    public static let ledgerExists = Self(rawValue: "ledgerExists")
    /// The replica's history differs from the remote's at a batch: nothing was applied.
    public static let diverged = Self(rawValue: "diverged")
    /// A record from the remote is not what the remote says of it (its checksum, its batch).
    public static let corruptRecord = Self(rawValue: "corruptRecord")
    /// What was asked cannot be done with this store or this remote (the message says why).
    public static let unsupported = Self(rawValue: "unsupported")
    /// The remote refused a call.
    public static let refused = Self(rawValue: "refused")
  }
}

extension RemoteError {
  /// The location does not read.
  public static func invalidLocation(_ reason: String) -> RemoteError {
    RemoteError(.invalidLocation, "remote: \(reason)")
  }

  /// The remote could not be reached or dropped the connection.
  public static func unavailable(_ reason: String) -> RemoteError {
    RemoteError(.unavailable, "the remote log is unavailable: \(reason)")
  }

  /// `what` did not answer within `after`.
  public static func timedOut(_ what: String, after: Duration) -> RemoteError {
    RemoteError(.timedOut, "the remote log did not answer \(what) within \(after.formattedForMessages)")
  }

  /// The remote holds no JSONLedger log, or one in a newer form.
  public static func schema(_ reason: String) -> RemoteError {
    RemoteError(.schema, "the remote database: \(reason)")
  }

  /// The remote has no ledger `name`.
  public static func ledgerNotFound(_ name: String) -> RemoteError {
    RemoteError(.ledgerNotFound, "the remote database has no ledger \"\(name)\"")
  }

  /// The remote has a ledger `name` already.
  public static func ledgerExists(_ name: String) -> RemoteError {
    RemoteError(.ledgerExists, "the remote database already has a ledger \"\(name)\"")
  }

  /// The replica's record of `batch` has checksum `local`, the remote's `remote`.
  public static func diverged(batch: UInt64, local: String, remote: String) -> RemoteError {
    var error = RemoteError(
      .diverged,
      "the replica has diverged from the remote log at batch \(batch): the replica's record has checksum \(local), the remote's \(remote); nothing was applied"
    )
    error.batchID = batch
    error.localChecksum = local
    error.remoteChecksum = remote
    return error
  }

  /// The remote's record of `batch` is not what the remote says of it.
  public static func corruptRecord(batch: UInt64, reason: String) -> RemoteError {
    var error = RemoteError(.corruptRecord, "the remote's record of batch \(batch) is corrupt: \(reason)")
    error.batchID = batch
    return error
  }

  /// What was asked cannot be done; `reason` says why, whole.
  public static func unsupported(_ reason: String) -> RemoteError {
    RemoteError(.unsupported, reason)
  }

  /// The remote refused a call.
  public static func refused(_ reason: String) -> RemoteError {
    RemoteError(.refused, "the remote log refused: \(reason)")
  }
}

extension Duration {
  /// Whole seconds as "N s", anything else in milliseconds.
  fileprivate var formattedForMessages: String {
    let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
  }
}
