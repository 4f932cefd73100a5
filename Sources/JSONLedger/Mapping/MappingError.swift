/// A payload that cannot be mapped: every bad object found (up to `MappingError.limit`), each
/// with its entity, JSON path, value and reason. Nothing was written.
///
/// ```
/// 2 problems in the batch:
///   Band at bands[3].formed: "20x" is not a whole number (value "20x")
///   Album at albums[0]: the identity "name" is missing
/// ```
public struct MappingError: Error, Sendable, Equatable, CustomStringConvertible {
  /// How many problems are collected before mapping stops.
  public static let limit = 100

  /// One problem.
  public struct Problem: Sendable, Equatable, CustomStringConvertible {
    /// The entity being mapped.
    public var entity: String
    /// Where in the JSON: `bands[3].formed`.
    public var path: String
    /// The offending value as JSON text, when there is one.
    public var value: String?
    /// What is wrong.
    public var reason: String

    /// A problem with its place and reason.
    public init(entity: String, path: String, value: String? = nil, reason: String) {
      self.entity = entity
      self.path = path
      self.value = value
      self.reason = reason
    }

    public var description: String {
      var text = "\(entity) at \(path.isEmpty ? "(top level)" : path): \(reason)"
      if let value { text += " (value \(value.count > 80 ? String(value.prefix(77)) + "..." : value))" }
      return text
    }
  }

  /// The problems, in document order.
  public var problems: [Problem]
  /// Whether more problems were left out after `limit`.
  public var isTruncated: Bool

  /// An error listing these problems.
  public init(problems: [Problem], isTruncated: Bool = false) {
    self.problems = problems
    self.isTruncated = isTruncated
  }

  public var description: String {
    if problems.count == 1, !isTruncated { return problems[0].description }
    var lines = ["\(problems.count)\(isTruncated ? "+" : "") problems in the batch:"]
    lines += problems.map { "  \($0)" }
    if isTruncated { lines.append("  (more problems were not listed)") }
    return lines.joined(separator: "\n")
  }
}

/// Collects problems while mapping, up to the limit.
struct ProblemCollector {
  private(set) var problems: [MappingError.Problem] = []
  private(set) var isTruncated = false

  var isFull: Bool { problems.count >= MappingError.limit }

  /// Adds problems found elsewhere (another stage, a payload's mapping), up to the limit.
  mutating func add(contentsOf other: ProblemCollector) {
    for problem in other.problems {
      guard !isFull else {
        isTruncated = true
        return
      }
      problems.append(problem)
    }
    isTruncated = isTruncated || other.isTruncated
  }

  mutating func add(_ entity: String, _ path: JSONPath, _ value: JSONValue?, _ reason: String) {
    add(entity, path.description, value, reason)
  }

  mutating func add(_ entity: String, _ path: String, _ value: JSONValue?, _ reason: String) {
    guard !isFull else {
      isTruncated = true
      return
    }
    problems.append(
      .init(entity: entity, path: path, value: value.map { JSONWriter(options: []).string(from: $0) }, reason: reason))
  }

  func check() throws(MappingError) {
    if !problems.isEmpty { throw MappingError(problems: problems, isTruncated: isTruncated) }
  }
}
