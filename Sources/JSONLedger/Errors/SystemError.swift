import Foundation

/// Errors of the system and of Foundation told in plain words: the reason `strerror` gives,
/// never `Error Domain=NSCocoaErrorDomain Code=…` (the rule is `JSONFileError`'s, in the JSON
/// target, which reads files too).
enum SystemError {
  /// The reason for `errno` value `code` ("No such file or directory", "Permission denied").
  static func reason(_ code: Int32) -> String { JSONFileError.reason(code) }

  /// Throws, naming `path` and the system's reason, unless `path` is a file this process can
  /// open for reading ("No such file or directory", "Permission denied", "Is a directory").
  static func checkReadableFile(_ path: String) throws(LedgerError) {
    do { try JSONFileError.checkReadable(path) } catch { throw .unreadableFile(error.description, path: path) }
  }

  /// `error` in a sentence: a `LedgerError`'s description, a POSIX or Foundation error's
  /// underlying reason, or the error's own description.
  static func describe(_ error: any Error) -> String {
    if let error = error as? LedgerError { return error.description }
    return JSONFileError.reason(of: error)
  }
}
