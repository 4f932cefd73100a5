import Testing

@testable import JSONLedger

@Suite("The resolver's identity table")
struct IdentityTableTests {
  private func key(_ root: UInt32, _ values: [AttributeValue]) -> [UInt8] {
    var bytes: [UInt8] = []
    OrderedEncoding.encodeIdentity(root: root, values, into: &bytes)
    return bytes
  }

  @Test func findsEveryIdentityAcrossGrowth() throws {
    var table = IdentityTable()
    var expected: [[UInt8]: (id: UInt64, isNew: Bool, payloadFingerprint: UInt64)] = [:]
    for index in 0..<5_000 {
      // Strings, integers and two-part identities, some long enough to span several words.
      let values: [AttributeValue] =
        switch index % 3 {
        case 0: [.string("album \(index)")]
        case 1: [.integer(Int64(index) - 2_500)]
        default: [.string(String(repeating: "x", count: index % 40)), .integer(Int64(index))]
        }
      let encoded = key(UInt32(index % 4 + 1), values)
      #expect(table.entry(forKey: encoded) == nil)
      try table.set(UInt64(index + 1), forKey: encoded, isNew: index % 2 == 0, payloadFingerprint: UInt64(index * 7))
      expected[encoded] = (UInt64(index + 1), index % 2 == 0, UInt64(index * 7))
    }
    for (encoded, wanted) in expected { #expect(table.entry(forKey: encoded)! == wanted) }
    #expect(table.entry(forKey: key(1, [.string("album 5_000")])) == nil)
  }

  /// A key filed where its lookup found it would go is found like any other, across growth;
  /// a miss gone stale (another key filed since, or the buckets rebuilt) is searched again,
  /// so no key is filed twice and none lands on another's bucket.
  @Test func aKeyFiledWhereItsLookupMissedIsFoundAndAStaleMissIsSearchedAgain() throws {
    var table = IdentityTable()
    for index in 0..<3_000 {
      let encoded = key(1, [.integer(Int64(index))])
      let (entry, miss) = table.lookUp(encoded)
      #expect(entry == nil && miss != nil)
      try table.set(UInt64(index + 1), forKey: encoded, isNew: true, at: miss)
    }
    let first = key(2, [.string("first")])
    let second = key(2, [.string("second")])
    let staleByEntry = table.lookUp(first).miss
    // The same key filed twice under one miss: the second sees the first and updates it.
    try table.set(10_001, forKey: first, isNew: true, at: staleByEntry)
    try table.set(10_002, forKey: first, isNew: false, at: staleByEntry)
    let staleByRebuild = table.lookUp(second).miss
    table.reserveCapacity(100_000)
    try table.set(10_003, forKey: second, isNew: true, at: staleByRebuild)
    for index in 0..<3_000 { #expect(table.entry(forKey: key(1, [.integer(Int64(index))]))?.id == UInt64(index + 1)) }
    #expect(table.entry(forKey: first)! == (10_002, false, 0))
    #expect(table.entry(forKey: second)?.id == 10_003)
    #expect(table.newIDs(root: 2) == [10_003])
  }

  @Test func keysThatArePrefixesOfOthersStayApart() throws {
    var table = IdentityTable()
    let short = [UInt8](repeating: 7, count: 8)
    let long = short + [0]
    try table.set(1, forKey: short, isNew: false)
    try table.set(2, forKey: long, isNew: false)
    #expect(table.entry(forKey: short)?.id == 1)
    #expect(table.entry(forKey: long)?.id == 2)
    #expect(table.entry(forKey: Array(short.dropLast())) == nil)
  }

  /// A bucket keeps its key's hash to tell keys apart without reading their entries: two keys
  /// with the same hash are still told apart by their bytes.
  @Test func keysWithTheSameHashStayApart() throws {
    var seen: [UInt32: [UInt8]] = [:]
    var pair: ([UInt8], [UInt8])?
    for index in 0..<1_000_000 {
      let encoded = key(1, [.integer(Int64(index))])
      let hash = IdentityTable.hash(encoded)
      if let other = seen[hash] {
        pair = (other, encoded)
        break
      }
      seen[hash] = encoded
    }
    let (first, second) = try #require(pair)
    var table = IdentityTable()
    try table.set(1, forKey: first, isNew: true)
    #expect(table.entry(forKey: second) == nil)
    try table.set(2, forKey: second, isNew: false)
    #expect(table.entry(forKey: first)?.id == 1)
    #expect(table.entry(forKey: second)?.id == 2)
    for index in 3...40 as ClosedRange<UInt64> {
      try table.set(index, forKey: key(2, [.integer(Int64(index))]), isNew: true)
    }
    #expect(table.entry(forKey: first)?.id == 1)
    #expect(table.entry(forKey: second)?.id == 2)
  }

  @Test func settingAKeyAgainReplacesItsEntry() throws {
    var table = IdentityTable()
    let encoded = key(3, [.string("band 1")])
    try table.set(10, forKey: encoded, isNew: false, payloadFingerprint: 99)
    try table.set(10, forKey: encoded, isNew: true)
    #expect(table.entry(forKey: encoded)! == (10, true, 0))
    #expect(table.newIDs(root: 3) == [10])
  }

  @Test func newIDsAreThoseCreatedUnderTheRoot() throws {
    var table = IdentityTable()
    table.reserveCapacity(100)
    try table.set(1, forKey: key(1, [.string("a")]), isNew: true)
    try table.set(2, forKey: key(1, [.string("b")]), isNew: false)
    try table.set(3, forKey: key(2, [.string("a")]), isNew: true)
    try table.set(4, forKey: key(1, [.string("c")]), isNew: true)
    #expect(table.newIDs(root: 1) == [1, 4])
    #expect(table.newIDs(root: 2) == [3])
    #expect(table.newIDs(root: 9) == [])
  }

  /// A key's bytes start where the entry before's end: setting an earlier key again (in
  /// place, no bytes added) leaves every later key where it was.
  @Test func keysSetAgainLeaveTheKeysAfterThemInPlace() throws {
    var table = IdentityTable()
    let keys = (0..<40).map { key(1, [.string(String(repeating: "k", count: $0))]) }
    for (index, encoded) in keys.enumerated() { try table.set(UInt64(index), forKey: encoded, isNew: true) }
    for index in stride(from: 0, to: 40, by: 3) {
      try table.set(UInt64(100 + index), forKey: keys[index], isNew: false)
    }
    for (index, encoded) in keys.enumerated() {
      #expect(table.entry(forKey: encoded)?.id == UInt64(index % 3 == 0 ? 100 + index : index))
    }
    #expect(IdentityTable.entryStride == 24)
  }

  /// Fingerprints are held apart from the entries, and only once one is not 0: entries set
  /// before and after the first keep theirs, and setting a key again replaces its own.
  @Test func fingerprintsArriveAfterEntriesWithoutOne() throws {
    var table = IdentityTable()
    let keys = (0..<300).map { key(2, [.integer(Int64($0))]) }
    for index in 0..<100 { try table.set(UInt64(index), forKey: keys[index], isNew: true) }
    // The first fingerprint lands on an entry in the middle, then one on a new entry.
    try table.set(50, forKey: keys[50], isNew: false, payloadFingerprint: 7)
    try table.set(100, forKey: keys[100], isNew: false, payloadFingerprint: 5)
    for index in 101..<300 { try table.set(UInt64(index), forKey: keys[index], isNew: true) }
    try table.set(0, forKey: keys[0], isNew: false, payloadFingerprint: 9)
    try table.set(100, forKey: keys[100], isNew: true)
    for (index, encoded) in keys.enumerated() {
      let fingerprint: UInt64 = index == 0 ? 9 : index == 50 ? 7 : 0
      #expect(table.entry(forKey: encoded)! == (UInt64(index), index != 0 && index != 50, fingerprint))
    }
  }
}
