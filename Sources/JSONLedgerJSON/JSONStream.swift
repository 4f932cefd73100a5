import Foundation

/// Reads a large JSON file element by element with a bounded buffer: a top-level array, or a
/// top-level object whose members are collections (arrays). Each element is parsed on its
/// own, so memory holds one element (and one read block) at a time, not the document.
///
/// ```swift
/// try JSONStream(path: "albums.json").forEachElement { collection, element in … }
/// ```
/// Errors carry the line and column in the whole file; trailing commas are accepted.
public struct JSONStream {
  private let handle: FileHandle
  private let path: String
  private let blockSize: Int
  private var buffer: [UInt8] = []
  private var position = 0
  private var atEnd = false
  /// Bytes dropped from the front of `buffer` so far, with the line count and line start.
  private var dropped = 0
  private var line = 1
  private var lineStart = 0
  /// How far `countedLocation` has counted lines in `buffer` (`line` and `lineStart` there), so
  /// that placing element after element counts each byte once.
  private var counted = (offset: 0, line: 1, lineStart: 0)

  /// A stream over the file at `path`.
  public init(path: String, blockSize: Int = 1 << 20) throws {
    try JSONFileError.checkReadable(path)
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw JSONFileError(path: path, reason: JSONFileError.reason(errno))
    }
    self.handle = handle
    self.path = path
    self.blockSize = blockSize
  }

  /// Calls `body` with each element: `collection` is nil for a top-level array, else the key
  /// of the member the element belongs to (a member that is not an array is one element).
  /// `collectionStarts` is called with each member's key before its elements (an empty array
  /// has none); `bytesRead`, before each element is handed on, with the bytes of the input parsed
  /// so far.
  public mutating func forEachElement(
    collectionStarts: (String) throws -> Void = { _ in }, bytesRead: (Int) -> Void = { _ in },
    _ body: (_ collection: String?, _ element: JSONValue) throws -> Void
  ) throws {
    try forEach(asText: false, collectionStarts: collectionStarts, bytesRead: bytesRead) { collection, element in
      if case .value(let value) = element { try body(collection, value) }
    }
  }

  /// `forEachElement`, with each element handed on as its text, found but not parsed (its
  /// brackets counted and its strings followed, nothing more): the caller parses it, or
  /// recognises it. The bytes are the stream's own, lent for the call: the caller copies what
  /// it keeps.
  /// `objectIsOneElement`: a top-level object is one element (of no collection), not an
  /// object whose keys name collections.
  package mutating func forEachElementText(
    objectIsOneElement: Bool = false, collectionStarts: (String) throws -> Void = { _ in },
    bytesRead: (Int) -> Void = { _ in },
    _ body: (_ collection: String?, _ bytes: UnsafeBufferPointer<UInt8>, _ place: JSONElementPlace) throws -> Void
  ) throws {
    try forEach(
      asText: true, objectIsOneElement: objectIsOneElement, collectionStarts: collectionStarts, bytesRead: bytesRead
    ) { collection, element in
      if case .text(let bytes, let place) = element { try body(collection, bytes, place) }
    }
  }

  /// An element: parsed, or its bytes in the buffer (valid only while the element is handed
  /// on) and where it starts.
  private enum Element {
    case value(JSONValue)
    case text(UnsafeBufferPointer<UInt8>, JSONElementPlace)
  }

  /// The document's first byte past a byte order mark and white space, not read yet (nil:
  /// the document is empty). Reading elements from here on gives them all.
  package mutating func firstByte() throws -> UInt8? {
    try skipByteOrderMark()
    try skipWhitespace()
    return try peek()
  }

  private mutating func forEach(
    asText: Bool, objectIsOneElement: Bool = false, collectionStarts: (String) throws -> Void,
    bytesRead: (Int) -> Void, _ body: (String?, Element) throws -> Void
  ) throws {
    guard let first = try firstByte() else { throw failure("the document is empty") }
    switch first {
    case UInt8(ascii: "["):
      try forEachInArray(collection: nil, asText: asText, bytesRead: bytesRead, body)
    case UInt8(ascii: "{") where !objectIsOneElement:
      position += 1
      while true {
        try skipWhitespace()
        guard let next = try peek() else { throw failure("unexpected end of input inside the top-level object") }
        if next == UInt8(ascii: "}") {
          position += 1
          break
        }
        guard case .string(let key) = try nextValue() else { throw failure("expected a string key") }
        try skipWhitespace()
        guard try peek() == UInt8(ascii: ":") else { throw failure("expected ':' after the key \"\(key)\"") }
        position += 1
        try skipWhitespace()
        try collectionStarts(key)
        if try peek() == UInt8(ascii: "[") {
          try forEachInArray(collection: key, asText: asText, bytesRead: bytesRead, body)
        } else {
          try nextElement(asText: asText, collection: key, bytesRead: bytesRead, body)
        }
        try skipWhitespace()
        switch try peek() {
        case UInt8(ascii: ",")?: position += 1
        case UInt8(ascii: "}")?: continue
        default: throw failure("expected ',' or '}' in the top-level object")
        }
      }
    default:
      try nextElement(asText: asText, collection: nil, bytesRead: bytesRead, body)
    }
    try skipWhitespace()
    if try peek() != nil { throw failure("unexpected data after the end of the document") }
  }

  private mutating func forEachInArray(
    collection: String?, asText: Bool, bytesRead: (Int) -> Void, _ body: (String?, Element) throws -> Void
  ) throws {
    position += 1
    while true {
      try skipWhitespace()
      guard let next = try peek() else { throw failure("unexpected end of input inside an array") }
      if next == UInt8(ascii: "]") {
        position += 1
        return
      }
      try nextElement(asText: asText, collection: collection, bytesRead: bytesRead, body)
      try skipWhitespace()
      switch try peek() {
      case UInt8(ascii: ",")?: position += 1
      case UInt8(ascii: "]")?: continue
      default: throw failure("expected ',' or ']' in an array")
      }
    }
  }

  // MARK: - Buffer

  private mutating func fill() throws -> Bool {
    guard !atEnd else { return false }
    if position > blockSize {
      // From where placing elements has counted to, when that is not past the bytes dropped.
      (_, line, lineStart) = lines(from: counted.offset <= position ? counted : (0, line, lineStart), to: position)
      buffer.removeFirst(position)
      counted = (0, line, lineStart)
      dropped += position
      position = 0
    }
    let data: Data
    do { data = try handle.read(upToCount: blockSize) ?? Data() } catch {
      throw JSONFileError(path: path, reason: JSONFileError.reason(of: error))
    }
    if data.isEmpty {
      atEnd = true
      return false
    }
    buffer.append(contentsOf: data)
    return true
  }

  private mutating func peek() throws -> UInt8? {
    while position >= buffer.count { if try !fill() { return nil } }
    return buffer[position]
  }

  /// Steps over a byte order mark the document begins with (`ByteOrderMark`); at any later
  /// byte, does nothing.
  private mutating func skipByteOrderMark() throws {
    guard dropped == 0, position == 0 else { return }
    for index in ByteOrderMark.bytes.indices {
      while index >= buffer.count { if try !fill() { return } }
      guard buffer[index] == ByteOrderMark.bytes[index] else { return }
    }
    position = ByteOrderMark.bytes.count
  }

  private mutating func skipWhitespace() throws {
    while let byte = try peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
  }

  /// Line and column (from 1) of a buffer offset.
  private func location(_ offset: Int) -> (line: Int, column: Int) {
    let reached = lines(from: (0, line, lineStart), to: offset)
    return (reached.line, dropped + offset - reached.lineStart + 1)
  }

  /// `location(offset)`, counting on from where the last call stopped when `offset` is past
  /// it (elements are placed in order).
  private mutating func countedLocation(_ offset: Int) -> (line: Int, column: Int) {
    counted = lines(from: offset < counted.offset ? (0, line, lineStart) : counted, to: offset)
    return (counted.line, dropped + offset - counted.lineStart + 1)
  }

  /// The line count and line start reached at buffer `offset`, counting from `start`.
  private func lines(from start: (offset: Int, line: Int, lineStart: Int), to offset: Int) -> (
    offset: Int, line: Int, lineStart: Int
  ) {
    var (line, lineStart) = (start.line, start.lineStart)
    let end = max(start.offset, min(offset, buffer.count))
    // Each line break found with `memchr`: every byte of the file is counted once.
    buffer.withUnsafeBytes { bytes in
      guard let base = bytes.baseAddress else { return }
      var index = start.offset
      while index < end, let found = memchr(base + index, 0x0A, end - index) {
        index = UnsafeRawPointer(found) - base + 1
        line += 1
        lineStart = dropped + index
      }
    }
    return (end, line, lineStart)
  }

  private func failure(_ reason: String) -> JSONSyntaxError {
    let (line, column) = location(position)
    return JSONSyntaxError(line: line, column: column, offset: dropped + position, reason: reason)
  }

  /// Hands `body` the value at `position`, parsed, or its text, and steps past it.
  private mutating func nextElement(
    asText: Bool, collection: String?, bytesRead: (Int) -> Void, _ body: (String?, Element) throws -> Void
  ) throws {
    guard asText else {
      let value = try nextValue()
      bytesRead(dropped + position)
      return try body(collection, .value(value))
    }
    let length = try nextValueLength()
    // `[,]` or `[{…},,{…}]`: a comma where a value belongs (a trailing comma is only
    // accepted before the closing bracket).
    guard length > 0 else {
      let found = try peek().map { "'\(Character(Unicode.Scalar($0)))'" } ?? "the end"
      throw failure("expected a value, found \(found)")
    }
    let (line, column) = countedLocation(position)
    let place = JSONElementPlace(line: line, column: column, offset: dropped + position)
    let start = position
    position += length
    bytesRead(dropped + position)
    // Lent, not copied: the buffer is not changed until `body` returns.
    try buffer.withUnsafeBufferPointer { buffer in
      try body(collection, .text(UnsafeBufferPointer(rebasing: buffer[start..<(start + length)]), place))
    }
  }

  /// Finds the end of the value at `position`, reading more blocks as needed, and parses it.
  private mutating func nextValue() throws -> JSONValue {
    let length = try nextValueLength()
    let valueStart = position
    do {
      let value = try JSONParser.parse(element: buffer[valueStart..<(valueStart + length)])
      position = valueStart + length
      return value
    } catch {
      let (line, column) = location(valueStart)
      throw JSONElementPlace(line: line, column: column, offset: dropped + valueStart).placing(error)
    }
  }

  /// The length of the value at `position`, found by reading more blocks as needed (which
  /// may move `position` in the buffer, never in the file).
  private mutating func nextValueLength() throws -> Int {
    // `position` marks the value's start; `fill` may move the buffer, so offsets are kept
    // relative to it.
    var index = position
    var scan = ValueScan()
    while true {
      if index >= buffer.count {
        let offset = index - position
        if try !fill() {
          if scan.depth == 0, !scan.inString, index > position { return index - position }
          position = buffer.count
          throw failure("unexpected end of input inside a value")
        }
        index = position + offset
        continue
      }
      let (next, found) = buffer.withUnsafeBufferPointer { scan.end(in: $0, from: index) }
      index = next
      if found { return index - position }
    }
  }
}

/// Where an element of a `JSONStream` starts in the file.
package struct JSONElementPlace: Sendable {
  /// The line and column (from 1) and the offset of its first byte in the file.
  package let line: Int
  package let column: Int
  package let offset: Int

  package init(line: Int, column: Int, offset: Int) {
    self.line = line
    self.column = column
    self.offset = offset
  }

  /// An error found parsing the element's bytes alone, placed in the file.
  package func placing(_ error: JSONSyntaxError) -> JSONSyntaxError {
    JSONSyntaxError(
      line: line + error.line - 1, column: error.line == 1 ? column + error.column - 1 : error.column,
      offset: offset + error.offset, reason: error.reason)
  }
}
