/// Where a value is in the JSON (`albums[3].band`), kept cheap to extend because the mapper
/// extends it for every member it reads, and only formatted when a problem names it.
///
/// Holds the text it starts from, at most one pending array index and one pending member key
/// (the common `collection[i].member` shape), and for a deeper path the shorter path it
/// extends, shared, not formatted: a nested object's members extend its path once each.
struct JSONPath: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// A path that a longer one extends.
  private final class Parent: Sendable {
    let path: JSONPath
    init(_ path: JSONPath) { self.path = path }
  }

  private var prefix: String
  private var parent: Parent?
  private var index: Int?
  private var key: String?

  init(_ text: String) {
    prefix = text
  }

  init(stringLiteral text: String) {
    self.init(text)
  }

  /// The path of element `index` of the array here.
  func appending(index: Int) -> JSONPath {
    var path = self.index == nil && key == nil ? self : extended()
    path.index = index
    return path
  }

  /// The path of member `key` of the object here.
  func appending(key: String) -> JSONPath {
    var path = self.key == nil ? self : extended()
    path.key = key
    return path
  }

  /// An empty extension of this path.
  private func extended() -> JSONPath {
    var path = JSONPath("")
    path.parent = Parent(self)
    return path
  }

  /// The path as text: `albums[3].band`; a member at the top has no leading dot.
  var description: String {
    var text = parent?.path.description ?? prefix
    if let index { text += "[\(index)]" }
    if let key { text += text.isEmpty ? key : ".\(key)" }
    return text
  }

  static func == (lhs: JSONPath, rhs: JSONPath) -> Bool { lhs.description == rhs.description }
}
