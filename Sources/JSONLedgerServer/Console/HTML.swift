/// A fragment of HTML. Text interpolated into it is escaped; only another `HTML` is
/// inserted as it is — so a payload value (`<script>…`) can only ever reach a page as text,
/// and the compiler, not a reviewer, keeps it so.
struct HTML: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
  private(set) var text: String

  init(stringLiteral value: String) { text = value }

  init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

  /// Markup this file writes itself (never a value from a request or a store).
  init(trusted text: String) { self.text = text }

  var description: String { text }

  struct Interpolation: StringInterpolationProtocol {
    var text = ""
    init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity * 2) }
    mutating func appendLiteral(_ literal: String) { text += literal }
    /// Text, escaped for an element's content or a quoted attribute.
    mutating func appendInterpolation(_ value: String) { text += HTML.escaped(value) }
    mutating func appendInterpolation(_ value: some BinaryInteger) { text += String(value) }
    mutating func appendInterpolation(_ fragment: HTML) { text += fragment.text }
    mutating func appendInterpolation(_ fragments: [HTML]) { for fragment in fragments { text += fragment.text } }
  }

  /// `value` with `& < > " '` as character references.
  static func escaped(_ value: String) -> String {
    var result = ""
    result.reserveCapacity(value.utf8.count)
    for character in value.unicodeScalars {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&#39;"
      default: result.unicodeScalars.append(character)
      }
    }
    return result
  }
}
