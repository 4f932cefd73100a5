import ArgumentParser
import Foundation
import JSONLedger

/// A batch as the command line names it: its id (`42`), or a time (`2026-01-01`,
/// `2026-01-01T12:00:00Z`, any ISO 8601 form an import reads), which stands for the last
/// batch applied at or before it.
enum BatchReference: ExpressibleByArgument, CustomStringConvertible {
  case id(UInt64)
  case time(Date, text: String)

  init?(argument: String) {
    if let id = UInt64(argument) {
      self = .id(id)
    } else if let date = Ledger.time(fromISO8601: argument) {
      self = .time(date, text: argument)
    } else {
      return nil
    }
  }

  var description: String {
    switch self {
    case .id(let id): "\(id)"
    case .time(_, let text): text
    }
  }

  /// The batch id. A time with no batch at or before it is the empty store (0) where one
  /// is taken (`diff`, `rewind`), else an error.
  func batchID(in ledger: Ledger, emptyStoreAllowed: Bool = false) throws -> UInt64 {
    switch self {
    case .id(let id): return id
    case .time(let date, let text):
      if let id = try ledger.lastBatch(atOrBefore: date) { return id }
      guard emptyStoreAllowed else { throw CommandFailure(message: "no batch was applied at or before \(text)") }
      return 0
    }
  }
}
