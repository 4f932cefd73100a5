/// The zigzag form of signed numbers (0, −1, 1, −2, … as 0, 1, 2, 3, …), so that a small
/// difference of either sign is a one-byte varint: `BinaryWriter` writes it, `ByteReader`
/// reads it.
enum ZigZag {
  @inline(__always)
  static func encode(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

  @inline(__always)
  static func decode(_ raw: UInt64) -> Int64 { Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))) }
}
