import Foundation
import JSONLedgerSupport

/// The byte encoding of identities whose byte order is the values' order (strings by their
/// UTF-8 bytes, numbers and dates numerically). It is injective: two identities of one root
/// are equal exactly when their encodings are, so the resolver compares and hashes these
/// bytes, and the `keys` database stores them.
///
/// Layout of an identity: the root entity's id (4 bytes, big-endian), then each value as a
/// type tag and its bytes: integers, doubles and dates as 8 bytes big-endian with the sign
/// flipped; text with each NUL as `00 FF` and ending in `00 01`, so that no text is a prefix
/// of another's encoding.
enum OrderedEncoding {
  /// Replaces the contents of `bytes` with the encoding of one identity (a key's one value
  /// given as `CollectionOfOne`, with no array of it).
  static func encodeIdentity(root: UInt32, _ values: some Collection<AttributeValue>, into bytes: inout [UInt8]) {
    bytes.removeAll(keepingCapacity: true)
    // The usual identity, one text, written with the root in one reserved write.
    if values.count == 1, case .string(let text)? = values.first,
      appendTextWithoutNUL(text, tag: 1, root: root, to: &bytes)
    {
      return
    }
    bytes.append(addingCapacity: 4) { appendRoot(root, to: &$0) }
    for value in values { append(value, to: &bytes) }
  }

  private static func appendRoot(_ root: UInt32, to span: inout OutputSpan<UInt8>) {
    span.append(UInt8(truncatingIfNeeded: root >> 24))
    span.append(UInt8(truncatingIfNeeded: root >> 16))
    span.append(UInt8(truncatingIfNeeded: root >> 8))
    span.append(UInt8(truncatingIfNeeded: root))
  }

  /// Appends one value's encoding.
  static func append(_ value: AttributeValue, to bytes: inout [UInt8]) {
    switch value {
    case .string(let text):
      appendText(text, tag: 1, to: &bytes)
    case .integer(let number):
      bytes.append(2)
      bytes.appendBigEndian(UInt64(bitPattern: number) ^ (1 << 63))
    case .double(let number):
      bytes.append(3)
      bytes.appendBigEndian(orderedBits(number))
    case .float(let number):
      bytes.append(3)
      bytes.appendBigEndian(orderedBits(Double(number)))
    case .decimal(let number):
      appendText("\(number)", tag: 4, to: &bytes)
    case .bool(let flag):
      bytes += [5, flag ? 1 : 0]
    case .date(let date):
      bytes.append(6)
      bytes.appendBigEndian(UInt64(bitPattern: DateCoding.microseconds(date)) ^ (1 << 63))
    case .uuid(let uuid):
      bytes.append(7)
      bytes += uuid.bytes
    case .url(let url):
      appendText(url.absoluteString, tag: 8, to: &bytes)
    case .binary(let data):
      bytes.append(9)
      bytes += data
    case .json(let json):
      appendText(JSONWriter().string(from: json), tag: 10, to: &bytes)
    }
  }

  /// Appends `tag` and the text's encoding: each NUL as `00 FF`, then the end mark `00 01`.
  private static func appendText(_ text: String, tag: UInt8, to bytes: inout [UInt8]) {
    if !appendTextWithoutNUL(text, tag: tag, root: nil, to: &bytes) {
      bytes.append(tag)
      // The rare text that holds a NUL, byte by byte.
      for byte in text.utf8 {
        bytes.append(byte)
        if byte == 0 { bytes.append(0xFF) }
      }
      bytes.append(0x00)
      bytes.append(0x01)
    }
  }

  /// `appendText` of a text without a NUL, after the root's four bytes when `root` is given,
  /// in one reserved write. False, with nothing appended, for a text that holds a NUL.
  private static func appendTextWithoutNUL(_ text: String, tag: UInt8, root: UInt32?, to bytes: inout [UInt8])
    -> Bool
  {
    text.utf8.span.withUnsafeBufferPointer { utf8 in
      guard let length = length(ofTextWithoutNUL: utf8, root: root != nil) else { return false }
      bytes.append(addingCapacity: length) { write(utf8, tag: tag, root: root, to: &$0) }
      return true
    }
  }

  /// The length of the encoding of the identity that is `text` alone, when its text holds no
  /// NUL: for a key written in room of its own (`writeSoleText`). Nil for a text with a NUL.
  static func soleTextLength(_ text: String) -> Int? {
    text.utf8.span.withUnsafeBufferPointer { length(ofTextWithoutNUL: $0, root: true) }
  }

  /// Writes the encoding of the identity of root `root` that is `text` alone, into room of
  /// `soleTextLength(text)` bytes: the same bytes as `encodeIdentity`.
  static func writeSoleText(_ text: String, root: UInt32, to span: inout OutputSpan<UInt8>) {
    text.utf8.span.withUnsafeBufferPointer { write($0, tag: 1, root: root, to: &span) }
  }

  /// The length of a text's encoding (the root's four bytes first when `root`), or nil when
  /// the text holds a NUL.
  @inline(__always)
  private static func length(ofTextWithoutNUL utf8: UnsafeBufferPointer<UInt8>, root: Bool) -> Int? {
    if let base = utf8.baseAddress, memchr(base, 0, utf8.count) != nil { return nil }
    return (root ? 4 : 0) + 1 + utf8.count + 2
  }

  /// A text without a NUL, after the root's four bytes when `root` is given: its bytes copied
  /// whole (a memory copy), the end mark after them.
  @inline(__always)
  private static func write(
    _ utf8: UnsafeBufferPointer<UInt8>, tag: UInt8, root: UInt32?, to span: inout OutputSpan<UInt8>
  ) {
    if let root { appendRoot(root, to: &span) }
    span.append(tag)
    span.appendCopy(of: utf8)
    span.append(0x00)
    span.append(0x01)
  }

  /// Doubles as unsigned integers of the same order: negatives inverted, positives with the
  /// sign bit set.
  private static func orderedBits(_ value: Double) -> UInt64 {
    let bits = value.bitPattern
    return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
  }
}

extension OutputSpan where Element == UInt8 {
  /// Appends `bytes` in one memory copy, into room the caller reserved for them (as `append`
  /// requires for each byte). Kept in this module, where it is inlined: from another, it and
  /// the reserving call were calls (RESULTS.md).
  @inline(__always)
  mutating func appendCopy(of bytes: UnsafeBufferPointer<UInt8>) {
    withUnsafeMutableBufferPointer { buffer, count in
      guard let source = bytes.baseAddress, let destination = buffer.baseAddress else { return }
      precondition(buffer.count - count >= bytes.count, "an output span holds fewer bytes than it is given")
      (destination + count).initialize(from: source, count: bytes.count)
      count += bytes.count
    }
  }
}
