import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Record checksums")
struct ChecksumTests {
  /// The textbook bit-by-bit CRC-32, to compare against.
  private func reference(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }
    return crc ^ 0xFFFF_FFFF
  }

  @Test func checkValueOfTheIEEEPolynomial() {
    #expect(Checksum.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    #expect(Checksum.crc32([]) == 0)
  }

  @Test func matchesTheBitwiseDefinitionAtEveryLengthAndOffset() {
    var generator = SeededGenerator(seed: 3)
    let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
    for length in 0..<40 {
      #expect(Checksum.crc32(Array(bytes.prefix(length))) == reference(Array(bytes.prefix(length))))
    }
    for start in 0..<9 {
      let slice = bytes[start..<(start + 250)]
      #expect(Checksum.crc32(slice) == reference(Array(slice)))
    }
  }
}
