public import Foundation

/// A batch as a person names it: its id (`42`; 0 is the empty store), or a time (`2026-01-01`,
/// `2026-01-01T12:00:00Z`, any ISO 8601 form an import reads), which stands for the last batch
/// applied at or before it. The command line's `--as-of`, `diff` and `rewind`, and the API's
/// and the console's `asOf`, `from` and `to` all read it so.
///
/// ```swift
/// let reference = try BatchReference(parsing: "2026-01-01")
/// let batch = try ledger.batchID(reference)
/// ```
public enum BatchReference: Sendable, Hashable, CustomStringConvertible {
  case id(UInt64)
  /// A time, with the text it was read from (what an error names).
  case time(Date, text: String)

  /// `text` read as a batch id or a time; nil when it is neither.
  public init?(_ text: String) {
    if let id = UInt64(text) {
      self = .id(id)
    } else if let date = DateCoding.isoDate(text) {
      self = .time(date, text: text)
    } else {
      return nil
    }
  }

  /// `text` read as a batch id or a time; `LedgerError.invalidArgument` naming `name` (the
  /// option or parameter it came from) when it is neither.
  public init(parsing text: String, name: String = "a batch") throws(LedgerError) {
    guard let reference = Self(text) else {
      throw .invalidArgument("\(name) must be a batch id or an ISO 8601 time, not \"\(text.prefix(80))\"")
    }
    self = reference
  }

  public var description: String {
    switch self {
    case .id(let id): "\(id)"
    case .time(_, let text): text
    }
  }
}

extension Ledger {
  /// The batch `reference` names: an id as it is, a time as the last batch applied at or
  /// before it. A time before every batch is the empty store, 0, where `emptyStoreAllowed` (a
  /// diff from it, a rewind to it), else `LedgerError.batchNotFound`.
  public func batchID(_ reference: BatchReference, emptyStoreAllowed: Bool = false) throws -> UInt64 {
    switch reference {
    case .id(let id): return id
    case .time(let date, let text):
      if let id = try lastBatch(atOrBefore: date) { return id }
      guard emptyStoreAllowed else {
        throw LedgerError(.batchNotFound, "no batch was applied at or before \(text)")
      }
      return 0
    }
  }
}
