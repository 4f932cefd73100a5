/// The one text form of a query's conditions and order, read the same by the command line
/// (`export --where`, `--sort`), the HTTP API (`where=`, `sort=`) and the console, with the
/// meaning of `Query`'s filters:
///
/// ```
/// weight > 1000 and types contains grass
/// name prefix "char"          label = "Virgin Records"      released >= 1980-01-01
/// id is null                  state in (open, closed)       damage_class.name = physical
/// placeholder                 not placeholder               sort: -weight, name
/// ```
///
/// A condition is a field, an operator and a value: `=`, `!=`, `<`, `<=`, `>`, `>=`,
/// `is null`, `is not null`, `in (…)`, `prefix`, `contains` (a to-many relationship holds the
/// object with that key); `placeholder` alone keeps the objects known only by a reference,
/// `not placeholder` the others. Conditions are joined by `and`. A field is a property name
/// or a JSON key, dotted ones included (`sprites.front_default`, or a to-one relationship's
/// key as `damage_class.name`). A value is a number, `true`, `false`, `null` (no value), a
/// quoted string (`"…"` or `'…'`, with `\"` and `\\`), or a bare word; a bare value after `=`
/// runs to the next ` and ` (so `label = Virgin Records` is one value). Values are coerced to
/// the field's type as an import coerces them.
public enum QueryText {
  /// The conditions of `expression` added to `query` (every one must hold).
  public static func filter(_ query: Query, by expression: String) throws(LedgerError) -> Query {
    var parser = Parser(expression, entity: query.entity)
    var result = query
    for condition in try parser.conditions() {
      switch condition {
      case .property(let property, let filter): result = result.filter(property, filter)
      case .placeholder(let wanted): result.placeholders = wanted ? .only : .excluded
      }
    }
    return result
  }

