import Foundation

/// Errors of the system and of Foundation told in plain words: the reason `strerror` gives,
/// never `Error Domain=NSCocoaErrorDomain Code=…`.
enum SystemError {
  /// The reason for `errno` value `code` ("No such file or directory", "Permission denied").
  static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

  /// Throws, naming `path` and the system's reason, unless `path` is a file this process can
  /// open for reading ("No such file or directory", "Permission denied", "Is a directory").
  static func checkReadableFile(_ path: String) throws(LedgerError) {
    do { try JSONFileError.checkReadable(path) } catch { throw .invalidArgument(error.description) }
  }

  /// `error` in a sentence: a `LedgerError`'s description, a POSIX or Foundation error's
  /// underlying reason, or the error's own description.
  static func describe(_ error: any Error) -> String {
    if let error = error as? LedgerError { return error.description }
    if let error = error as? POSIXError { return reason(error.code.rawValue) }
    let isFoundation = error is CocoaError || type(of: error) is NSError.Type
    guard isFoundation else { return String(describing: error) }
    let nsError = error as NSError
    if nsError.domain == NSPOSIXErrorDomain { return reason(Int32(nsError.code)) }
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
      return reason(Int32(underlying.code))
    }
    switch nsError.code {
    case NSFileWriteOutOfSpaceError: return reason(ENOSPC)
    case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return reason(ENOENT)
    case NSFileWriteNoPermissionError, NSFileReadNoPermissionError: return reason(EACCES)
    default: return nsError.localizedFailureReason ?? "an input or output error (code \(nsError.code))"
    }
  }
}
