import Foundation
import JSONLedgerSupport

/// Appends values in the store's binary encoding: LEB128 varints, length-prefixed strings,
/// tagged attribute and JSON values. The same value always gives the same bytes (dictionaries
/// are written in sorted key order), which is what makes replayed projections byte-identical.
struct BinaryWriter {
  private(set) var bytes: [UInt8] = []

  init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

  /// Swaps the bytes written for `other`'s: the bytes handed on without a copy, and `other`'s
  /// memory kept for the next use.
  mutating func exchangeBytes(with other: inout [UInt8]) { swap(&bytes, &other) }

  /// Takes back the last `count` bytes written.
  mutating func removeLast(_ count: Int) { bytes.removeLast(count) }

  /// Writes `value` as a varint over the bytes in `range` (a varint written before), moving the
  /// bytes after it when its length differs.
  mutating func replaceVarint(in range: Range<Int>, with value: UInt64) {
    var encoded: [UInt8] = []
    encoded.appendVarint(value)
    bytes.replaceSubrange(range, with: encoded)
  }

  /// Empties the writer for reuse, keeping its memory.
  mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

  mutating func write(_ byte: UInt8) { bytes.append(byte) }

  mutating func write(varint value: UInt64) { bytes.appendVarint(value) }

  mutating func write(signed value: Int64) {
    write(varint: ZigZag.encode(value))
  }

  mutating func write<Integer: FixedWidthInteger & UnsignedInteger>(bigEndian value: Integer) {
    bytes.appendBigEndian(value)
  }

  mutating func write(_ string: String) {
    // The length and the bytes from one look at the string's UTF-8.
    string.utf8.span.withUnsafeBufferPointer { utf8 in
      bytes.appendVarint(UInt64(utf8.count))
      bytes.append(contentsOf: utf8)
    }
  }

  mutating func write(optional string: String?) {
    if let string {
      write(1)
      write(string)
    } else {
      write(0)
    }
  }

  /// Appends bytes already in this encoding, without a length.
  mutating func append(encoded data: [UInt8]) { bytes.append(contentsOf: data) }

  /// Appends part of bytes already in this encoding, without a length.
  mutating func append(encoded data: ArraySlice<UInt8>) { bytes.append(contentsOf: data) }

  /// Appends `range` of `source`, bytes already in this encoding, without a length.
  mutating func append<Bytes: ByteSource>(encoded source: Bytes, _ range: Range<Int>) {
    source.append(range, to: &bytes)
  }

  mutating func write(bytes data: some Collection<UInt8>) {
    write(varint: UInt64(data.count))
    bytes.append(contentsOf: data)
  }

  mutating func write(_ value: AttributeValue) {
    switch value {
    case .string(let text):
      write(1)
      write(text)
    case .integer(let number):
      write(2)
      write(signed: number)
    case .double(let number):
      write(3)
      write(bigEndian: number.bitPattern)
    case .float(let number):
      write(4)
      write(bigEndian: number.bitPattern)
    case .decimal(let number):
      write(5)
      write("\(number)")
    case .bool(let flag):
      write(flag ? 7 : 6)
    case .date(let date):
      let microseconds = DateCoding.microseconds(date)
      if microseconds % 1_000_000 == 0 {
        // Whole seconds, the common case, in fewer bytes.
        write(13)
        write(signed: microseconds / 1_000_000)
      } else {
        write(8)
        write(signed: microseconds)
      }
    case .uuid(let uuid):
      write(9)
      bytes += uuid.bytes
    case .url(let url):
      write(10)
      write(url.absoluteString)
    case .binary(let data):
      write(11)
      write(bytes: data)
    case .json(let json):
      write(12)
      write(json: json)
    }
  }

  /// `value`, or, when it equals one of `identity`, a reference to it (tag 14 and its
  /// position): an object's identity attributes are not written twice.
  mutating func write(_ value: AttributeValue, identity: [AttributeValue]) {
    if !identity.isEmpty, let position = Self.position(of: value, in: identity) {
      write(14)
      write(varint: UInt64(position))
    } else {
      write(value)
    }
  }

  /// `identity.firstIndex(of: value)`, with a value compared only to values of its own case:
  /// most values are not an identity value, and are told apart without the general
  /// comparison (which copies both values to match them as a pair). Strings compare their
  /// bytes, lengths first (`sameBytes`).
  private static func position(of value: AttributeValue, in identity: [AttributeValue]) -> Int? {
    switch value {
    case .string(let text):
      return identity.firstIndex { candidate in
        guard case .string(let other) = candidate else { return false }
        return AttributeValue.sameBytes(text, other)
      }
    case .integer(let number):
      return identity.firstIndex { candidate in
        guard case .integer(let other) = candidate else { return false }
        return number == other
      }
    case .date(let date):
      return identity.firstIndex { candidate in
        guard case .date(let other) = candidate else { return false }
        return date == other
      }
    default:
      return identity.firstIndex(of: value)
    }
  }

  mutating func write(optional value: AttributeValue?) {
    if let value { write(value) } else { write(0) }
  }

  mutating func write(json: JSONValue) {
    switch json {
    case .null: write(0)
    case .bool(let flag): write(flag ? 2 : 1)
    case .number(let number):
      write(3)
      write(number.literal)
    case .string(let text):
      write(4)
      write(text)
    case .array(let elements):
      write(5)
      write(varint: UInt64(elements.count))
      for element in elements { write(json: element) }
    case .object(let object):
      write(6)
      write(varint: UInt64(object.count))
      for member in object {
        write(member.key)
        write(json: member.value)
      }
    }
  }

  /// Object ids in any order: their count, the first as its root entity and sequence number
  /// (`ObjectIDs`), each other as the zigzag difference from the one before. Ids of one
  /// entity, stored near each other, take a byte or two each.
  mutating func write(compactIDs ids: some Collection<UInt64>) {
    let count = ids.count
    write(varint: UInt64(count))
    guard let first = ids.first else { return }
    write(varint: UInt64(ObjectIDs.root(of: first)))
    write(varint: ObjectIDs.sequence(of: first))
    if count >= ByteReader<[UInt8]>.longListIDs,
      ids.withContiguousStorageIfAvailable({ writeDifferences(of: $0) }) != nil
    {
      return
    }
    // The others by index: no slice (`dropFirst` copies the collection into one for each
    // list) and no iterator (a `LinkTargets` one holds an empty array beside its one id).
    var previous = first
    var index = ids.index(after: ids.startIndex)
    while index != ids.endIndex {
      let id = ids[index]
      write(signed: Int64(bitPattern: id &- previous))
      previous = id
      ids.formIndex(after: &index)
    }
  }

  /// The ids after the first of a long list, as `write(compactIDs:)` writes them: into the
  /// room of the bytes, asked for once (ten bytes an id at most), where appending each byte
  /// checked the array's uniqueness and room (twice the instructions). `ids` is a list's own
  /// storage, lent for the call, and read only at indices below its count.
  @inline(never)
  private mutating func writeDifferences(of ids: UnsafeBufferPointer<UInt64>) {
    bytes.append(addingCapacity: (ids.count - 1) * 10) { (bytes: inout OutputSpan<UInt8>) in
      for index in 1..<ids.count {
        var zigzag = ZigZag.encode(Int64(bitPattern: ids[index] &- ids[index - 1]))
        while zigzag >= 0x80 {
          bytes.append(UInt8(truncatingIfNeeded: zigzag) | 0x80)
          zigzag >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: zigzag))
      }
    }
  }

}
