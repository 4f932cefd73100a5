/// Malformed JSON: where (line and column, both from 1) and why.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The line of the offending byte, from 1.
  public var line: Int
  /// The column of the offending byte (in bytes), from 1.
  public var column: Int
  /// The byte offset from the start of the input.
  public var offset: Int
  /// What was wrong, such as "expected ':' after an object key".
  public var reason: String

  public var description: String { "malformed JSON at line \(line), column \(column): \(reason)" }
}
