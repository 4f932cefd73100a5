import Foundation
import JSONLedger

/// Writing to stdout and stderr.
enum Output {
  static func error(_ message: String) {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
  }

  static func note(_ message: String) {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
  }

  /// Pretty, key-sorted JSON on stdout.
  static func json(_ value: JSONValue) {
    print(JSONWriter(options: [.prettyPrinted, .sortedKeys]).string(from: value))
  }

  static func time(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: date)
  }
}

/// A failure with its own exit code (a refused revert exits 3).
struct CommandFailure: Error {
  var message: String
  var exitCode: Int32 = 1
}
