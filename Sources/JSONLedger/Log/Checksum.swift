/// CRC-32 (IEEE, the zlib polynomial) over a record's bytes.
enum Checksum {
  /// Eight tables of 256 entries, back to back: table 0 is the classic byte-at-a-time table;
  /// table k gives the effect of a byte followed by k zero bytes, so that eight bytes are
  /// folded in with eight lookups and no dependency between them ("slicing by 8").
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var value = UInt32(index)
      for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
      tables[index] = value
    }
    for table in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(table - 1) * 256 + index]
        tables[table * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
      }
    }
    return tables
  }()

  static func crc32(_ bytes: [UInt8]) -> UInt32 { crc32(bytes.span, continuing: 0) }

  static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 { crc32(bytes.span, continuing: 0) }

  /// The CRC-32 of the bytes summed into `previous` followed by `bytes`: a checksum taken
  /// piece by piece over a stream equals the one over the whole.
  static func crc32(_ bytes: ArraySlice<UInt8>, continuing previous: UInt32) -> UInt32 {
    crc32(bytes.span, continuing: previous)
  }

  static func crc32(_ bytes: Span<UInt8>, continuing previous: UInt32 = 0) -> UInt32 {
    let tables = Self.tables
    func entry(_ table: Int, _ index: UInt32) -> UInt32 { tables[table &* 256 &+ Int(index & 0xFF)] }
    var crc: UInt32 = previous ^ 0xFFFF_FFFF
    var position = 0
    while position &+ 8 <= bytes.count {
      let low =
        (UInt32(bytes[position]) | UInt32(bytes[position &+ 1]) &<< 8 | UInt32(bytes[position &+ 2]) &<< 16 | UInt32(
          bytes[position &+ 3]) &<< 24) ^ crc
      let high =
        UInt32(bytes[position &+ 4]) | UInt32(bytes[position &+ 5]) &<< 8 | UInt32(bytes[position &+ 6]) &<< 16
        | UInt32(bytes[position &+ 7]) &<< 24
      crc =
        entry(7, low) ^ entry(6, low &>> 8) ^ entry(5, low &>> 16) ^ entry(4, low &>> 24)
        ^ entry(3, high) ^ entry(2, high &>> 8) ^ entry(1, high &>> 16) ^ entry(0, high &>> 24)
      position &+= 8
    }
    while position < bytes.count {
      crc = entry(0, crc ^ UInt32(bytes[position])) ^ (crc &>> 8)
      position &+= 1
    }
    return crc ^ 0xFFFF_FFFF
  }
}
