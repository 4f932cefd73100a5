import PropertyBased
import Testing

@testable import JSONLedger

/// Link lists as the store keeps them (`write(compactIDs:)`): short lists are appended id by
/// id, long ones written and read in one pass over the array's room. Both read back what was
/// written, and bytes cut short are an error, never a trap.
@Suite("Link lists in their compact form")
struct CompactIDsTests {
  /// Ids of a few roots, in any order: differences up and down, of one byte to five.
  static func ids(_ picks: [Int]) -> [UInt64] {
    picks.map { ObjectIDs.make(root: UInt32($0 % 5), sequence: UInt64($0 / 5)) }
  }

  @Test func listsOfEveryLengthReadBackAsWrittenAndAreSkippedWhole() async {
    let lengths = ByteReader<[UInt8]>.longListIDs
    await propertyCheck(count: 300, input: Gen.int(in: 0...Int(UInt32.max)).array(of: 0...(lengths * 5))) { picks in
      let ids = Self.ids(picks)
      // An array, and the list type states hold (one id inline, more in an array).
      var writer = BinaryWriter()
      writer.write(7)
      writer.write(compactIDs: ids)
      writer.write(compactIDs: LinkTargets(ids))
      writer.write(9)
      var reader = BinaryReader(writer.bytes)
      #expect(try reader.readByte() == 7)
      #expect(try reader.readCompactIDs() == ids)
      #expect(try reader.readCompactIDs() == ids)
      #expect(try reader.readByte() == 9)
      #expect(reader.isAtEnd)
      var skipping = BinaryReader(writer.bytes)
      _ = try skipping.readByte()
      try skipping.skipCompactIDs()
      try skipping.skipCompactIDs()
      #expect(try skipping.readByte() == 9)
    }
  }

  @Test func aLongListCutShortOrCountingMoreIdsThanItHoldsIsAnError() throws {
    // Differences of every width up to five bytes, and a list long enough to be read whole.
    let ids = Self.ids((0..<(ByteReader<[UInt8]>.longListIDs + 20)).map { $0 * 47_654_321 % Int(UInt32.max) })
    #expect(ids.count > ByteReader<[UInt8]>.longListIDs)
    var writer = BinaryWriter()
    writer.write(compactIDs: ids)
    for end in 0..<writer.bytes.count {
      var reader = BinaryReader(Array(writer.bytes[..<end]))
      #expect(throws: DecodingFailure.self) { try reader.readCompactIDs() }
    }
    // A count past the bytes that follow it (yet small enough that only the list's own check
    // can tell): refused before any room is asked for it.
    var inflated = BinaryWriter()
    inflated.write(varint: 1 << 19)
    inflated.append(encoded: Array(writer.bytes.dropFirst()))
    var reader = BinaryReader(inflated.bytes)
    #expect(throws: DecodingFailure.self) { try reader.readCompactIDs() }
  }
}
