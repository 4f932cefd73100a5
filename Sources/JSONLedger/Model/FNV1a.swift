/// The 64-bit FNV-1a hash, for the open-addressing tables that look up names and identities
/// on every object (`NameTable`, `IdentityTable`): a multiply and an xor per byte, where a
/// `Dictionary`'s SipHash costs several times that for short keys.
enum FNV1a {
  /// The hash of `bytes`, with its high half folded into the low one: tables pick buckets by
  /// the low bits, and may keep the high half (unchanged by the fold) to tell keys apart.
  static func hash(_ bytes: Span<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for index in bytes.indices { hash = (hash ^ UInt64(bytes[index])) &* 0x100_0000_01B3 }
    return hash ^ (hash &>> 32)
  }
}
