/// The 64-bit FNV-1a hash: a multiply and an xor per byte, where a `Dictionary`'s SipHash
/// costs several times that for short keys. The one hash of the hand-rolled tables
/// (`NameTable`, `IdentityTable`), of long identity keys in the store and of payload
/// fingerprints.
public struct FNV1a: Sendable {
  /// The state so far (the offset basis before anything is fed).
  public var value: UInt64 = 0xCBF2_9CE4_8422_2325

  @inlinable
  public init() {}

  /// Feeds one byte.
  @inlinable
  public mutating func combine(_ byte: UInt8) {
    value = (value ^ UInt64(byte)) &* 0x100_0000_01B3
  }

  /// Feeds the bytes of a span.
  @inlinable
  public mutating func combine(_ bytes: Span<UInt8>) {
    for index in bytes.indices { combine(bytes[index]) }
  }

  /// Feeds a whole word in one step (not FNV-1a proper: one multiply by a 64-bit odd
  /// constant, then a shift that carries the word's high bits into later steps).
  @inlinable
  public mutating func combine(word: UInt64) {
    value = (value ^ word) &* 0x9E37_79B9_7F4A_7C15
    value ^= value &>> 29
  }

  /// The state with its high half folded into the low one: tables pick buckets by the low
  /// bits, and may keep the high half (unchanged by the fold) to tell keys apart.
  @inlinable public var folded: UInt64 { value ^ (value &>> 32) }

  /// The folded hash of `bytes`.
  @inlinable
  public static func hash(_ bytes: Span<UInt8>) -> UInt64 {
    var hasher = FNV1a()
    hasher.combine(bytes)
    return hasher.folded
  }
}
