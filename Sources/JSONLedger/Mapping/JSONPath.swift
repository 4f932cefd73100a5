/// Where a value is in the JSON (`albums[3].band`), kept cheap to extend because the mapper
/// extends it for every member it reads, and only formatted when a problem names it.
///
/// Holds what it starts from (a text, or a shorter path it extends, shared and not
/// formatted), then at most one pending array index and one pending member key: the common
/// `collection[i].member` shape extends a collection's path without allocating, and a nested
/// object's members extend its path once each.
///
/// 32 bytes: a batch holds one for each object it maps and each reference it holds by key.
struct JSONPath: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// What a path starts from: a text, or a shorter path that this one extends.
  private final class Base: Sendable {
    let parent: JSONPath?
    let text: String
    init(parent: JSONPath?, text: String) {
      self.parent = parent
      self.text = text
    }
  }

  /// nil: the empty text.
  private var base: Base?
  /// The pending array index; `Self.noIndex` when there is none (an index is never negative).
  private var index: Int
  private var key: String?

  private static let noIndex = -1

  init(_ text: String) {
    base = text.isEmpty ? nil : Base(parent: nil, text: text)
    index = Self.noIndex
  }

  init(stringLiteral text: String) {
    self.init(text)
  }

  /// The path of element `index` of the array here.
  func appending(index: Int) -> JSONPath {
    var path = self.index == Self.noIndex && key == nil ? self : extended()
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
    path.base = Base(parent: self, text: "")
    return path
  }

  /// The path as text: `albums[3].band`; a member at the top has no leading dot.
  var description: String {
    var text = base.map { $0.parent?.description ?? $0.text } ?? ""
    if index != Self.noIndex { text += "[\(index)]" }
    if let key { text += text.isEmpty ? key : ".\(key)" }
    return text
  }

  static func == (lhs: JSONPath, rhs: JSONPath) -> Bool { lhs.description == rhs.description }
}
