import Foundation

/// A JSON file that cannot be read: its path and the system's reason ("No such file or
/// directory", "Is a directory").
public struct JSONFileError: Error, Sendable, Equatable, CustomStringConvertible {
  public var path: String
  public var reason: String

  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }

  public var description: String { "cannot read \(path): \(reason)" }

  /// Throws unless `path` is a file this process can open for reading.
  package static func checkReadable(_ path: String) throws(JSONFileError) {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw JSONFileError(path: path, reason: reason(errno)) }
    defer { close(descriptor) }
    var status = stat()
    if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
      throw JSONFileError(path: path, reason: reason(EISDIR))
    }
  }

  /// The reason for `errno` value `code`, as `strerror` gives it.
  package static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

  /// A POSIX or Foundation error's reason in words, never `Error Domain=…`; any other error's
  /// own description. The one rule for system errors (the library's `SystemError` uses it).
  package static func reason(of error: any Error) -> String {
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
