/// A record's bytes as `RecordCoding.encodeInParts` writes them: parts of about a megabyte,
/// the checksum taken as they come. The log takes a large record part by part, straight into
/// the room LMDB makes for it (`put(reserving:…)`), each part let go once it is copied: the
/// record is never held twice, which at the end of a large batch is when its memory peaks.
struct EncodedRecord {
  /// About how many bytes a part holds (one change more at most).
  static let partSize = 1 << 20

  private(set) var parts: [[UInt8]] = []
  /// The bytes in all the parts.
  private(set) var count = 0
  /// The CRC-32 of every part so far.
  private var checksum: UInt32 = 0

  init() {}

  /// A record encoded elsewhere (its checksum included), as one part.
  init(encoded bytes: [UInt8]) {
    parts = [bytes]
    count = bytes.count
  }

  /// Appends a part that is not the last.
  mutating func append(_ part: [UInt8]) {
    checksum = Checksum.crc32(part[...], continuing: checksum)
    count += part.count
    parts.append(part)
  }

  /// The CRC-32 of every byte of the parts so far followed by those of `last`: what the
  /// last part ends with.
  func checksum(endingWith last: [UInt8]) -> UInt32 { Checksum.crc32(last[...], continuing: checksum) }

  /// Appends the last part, its checksum written at its end.
  mutating func appendLast(_ part: [UInt8]) {
    count += part.count
    parts.append(part)
  }

  /// The bytes in one array: the one part, or the parts copied together.
  var joined: [UInt8] {
    if parts.count == 1 { return parts[0] }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    for part in parts { bytes += part }
    return bytes
  }

  /// Copies the bytes into `buffer`, which holds `count` of them, letting each part go once
  /// it is copied.
  mutating func drain(into buffer: UnsafeMutableRawBufferPointer) {
    precondition(buffer.count == count, "room for every byte of the record")
    var offset = 0
    for index in parts.indices {
      parts[index].withUnsafeBytes { part in
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + part.count)]).copyMemory(from: part)
        offset += part.count
      }
      parts[index] = []
    }
    parts = []
    count = 0
  }
}
