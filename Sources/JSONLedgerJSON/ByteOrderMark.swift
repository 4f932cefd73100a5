/// The UTF-8 byte order mark: U+FEFF, encoded as EF BB BF.
///
/// RFC 8259 forbids writing one, but lets a reader ignore one; Foundation's
/// `JSONSerialization` and `JSONDecoder` do, and some editors save UTF-8 files with one. So a
/// document may begin with a mark, which is not part of it: `JSONParser.parse(_:)`,
/// `JSONSkim.documentStart` and `JSONStream` start after it. Anywhere else, an element's
/// first byte included, it is an unexpected byte.
package enum ByteOrderMark {
  package static let bytes: [UInt8] = [0xEF, 0xBB, 0xBF]

  /// How many bytes a mark takes at the start of `text`: 3 if it begins with one, else 0.
  package static func length(atStartOf text: [UInt8]) -> Int {
    text.count >= bytes.count && text[0] == bytes[0] && text[1] == bytes[1] && text[2] == bytes[2] ? bytes.count : 0
  }
}
