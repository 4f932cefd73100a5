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

extension RevertRefused: LocalizedError {
  public var errorDescription: String? { description }
}
