import Foundation
import JSONLedger
import Synchronization

/// Writing to stdout and stderr. Text goes out with control characters escaped: values from
/// payloads, messages and authors never reach a terminal raw.
enum Output {
  static func error(_ message: String) {
    FileHandle.standardError.write(Data("error: \(escaped(message))\n".utf8))
  }

  static func note(_ message: String) {
    FileHandle.standardError.write(Data("\(escaped(message))\n".utf8))
  }

  /// One line (or lines) of text on stdout.
  static func line(_ text: String) {
    write(escaped(text) + "\n")
  }

  /// The first failed write to stdout, reported by `finishStandardOutput`.
  private static let writeFailure = Mutex<String?>(nil)

  /// Writes straight to the file descriptor (no buffer to lose), remembering a failure.
  private static func write(_ text: String) { write(bytes: Array(text.utf8)) }

  private static func write(bytes: [UInt8]) {
    do { try FileHandle.standardOutput.write(contentsOf: bytes) } catch {
      let reason = (error as NSError).localizedFailureReason ?? String(describing: error)
      writeFailure.withLock { failure in if failure == nil { failure = reason } }
    }
  }

  /// `text` with every control character but newline and tab written as `\u{1B}`: C0
  /// controls, DEL and the C1 range.
  static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isEscaped) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
      if isEscaped(scalar) {
        result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  private static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    return (value < 0x20 && value != 0x0A && value != 0x09) || (0x7F...0x9F).contains(value)
  }

  /// Flushes stdout; a write that failed (a full disk, a closed pipe) is an error, so that
  /// output that was not written never looks like success.
  static func finishStandardOutput() throws {
    if let reason = writeFailure.withLock({ $0 }) {
      throw CommandFailure(message: "cannot write the output to standard output: \(reason)")
    }
  }

  /// How JSON is written on stdout: pretty and key-sorted. The writer escapes C0 controls as
  /// JSON requires, and DEL and the C1 range, which JSON allows raw, as `\u007F`-style
  /// escapes too, so the output stays valid JSON and safe on a terminal.
  static let jsonWriter = JSONWriter(options: [.prettyPrinted, .sortedKeys, .escapesAllControls])

  /// Pretty, key-sorted JSON on stdout (`jsonWriter`).
  static func json(_ value: JSONValue) {
    write(bytes: jsonWriter.bytes(from: value) + [0x0A])
  }

  /// A piece of JSON text that `jsonWriter` wrote (a streamed export).
  static func jsonText(_ bytes: [UInt8]) { write(bytes: bytes) }

  /// Compact, key-sorted JSON on one line (a stream of events, as `follow --json` prints),
  /// escaped as `jsonWriter` escapes.
  static func jsonLine(_ value: JSONValue) {
    write(bytes: JSONWriter(options: [.sortedKeys, .escapesAllControls]).bytes(from: value) + [0x0A])
  }

  static func time(_ date: Date) -> String { Ledger.timeText(date) }
}

/// A failure with its own exit code (a refused revert exits 3).
struct CommandFailure: Error {
  var message: String
  var exitCode: Int32 = 1
}
