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
    // Byte by byte: four single-byte appends cost less than setting up a copy of four.
    bytes.append(UInt8(truncatingIfNeeded: root >> 24))
    bytes.append(UInt8(truncatingIfNeeded: root >> 16))
    bytes.append(UInt8(truncatingIfNeeded: root >> 8))
    bytes.append(UInt8(truncatingIfNeeded: root))
    for value in values { append(value, to: &bytes) }
  }

  /// Appends one value's encoding.
  static func append(_ value: AttributeValue, to bytes: inout [UInt8]) {
    switch value {
    case .string(let text):
      bytes.append(1)
      appendText(text, to: &bytes)
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
      bytes.append(4)
      appendText("\(number)", to: &bytes)
    case .bool(let flag):
      bytes += [5, flag ? 1 : 0]
    case .date(let date):
      bytes.append(6)
      bytes.appendBigEndian(UInt64(bitPattern: DateCoding.microseconds(date)) ^ (1 << 63))
    case .uuid(let uuid):
      bytes.append(7)
      bytes += uuid.bytes
    case .url(let url):
      bytes.append(8)
      appendText(url.absoluteString, to: &bytes)
    case .binary(let data):
      bytes.append(9)
      bytes += data
    case .json(let json):
      bytes.append(10)
      appendText(JSONWriter().string(from: json), to: &bytes)
    }
  }

  private static func appendText(_ text: String, to bytes: inout [UInt8]) {
    // One pass over the UTF-8: copied whole (a memory copy) unless it holds a NUL, the rare
    // case done byte by byte. The end mark is two single-byte appends, which cost less than
    // setting up a copy.
    text.utf8.span.withUnsafeBufferPointer { utf8 in
      guard let base = utf8.baseAddress, memchr(base, 0, utf8.count) != nil else {
        bytes.append(contentsOf: utf8)
        return
      }
      for byte in utf8 {
        bytes.append(byte)
        if byte == 0 { bytes.append(0xFF) }
      }
    }
    bytes.append(0x00)
    bytes.append(0x01)
  }

  /// Doubles as unsigned integers of the same order: negatives inverted, positives with the
  /// sign bit set.
  private static func orderedBits(_ value: Double) -> UInt64 {
    let bits = value.bitPattern
    return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
  }
}
