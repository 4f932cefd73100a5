/// Where a value is in the JSON (`albums[3].band`), kept cheap to extend because the mapper
/// extends it for every member it reads, and only formatted when a problem names it.
///
/// Holds the text of the path so far plus at most one pending array index and one pending
/// member key, the common `collection[i].member` shape; a deeper path formats its prefix once.
struct JSONPath: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral {
  private var prefix: String
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
    var path = self.index == nil && key == nil ? self : JSONPath(description)
    path.index = index
    return path
  }

  /// The path of member `key` of the object here.
  func appending(key: String) -> JSONPath {
    var path = self.key == nil ? self : JSONPath(description)
    path.key = key
    return path
  }

  /// The path as text: `albums[3].band`; a member at the top has no leading dot.
  var description: String {
    var text = prefix
    if let index { text += "[\(index)]" }
    if let key { text += text.isEmpty ? key : ".\(key)" }
    return text
  }
}
