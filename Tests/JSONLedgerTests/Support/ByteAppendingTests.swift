import JSONLedgerSupport
import Testing

@testable import JSONLedger

@Suite("Appending integers to byte arrays")
struct ByteAppendingTests {
  static let varints: [(UInt64, [UInt8])] = [
    (0, [0]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
    // Each side of the two- and three-byte paths.
    (0x3FFF, [0xFF, 0x7F]), (0x4000, [0x80, 0x80, 0x01]), (0x1F_FFFF, [0xFF, 0xFF, 0x7F]),
    (0x20_0000, [0x80, 0x80, 0x80, 0x01]),
    (UInt64(UInt32.max), [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
    (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
  ]

  @Test(arguments: varints)
  func varintsAreLEB128(value: UInt64, expected: [UInt8]) throws {
    var bytes: [UInt8] = [0xAA]
    bytes.appendVarint(value)
    #expect(bytes == [0xAA] + expected)
    var reader = BinaryReader(bytes, position: 1)
    #expect(try reader.readVarint() == value)
  }

  @Test func bigEndianPutsTheMostSignificantByteFirst() {
    var bytes: [UInt8] = []
    bytes.appendBigEndian(UInt64(0x0102_0304_0506_0708))
    bytes.appendBigEndian(UInt32(0x0A0B_0C0D))
    #expect(bytes == [1, 2, 3, 4, 5, 6, 7, 8, 0x0A, 0x0B, 0x0C, 0x0D])
    #expect(UInt64(bigEndianBytes: bytes) == 0x0102_0304_0506_0708)
  }

  /// A field set in place (a reused key buffer) holds what appending the number gives, at any
  /// offset, unaligned too, and leaves the bytes around it alone.
  @Test(arguments: [0, 1, 3, 7, 8])
  func bigEndianSetInPlaceIsTheAppendedBytes(offset: Int) {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<50 {
      let wide = UInt64.random(in: .min ... .max, using: &generator)
      for (value, width) in [(wide, 8), (wide >> 32, 4), (wide & 0xFFFF, 2)] {
        let filler = UInt8.random(in: 0...255, using: &generator)
        var bytes = [UInt8](repeating: filler, count: offset + width + 3)
        var expected = [UInt8](repeating: filler, count: offset)
        switch width {
        case 8:
          bytes.setBigEndian(value, at: offset)
          expected.appendBigEndian(value)
        case 4:
          bytes.setBigEndian(UInt32(value), at: offset)
          expected.appendBigEndian(UInt32(value))
        default:
          bytes.setBigEndian(UInt16(value), at: offset)
          expected.appendBigEndian(UInt16(value))
        }
        expected += [filler, filler, filler]
        #expect(bytes == expected, "value \(value), width \(width), offset \(offset)")
      }
    }
  }

  @Test func manyAppendsGrowTheArray() throws {
    var bytes: [UInt8] = []
    for value in 0..<10_000 as Range<UInt64> { bytes.appendVarint(value * 1_000) }
    var reader = BinaryReader(bytes, position: 0)
    for value in 0..<10_000 as Range<UInt64> { #expect(try reader.readVarint() == value * 1_000) }
  }

  /// A list of ids, a `LinkTargets` (one id held inline) or an array, of every length: read
  /// back as written, and a list of one id is its count, root and sequence.
  @Test(arguments: [0, 1, 2, 3, 200])
  func compactIDListsOfEveryLengthReadBackAsWritten(count: Int) throws {
    let ids: [UInt64] = (0..<count).map { (index: Int) -> UInt64 in
      let root = UInt32(1 + index % 3)
      let sequence = UInt64(1_000 + 37 * index)
      return ObjectIDs.make(root: root, sequence: sequence)
    }
    for targets in [LinkTargets(ids), LinkTargets(ids.reversed())] {
      var writer = BinaryWriter()
      writer.write(compactIDs: targets)
      writer.write(compactIDs: Array(targets))
      var reader = BinaryReader(writer.bytes)
      #expect(try reader.readCompactIDs() == Array(targets))
      #expect(try reader.readCompactIDs() == Array(targets))
      #expect(reader.isAtEnd)
    }
    if let only = ids.first, count == 1 {
      var writer = BinaryWriter()
      writer.write(compactIDs: LinkTargets([only]))
      #expect(writer.bytes == [1, 1, 0xE8, 0x07])
    }
  }
}
