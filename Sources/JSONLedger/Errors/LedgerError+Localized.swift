public import Foundation

// An app that shows `error.localizedDescription` (an alert, a log line) gets the library's
// sentence, not "The operation could not be completed. (JSONLedger.LedgerError error 5.)".

extension LedgerError: LocalizedError {
  public var errorDescription: String? { description }
}

extension ModelError: LocalizedError {
  public var errorDescription: String? { description }
}

extension MappingError: LocalizedError {
  public var errorDescription: String? { description }
}

extension JSONSyntaxError: LocalizedError {
  public var errorDescription: String? { description }
}

/// A refused revert is a ``LedgerError`` with code ``LedgerError/Code/revertConflicts`` or
/// ``LedgerError/Code/alreadyReverted``.
@available(*, deprecated, renamed: "LedgerError", message: "a refused revert is a LedgerError with its conflicts")
public typealias RevertRefused = LedgerError