  /// The sort keys of `text`: comma-separated fields, each smallest first, or largest first
  /// with a leading `-` or a trailing `desc` (`-weight, name`, `weight desc`).
  public static func sortKeys(_ text: String, entity: String) throws(LedgerError) -> [Query.SortKey] {
    var keys: [Query.SortKey] = []
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
      var words = part.split(whereSeparator: \.isWhitespace).map(String.init)
      var ascending = true
      if words.count == 2, ["asc", "desc"].contains(words[1].lowercased()) {
        ascending = words[1].lowercased() == "asc"
        words.removeLast()
      }
      guard words.count == 1, var name = words.first else {
        throw LedgerError.invalidQuery(
          entity: entity,
          "the sort \"\(text.prefix(200))\" is not a list of fields (-weight, name, or weight desc): "
            + "\"\(part.trimmingCharacters(in: .whitespaces).prefix(80))\"")
      }
      if name.hasPrefix("-") {
        name.removeFirst()
        ascending = false
      } else if name.hasPrefix("+") {
        name.removeFirst()
      }
      guard !name.isEmpty else {
        throw LedgerError.invalidQuery(entity: entity, "the sort \"\(text.prefix(200))\" names an empty field")
      }
      keys.append(Query.SortKey(name, ascending: ascending))
    }
    return keys
  }

  enum Condition {
    case property(String, Query.Filter)
    case placeholder(Bool)
  }

  /// A hand-written reader of the expression, by characters, each error naming its position
  /// (counted in characters from 1).
  struct Parser {
    let text: [Character]
    let source: String
    let entity: String
    var position = 0

    init(_ source: String, entity: String) {
      self.source = source
      self.text = Array(source)
      self.entity = entity
    }

    mutating func conditions() throws(LedgerError) -> [Condition] {
      var conditions: [Condition] = []
      skipSpace()
      guard position < text.count else { throw failure("expected a condition, found nothing") }
      while true {
        conditions.append(try condition())
        skipSpace()
        guard position < text.count else { return conditions }
        guard consumeWord("and") || consume("&&") else {
          throw failure("expected `and` or the end after a condition, found \(found())")
        }
        skipSpace()
      }
    }

    private mutating func condition() throws(LedgerError) -> Condition {
      let start = position
      if consumeWord("not") {
        skipSpace()
        guard consumeWord("placeholder") else { throw failure("expected `placeholder` after `not`, found \(found())") }
        return .placeholder(false)
      }
      if consumeWord("placeholder") {
        skipSpace()
        if position == text.count || peekWord("and") || peek("&&") { return .placeholder(true) }
        position = start
      }
      let field = try self.field()
      skipSpace()
      for symbol in ["!=", "<=", ">=", "==", "<", ">", "="] where consume(symbol) {
        skipSpace()
        let value = try self.value(restOfCondition: symbol == "=" || symbol == "==" || symbol == "!=")
        return .property(field, try comparison(symbol, value))
      }
      if consumeWord("is") {
        skipSpace()
        if consumeWord("null") { return .property(field, .isNull) }
        guard consumeWord("not") else { throw failure("expected `null` or `not null` after `is`, found \(found())") }
        skipSpace()
        guard consumeWord("null") else { throw failure("expected `null` after `is not`, found \(found())") }
        return .property(field, .isNotNull)
      }
      if consumeWord("in") {
        skipSpace()
        guard consume("(") else { throw failure("expected `(` after `in`, found \(found())") }
        var values: [JSONValue] = []
        skipSpace()
        if !consume(")") {
          while true {
            skipSpace()
            values.append(try value(restOfCondition: false))
            skipSpace()
            if consume(")") { break }
            guard consume(",") else { throw failure("expected `,` or `)` in the list, found \(found())") }
          }
        }
        return .property(field, .oneOf(values))
      }
      if consumeWord("prefix") {
        skipSpace()
        guard case .string(let prefix) = try value(restOfCondition: false) else {
          throw failure("expected text after `prefix`")
        }
        return .property(field, .hasPrefix(prefix))
      }
      if consumeWord("contains") {
        skipSpace()
        return .property(field, .contains(try value(restOfCondition: false)))
      }
      throw failure(
        "expected an operator (=, !=, <, <=, >, >=, is null, is not null, in, prefix, contains) after \"\(field)\", "
          + "found \(found())")
    }

    /// The filter a comparison operator makes with its value.
    private func comparison(_ symbol: String, _ value: JSONValue) throws(LedgerError) -> Query.Filter {
      switch symbol {
      case "!=": return .notEquals(value)
      case "<=": return .between(nil, try bound(value, symbol))
      case ">=": return .between(try bound(value, symbol), nil)
      case "<": return .lessThan(try bound(value, symbol))
      case ">": return .greaterThan(try bound(value, symbol))
      default: return .equals(value)
      }
    }

    private func bound(_ value: JSONValue, _ symbol: String) throws(LedgerError) -> JSONValue {
      guard value != .null else { throw failure("`\(symbol) null` compares with nothing: use `is null`") }
      return value
    }

    private mutating func field() throws(LedgerError) -> String {
      skipSpace()
      if position < text.count, text[position] == "\"" || text[position] == "'" || text[position] == "`" {
        guard case .string(let name) = try quoted() else { throw failure("expected a field name") }
        return name
      }
      let start = position
      while position < text.count, !text[position].isWhitespace, !"=!<>(),&".contains(text[position]) {
        position += 1
      }
      guard position > start else { throw failure("expected a field name, found \(found())") }
      return String(text[start..<position])
    }

    /// A value; `restOfCondition`: a bare value runs to the next ` and ` (or the end).
    private mutating func value(restOfCondition: Bool) throws(LedgerError) -> JSONValue {
      guard position < text.count else { throw failure("expected a value, found the end") }
      if text[position] == "\"" || text[position] == "'" { return try quoted() }
      let start = position
      if restOfCondition {
        while position < text.count, !(text[position].isWhitespace && isAnd(at: position + 1)) { position += 1 }
      } else {
        while position < text.count, !text[position].isWhitespace, !",()".contains(text[position]) { position += 1 }
      }
      let word = String(text[start..<position]).trimmingCharacters(in: .whitespaces)
      guard !word.isEmpty else { throw failure("expected a value, found \(found())") }
      switch word {
      case "null": return .null
      case "true": return .bool(true)
      case "false": return .bool(false)
      default:
        if let number = Self.number(word) { return .number(number) }
        return .string(word)
      }
    }

    /// A JSON number's text, as a number; nil for any other word.
    private static func number(_ word: String) -> JSONNumber? {
      guard word.first.map({ $0 == "-" || $0.isNumber }) == true,
        case .number(let number)? = try? JSONParser.parse(Array(word.utf8))
      else { return nil }
      return number
    }

    private mutating func quoted() throws(LedgerError) -> JSONValue {
      let quote = text[position]
      let start = position
      position += 1
      var result = ""
      while position < text.count {
        let character = text[position]
        position += 1
        if character == quote { return .string(result) }
        if character == "\\", position < text.count {
          result.append(text[position])
          position += 1
        } else {
          result.append(character)
        }
      }
      position = start
      throw failure("the quoted text that starts here has no closing \(quote)")
    }

    private func isAnd(at index: Int) -> Bool {
      let word = Array("and")
      guard index + word.count <= text.count,
        Array(text[index..<index + word.count]).map({ $0.lowercased() })
          == word.map({ String($0) })
      else {
        return Array(text[index..<min(text.count, index + 2)]) == ["&", "&"]
      }
      return index + word.count == text.count || text[index + word.count].isWhitespace
    }

    private mutating func skipSpace() {
      while position < text.count, text[position].isWhitespace { position += 1 }
    }

    private func peek(_ symbol: String) -> Bool {
      let characters = Array(symbol)
      return position + characters.count <= text.count
        && Array(text[position..<position + characters.count])
          == characters
    }

    private mutating func consume(_ symbol: String) -> Bool {
      guard peek(symbol) else { return false }
      position += symbol.count
      return true
    }

    /// Whether a keyword (any case) stands here as a whole word.
    private func peekWord(_ word: String) -> Bool {
      let characters = Array(word)
      guard position + characters.count <= text.count else { return false }
      let here = String(text[position..<position + characters.count]).lowercased()
      guard here == word else { return false }
      let after = position + characters.count
      return after == text.count || text[after].isWhitespace || "()".contains(text[after])
    }

    private mutating func consumeWord(_ word: String) -> Bool {
      guard peekWord(word) else { return false }
      position += word.count
      return true
    }

    private func found() -> String {
      guard position < text.count else { return "the end" }
      return "\"\(String(text[position..<min(text.count, position + 20)]))\""
    }

    private func failure(_ reason: String) -> LedgerError {
      LedgerError.invalidQuery(
        entity: entity, "at character \(position + 1) of \"\(source.prefix(200))\": \(reason)"
      ).with { $0.position = position + 1 }
    }
  }
}
