import Foundation
import JSONLedger

// How the console shows values and what changed in them: a long value as one line that opens
// to the whole (with a copy button), a JSON value's change as the paths that changed, a text's
// change with the words taken out and put in marked. All of it is escaped by `HTML`.

enum ConsoleValues {
  /// Values longer than this, or of more than one line, show their first line cut to this
  /// many characters and open to the whole.
  static let lineLength = 80
  /// The characters of a value a page holds when opened.
  static let openedLength = 2000

  /// `text` as a table cell's content: as it is when short, else one line that opens
  /// (`<details>`, no script needed) to the whole text and a copy button.
  static func cell(_ text: String) -> HTML {
    let firstLine = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    guard text.count > lineLength || firstLine.count != text.count else { return "\(text)" }
    let shown = firstLine.prefix(lineLength)
    // A page holds at most `openedLength` characters of a value, so that a page of huge
    // values stays small; the API reads the whole.
    guard text.count > openedLength else {
      return """
        <details class="value"><summary>\(String(shown))…</summary><pre>\(text)</pre><button type="button" data-copy>Copy</button></details>
        """
    }
    return """
      <details class="value"><summary>\(String(shown))…</summary><pre>\(String(text.prefix(openedLength)))</pre><button type="button" data-copy>Copy</button>
      <p class="hint">The first \(openedLength) of \(text.count) characters: the API's object read has the whole value.</p></details>
      """
  }

  /// A change of one attribute as a cell pair's content (before, after): a JSON value's
  /// change as the paths inside it that changed, a text's change with its words marked; any
  /// other value as `cell` shows it.
  static func change(_ old: AttributeValue?, _ new: AttributeValue?, dateFormat: DateFormat) -> (HTML, HTML) {
    switch (old, new) {
    case (.json(let before), .json(let after)):
      let changes = pathChanges(before, after, at: "")
      guard !changes.isEmpty, changes.count <= 200 else { break }
      let list = changes.map { change in
        HTML(
          "<li><code>\(change.path.isEmpty ? "(the value)" : change.path)</code>: <span class=\"old\">\(change.old.map(json) ?? "absent")</span> → <span class=\"new\">\(change.new.map(json) ?? "absent")</span></li>"
        )
      }
      return ("\(cell(json(before)))", "<ul class=\"paths\">\(list)</ul>")
    case (.string(let before), .string(let after)):
      guard let marked = wordChange(before, after) else { break }
      return marked
    default: break
    }
    return (cell(text(old, dateFormat)), cell(text(new, dateFormat)))
  }

  /// A value as the console shows it: what the JSON says in a string (text, a date in the
  /// model's format, a UUID, a URL) as it is, others as JSON, no value as a dash.
  static func text(_ value: AttributeValue?, _ dateFormat: DateFormat) -> String {
    guard let value else { return "—" }
    let json = value.jsonValue(dateFormat: dateFormat)
    if case .string(let text) = json { return text }
    return Self.json(json)
  }

  static func json(_ value: JSONValue) -> String { JSONWriter(options: []).string(from: value) }

  /// One place inside a JSON value that a change touched: `stats[2].base_stat`, with the
  /// value before and after (nil: absent).
  struct PathChange: Equatable {
    var path: String
    var old: JSONValue?
    var new: JSONValue?
  }

  /// The places where `after` differs from `before`: objects compared member by member,
  /// arrays element by element (an element added or removed at the end is one change), any
  /// other difference as the value at that place.
  static func pathChanges(_ before: JSONValue, _ after: JSONValue, at path: String) -> [PathChange] {
    guard before != after else { return [] }
    switch (before, after) {
    case (.object(let old), .object(let new)):
      var changes: [PathChange] = []
      var seen: Set<String> = []
      for member in old {
        seen.insert(member.key)
        let place = path.isEmpty ? member.key : "\(path).\(member.key)"
        if let value = new[member.key] {
          changes += pathChanges(member.value, value, at: place)
        } else {
          changes.append(PathChange(path: place, old: member.value, new: nil))
        }
      }
      for member in new where !seen.contains(member.key) {
        changes.append(
          PathChange(path: path.isEmpty ? member.key : "\(path).\(member.key)", old: nil, new: member.value))
      }
      return changes
    case (.array(let old), .array(let new)):
      var changes: [PathChange] = []
      for index in 0..<max(old.count, new.count) {
        let place = "\(path)[\(index)]"
        // `JSONValue` takes `nil` as `.null`: absence is said by the index, not by nil.
        if index < old.count, index < new.count {
          changes += pathChanges(old[index], new[index], at: place)
        } else if index < old.count {
          changes.append(PathChange(path: place, old: old[index], new: nil))
        } else {
          changes.append(PathChange(path: place, old: nil, new: new[index]))
        }
      }
      return changes
    default:
      return [PathChange(path: path, old: before, new: after)]
    }
  }

  /// The words of `before` and `after`, with those only `before` has in `<del>` and those
  /// only `after` has in `<ins>` (a longest common subsequence of words); nil when either
  /// is a single word or too long to compare word by word (more than 400 words).
  static func wordChange(_ before: String, _ after: String) -> (HTML, HTML)? {
    let old = words(before)
    let new = words(after)
    guard old.count > 1 || new.count > 1, old.count <= 400, new.count <= 400 else { return nil }
    // Words are compared without the space after them: "fox" at the end is "fox " followed.
    let oldWords = old.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    let newWords = new.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    // lengths[i][j]: the longest common run of old[i...] and new[j...].
    var lengths = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
    for i in stride(from: old.count - 1, through: 0, by: -1) {
      for j in stride(from: new.count - 1, through: 0, by: -1) {
        lengths[i][j] =
          oldWords[i] == newWords[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
      }
    }
    var (i, j) = (0, 0)
    var (marked, markedNew): (HTML, HTML) = ("", "")
    while i < old.count || j < new.count {
      if i < old.count, j < new.count, oldWords[i] == newWords[j] {
        marked = "\(marked)\(old[i])"
        markedNew = "\(markedNew)\(new[j])"
        (i, j) = (i + 1, j + 1)
      } else if j < new.count, i == old.count || lengths[i][j + 1] >= lengths[i + 1][j] {
        markedNew = "\(markedNew)<ins>\(new[j])</ins>"
        j += 1
      } else {
        marked = "\(marked)<del>\(old[i])</del>"
        i += 1
      }
    }
    return (marked, markedNew)
  }

  /// `text` cut into words, each with the white space after it, so that the pieces join
  /// back into `text`.
  static func words(_ text: String) -> [String] {
    var pieces: [String] = []
    var current = ""
    var inSpace = false
    for character in text {
      if character.isWhitespace {
        inSpace = true
      } else if inSpace {
        pieces.append(current)
        current = ""
        inSpace = false
      }
      current.append(character)
    }
    if !current.isEmpty { pieces.append(current) }
    return pieces
  }
}
