/// A model that cannot be used: every problem found, each with its place in the model.
///
/// ```
/// model is invalid:
///   entities.Album.relationships.band.inverse: "albumz" is not a relationship of Band
/// ```
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
  /// One problem: where it is (`entities.Band.identity`) and why.
  public struct Problem: Sendable, Equatable, CustomStringConvertible {
    /// Where in the model: `entities.Band.identity`.
    public var place: String
    /// What is wrong there.
    public var reason: String
    /// A problem at a place.
    public init(place: String, reason: String) {
      self.place = place
      self.reason = reason
    }
    public var description: String { place.isEmpty ? reason : "\(place): \(reason)" }
  }

  /// The source the model came from (a file path), when known.
  public var source: String?
  /// The problems, in the order they were found.
  public var problems: [Problem]

  /// An error listing these problems.
  public init(source: String? = nil, problems: [Problem]) {
    self.source = source
    self.problems = problems
  }

  /// The place of a problem with the file itself (missing, unreadable), not its contents.
  public static let filePlace = "file"

  public var description: String {
    if problems.count == 1, problems[0].place == Self.filePlace {
      return "model \(source ?? "file"): \(problems[0].reason)"
    }
    let head = source.map { "model \($0) is invalid" } ?? "model is invalid"
    if problems.count == 1 { return "\(head): \(problems[0])" }
    return ([head + ":"] + problems.map { "  \($0)" }).joined(separator: "\n")
  }
}
