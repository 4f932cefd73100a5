import Foundation
import JSONLedgerTestSupport
import Testing

@testable import LMDB

@Suite("LMDB environment")
struct EnvironmentTests {
  @Test func writtenValueIsReadBackAfterCommit() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    try env.write { txn in try txn.put([1, 2, 3], forKey: Array("a".utf8), in: db) }
    let value = try env.read { txn in try txn.value(forKey: Array("a".utf8), in: db) }
    #expect(value == [1, 2, 3])
  }

  /// A key written on the stack finds what the same key as an array finds: a value read in
  /// place, its big-endian number read whole, and nothing for a key that is absent or shorter.
  @Test func aKeyWrittenOnTheStackFindsTheValueItsArrayFinds() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    let key: [UInt8] = [0, 0, 0, 7, 1, 0x61, 0x62, 0, 1]
    let number: UInt64 = 0x0102_0304_0506_0708
    let value = [0xFF] + withUnsafeBytes(of: number.bigEndian, Array.init)
    try env.write { txn in try txn.put(value, forKey: key, in: db) }
    func lookUp(_ key: [UInt8], room: Int, in txn: Transaction) throws -> (Int, UInt64?)? {
      try txn.withBorrowedValue(
        forKeyOfAtMost: room, writtenBy: { span in for byte in key { span.append(byte) } }, in: db,
        { value in (value.count, value.count >= 9 ? value.bigEndianUInt64(at: 1) : nil) })
    }
    let (found, absent, shorter) = try env.read { txn in
      (
        try lookUp(key, room: 16, in: txn), try lookUp([9], room: 1, in: txn),
        try lookUp(key.dropLast(), room: 16, in: txn)
      )
    }
    #expect(found?.0 == 9)
    #expect(found?.1 == number)
    #expect(absent == nil)
    #expect(shorter == nil)
  }

  /// Values replaced where the cursor stands, some growing past a page (entries move, pages
  /// split), some shrinking, some kept: every entry of the prefix is visited once and holds
  /// its replacement; the entries around the prefix are untouched.
  @Test func replacingEachValueUnderAPrefixVisitsEveryEntryOnceAndTouchesNoOther() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    func key(_ prefix: UInt8, _ index: Int) -> [UInt8] { [prefix, UInt8(index >> 8), UInt8(index & 0xFF)] }
    // Some values larger than a page (LMDB keeps them on overflow pages of their own).
    func original(_ prefix: UInt8, _ index: Int) -> [UInt8] {
      Array(repeating: prefix, count: index % 11 == 0 ? 6_000 : 40)
    }
    try env.write { txn in
      for prefix: UInt8 in [1, 2, 3] {
        for index in 0..<600 { try txn.put(original(prefix, index), forKey: key(prefix, index), in: db) }
      }
    }
    func replacement(_ index: Int) -> [UInt8]? {
      switch index % 3 {
      case 0: Array(repeating: 9, count: index % 7 == 0 ? 9_000 : 300 + index % 50)
      case 1: [7]
      default: nil
      }
    }
    var visited: [Int] = []
    try env.write { txn in
      try txn.replaceEach(in: db, prefix: [2]) { key, value, buffer in
        let index = Int(key[1]) << 8 | Int(key[2])
        #expect(value.count == original(2, index).count)
        visited.append(index)
        guard let bytes = replacement(index) else { return false }
        buffer = bytes
        return true
      }
    }
    #expect(visited == Array(0..<600))
    let entries = try env.read { txn in try txn.entries(in: db, prefix: []) }
    #expect(entries.count == 1_800)
    for entry in entries {
      let index = Int(entry.key[1]) << 8 | Int(entry.key[2])
      let kept = original(entry.key[0], index)
      #expect(entry.value == (entry.key[0] == 2 ? replacement(index) ?? kept : kept), "\(entry.key)")
    }
  }

  /// A read-only environment reads what was committed and refuses every write, saying why.
  @Test func aReadOnlyEnvironmentReadsAndRefusesWrites() throws {
    let dir = try TemporaryDirectory()
    do {
      let env = try Environment(path: dir.path)
      let db = try env.database(named: "things")
      try env.write { txn in try txn.put([1], forKey: [1], in: db) }
    }
    var options = Environment.Options()
    options.readOnly = true
    let env = try Environment(path: dir.path, options: options)
    let db = try env.database(named: "things")
    #expect(try env.read { txn in try txn.value(forKey: [1], in: db) } == [1])
    let write = #expect(throws: LMDBError.self) { try env.write { txn in try txn.put([2], forKey: [2], in: db) } }
    #expect(write?.isReadOnly == true)
    #expect(write?.operation.contains(dir.path) == true)
    let reserve = #expect(throws: LMDBError.self) { try env.reserve(freeBytes: 1 << 20) }
    #expect(reserve?.isReadOnly == true)
  }

  /// A commit that leaves its meta page unflushed does so alone: writes from several threads,
  /// some of each kind, leave the environment flushing as its durability says, and one
  /// opened without the meta flush stays without it.
  @Test func aCommitWithoutTheMetaFlushLeavesTheEnvironmentsDurabilityAsItWas() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    #expect(env.commitsFlushMeta)
    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      for round in 0..<25 {
        let key = [UInt8(thread), UInt8(round)]
        try? env.write(flushingMeta: round % 2 == 0) { txn in try txn.put(key, forKey: key, in: db) }
      }
    }
    #expect(env.commitsFlushMeta)
    #expect(try env.read { txn in try txn.value(forKey: [3, 24], in: db) } == [3, 24])
    var options = Environment.Options()
    options.durability = .noMetaSync
    let otherDirectory = try TemporaryDirectory()
    let other = try Environment(path: otherDirectory.path, options: options)
    let things = try other.database(named: "things")
    try other.write(flushingMeta: true) { txn in try txn.put([1], forKey: [1], in: things) }
    try other.write(flushingMeta: false) { txn in try txn.put([2], forKey: [2], in: things) }
    #expect(!other.commitsFlushMeta)
  }

  @Test func throwingInsideWriteAbortsEverything() throws {
    struct Boom: Error {}
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    #expect(throws: Boom.self) {
      try env.write { txn in
        try txn.put([1], forKey: [1], in: db)
        throw Boom()
      }
    }
    #expect(try env.read { txn in try txn.value(forKey: [1], in: db) } == nil)
  }

  /// A nested transaction sees what its parent wrote; one that throws is undone alone, and
  /// the parent goes on and commits the others.
  @Test func aNestedTransactionThatThrowsIsUndoneAloneAndItsParentCommitsTheRest() throws {
    struct Boom: Error {}
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    try env.write { txn in
      try txn.put([1], forKey: [1], in: db)
      try txn.nested { child in
        #expect(try child.value(forKey: [1], in: db) == [1])
        try child.put([2], forKey: [2], in: db)
      }
      #expect(throws: Boom.self) {
        try txn.nested { child in
          try child.put([3], forKey: [3], in: db)
          try child.put([9], forKey: [1], in: db)
          throw Boom()
        }
      }
      #expect(try txn.value(forKey: [1], in: db) == [1])
      #expect(try txn.value(forKey: [3], in: db) == nil)
      try txn.nested { child in try child.put([4], forKey: [4], in: db) }
    }
    let values = try env.read { txn in try [1, 2, 3, 4].map { try txn.value(forKey: [$0], in: db) } }
    #expect(values == [[1], [2], nil, [4]])
  }

  /// A nested transaction that fills the map is undone alone; its parent, even when it went
  /// on and returned, runs again whole once the map grew.
  @Test func aNestedTransactionThatFillsTheMapRunsItsParentAgain() throws {
    let dir = try TemporaryDirectory()
    let (env, db) = try Self.oneMegabyteMap(in: dir)
    var runs = 0
    try env.write { txn in
      runs += 1
      try txn.put([1], forKey: [0, 0, 0, 0, 1], in: db)
      // The error is swallowed, as a group's write that fails alone is.
      _ = try? txn.nested { child in try Self.putEightMegabytes(child, db) }
    }
    #expect(runs == 2)
    #expect(env.writesRunAgain == 1)
    #expect(try env.read { txn in try txn.statistics(of: db).entries } == 2001)
  }

  /// A step that tells another system what the transaction holds runs only in the run that
  /// commits: after a nested transaction met a full map, the check before it stops the run.
  @Test func aStepAfterANestedTransactionThatFilledTheMapRunsOnlyOnceThereIsRoom() throws {
    let dir = try TemporaryDirectory()
    let (env, db) = try Self.oneMegabyteMap(in: dir)
    var (runs, told) = (0, 0)
    try env.write { txn in
      runs += 1
      _ = try? txn.nested { child in try Self.putEightMegabytes(child, db) }
      try txn.checkMapWasNeverFull()
      told += 1
    }
    #expect(runs == 2)
    #expect(told == 1)
    #expect(try env.read { txn in try txn.statistics(of: db).entries } == 2000)
  }

  /// A value written into the room a put reserves is the value stored, appended or not.
  @Test func aValueWrittenIntoReservedRoomIsStored() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "log")
    // One small value, one spanning many pages.
    let values: [[UInt8]] = [[7, 8, 9], (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 31) }]
    try env.write { txn in
      for (index, value) in values.enumerated() {
        try txn.put(reserving: value.count, forKey: [0, UInt8(index)], in: db, flags: .append) { room in
          room.copyBytes(from: value)
        }
      }
    }
    for (index, value) in values.enumerated() {
      #expect(try env.read { txn in try txn.value(forKey: [0, UInt8(index)], in: db) } == value)
    }
  }

  @Test func appendOutOfOrderFailsWithKeyExists() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "log")
    try env.write { txn in
      try txn.put([1], forKey: [0, 0, 0, 2], in: db, flags: .append)
      try txn.put([1], forKey: [0, 0, 0, 3], in: db, flags: .append)
    }
    do {
      try env.write { txn in try txn.put([1], forKey: [0, 0, 0, 1], in: db, flags: .append) }
      Issue.record("append out of order was accepted")
    } catch let error as LMDBError {
      #expect(error.isKeyExists)
      #expect(error.description.contains("log"))
    }
  }

  @Test func bigEndianKeysSortNumerically() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "log")
    let numbers: [UInt64] = [300, 2, 70_000, 1, 256]
    try env.write { txn in
      for n in numbers { try txn.put([], forKey: withUnsafeBytes(of: n.bigEndian, Array.init), in: db) }
    }
    let keys = try env.read { txn in try txn.entries(in: db, prefix: []) }.map { entry in
      entry.key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
    #expect(keys == numbers.sorted())
  }

  /// An environment whose map starts at 1 MB, and a database in it.
  static func oneMegabyteMap(in dir: TemporaryDirectory) throws -> (Environment, Database) {
    var options = Environment.Options()
    options.mapSize = 1 << 20
    let env = try Environment(path: dir.path, options: options)
    return (env, try env.database(named: "big"))
  }

  /// 2,000 values of 4 KB under the keys 0…1999 (four bytes, big-endian): more than a 1 MB
  /// map holds.
  static func putEightMegabytes(_ txn: Transaction, _ db: Database) throws {
    let value = [UInt8](repeating: 7, count: 4096)
    for i in 0..<2000 { try txn.put(value, forKey: withUnsafeBytes(of: UInt32(i).bigEndian, Array.init), in: db) }
  }

  @Test func fullMapGrowsAndTheWriteIsRetried() throws {
    let dir = try TemporaryDirectory()
    let (env, db) = try Self.oneMegabyteMap(in: dir)
    var runs = 0
    try env.write { txn in
      runs += 1
      try Self.putEightMegabytes(txn, db)
    }
    #expect(runs > 1)
    #expect(try env.info().mapSize > 1 << 20)
    #expect(try env.read { txn in try txn.statistics(of: db).entries } == 2000)
  }

  @Test func reservingRoomFirstLetsALargeWriteRunOnce() throws {
    let dir = try TemporaryDirectory()
    let (env, db) = try Self.oneMegabyteMap(in: dir)
    try env.reserve(freeBytes: 32 << 20)
    #expect(try env.info().mapSize >= 32 << 20)
    var runs = 0
    try env.write { txn in
      runs += 1
      for i in 0..<2000 {
        try txn.put(
          [UInt8](repeating: 1, count: 4096), forKey: withUnsafeBytes(of: UInt32(i).bigEndian, Array.init), in: db)
      }
    }
    #expect(runs == 1)
    let before = try env.info().mapSize
    try env.reserve(freeBytes: 1 << 20)  // already enough room: no change
    #expect(try env.info().mapSize == before)
  }

  @Test func cursorPrefixScanAndLastEntryAtOrBefore() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "history")
    try env.write { txn in
      for (object, batch) in [(1, 1), (1, 4), (1, 9), (2, 3)] as [(UInt8, UInt8)] {
        try txn.put([batch], forKey: [object, batch], in: db)
      }
    }
    try env.read { txn throws in
      #expect(try txn.entries(in: db, prefix: [1]).map(\.value) == [[1], [4], [9]])
      #expect(try txn.lastEntry(in: db, prefix: [1], atOrBefore: [1, 5])?.value == [4])
      #expect(try txn.lastEntry(in: db, prefix: [1], atOrBefore: [1, 9])?.value == [9])
      #expect(try txn.lastEntry(in: db, prefix: [1], atOrBefore: [1, 0]) == nil)
      #expect(try txn.lastEntry(in: db, prefix: [2], atOrBefore: [2, 200])?.value == [3])
      #expect(try txn.lastEntry(in: db, prefix: [3], atOrBefore: [3, 1]) == nil)
      // In place: the same entries, and a false from the body stops the scan.
      var seen: [[UInt8]] = []
      try txn.forEachInPlace(in: db, prefix: [1]) { key, value in
        seen.append((0..<key.count).map { key[$0] } + (0..<value.count).map { value[$0] })
        return true
      }
      #expect(seen == [[1, 1, 1], [1, 4, 4], [1, 9, 9]])
      var visited = 0
      try txn.forEachInPlace(in: db, prefix: []) { _, _ in
        visited += 1
        return visited < 2
      }
      #expect(visited == 2)
      try txn.forEachInPlace(in: db, prefix: [3]) { _, _ in
        Issue.record("no entry starts with 3")
        return true
      }
    }
  }

  @Test func keysLongerThanTheLimitAreRejectedWithAnError() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    #expect(throws: LMDBError.self) {
      try env.write { txn in try txn.put([1], forKey: [UInt8](repeating: 1, count: 600), in: db) }
    }
  }

  @Test func newFilesAreOwnerOnly() throws {
    let dir = try TemporaryDirectory()
    _ = try Environment(path: dir.path)
    let attributes = try FileManager.default.attributesOfItem(atPath: dir.path + "/data.mdb")
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
  }

  @Test func readersSeeTheirSnapshotWhileAWriterCommits() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    try env.write { txn in try txn.put([1], forKey: [0], in: db) }
    try env.read { txn throws in
      try env.write { w in try w.put([2], forKey: [0], in: db) }
      #expect(try txn.value(forKey: [0], in: db) == [1])
    }
    #expect(try env.read { txn in try txn.value(forKey: [0], in: db) } == [2])
  }

  @Test func aDirectoryThatIsNotAnEnvironmentIsRefused() throws {
    let dir = try TemporaryDirectory()
    try Data("not lmdb at all, just some text that is long enough".utf8)
      .write(to: URL(fileURLWithPath: dir.path + "/data.mdb"))
    #expect(throws: LMDBError.self) { _ = try Environment(path: dir.path) }
  }

  @Test func valuesStayReadableAfterTheMappedPagesAreReleased() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "things")
    let keys = (0..<500).map { [UInt8(truncatingIfNeeded: $0 >> 8), UInt8(truncatingIfNeeded: $0)] }
    try env.write { txn in
      for key in keys { try txn.put(Array(repeating: key[1], count: 3000), forKey: key, in: db) }
    }
    try env.read { txn throws in
      #expect(try txn.value(forKey: keys[7], in: db) == Array(repeating: 7, count: 3000))
      // Released while a reader holds a snapshot: the pages fault back in from the file.
      try env.releaseMappedPages()
      for key in keys { #expect(try txn.value(forKey: key, in: db) == Array(repeating: key[1], count: 3000)) }
    }
    try env.releaseMappedPages()
    try env.write { txn in try txn.put([1], forKey: [9, 9], in: db) }
    #expect(try env.read { txn in try txn.value(forKey: [9, 9], in: db) } == [1])
  }

  @Test func writeCursorsStoreAppendAndDeleteWhatPlainPutsAndDeletesDoWhateverTheKeyOrder() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let plain = try env.database(named: "plain")
    let cursored = try env.database(named: "cursored")
    let appended = try env.database(named: "appended")
    let other = try env.database(named: "other")
    // Runs of ascending keys, jumps back, overwrites and deletes between puts, as the
    // projector writes them. `appended` takes every put as an append, which must fall back
    // to a plain put for each key that does not sort last.
    var seed: UInt32 = 12345
    var operations: [(key: [UInt8], value: [UInt8]?)] = []
    var next: UInt32 = 0
    for step in 0..<6000 {
      seed = seed &* 1_103_515_245 &+ 12345
      next = seed % 7 == 0 ? (seed >> 8) % 20_000 : next + 1
      let key = withUnsafeBytes(of: next.bigEndian, Array.init)
      operations.append(
        (key, step % 11 == 10 ? nil : Array(repeating: UInt8(truncatingIfNeeded: step), count: Int(seed >> 24) % 300)))
    }
    try env.write { txn in
      try txn.withWriteCursors(on: [cursored, appended]) { cursors in
        for (key, value) in operations {
          if let value {
            try txn.put(value, forKey: key, in: plain)
            try cursors.put(value, forKey: key, in: cursored)
            try cursors.append(value, forKey: key, in: appended)
            try cursors.put(value, forKey: key, in: other)  // not among the cursors: plain put
          } else {
            let existed = try txn.delete(key, in: plain)
            #expect(try cursors.delete(key, in: cursored) == existed)
            #expect(try cursors.delete(key, in: appended) == existed)
            #expect(try cursors.delete(key, in: other) == existed)  // not among the cursors: plain delete
          }
        }
      }
    }
    try env.read { txn in
      let expected = try txn.entries(in: plain, prefix: [])
      #expect(expected.count > 1000)
      #expect(try txn.entries(in: cursored, prefix: []) == expected)
      #expect(try txn.entries(in: appended, prefix: []) == expected)
      #expect(try txn.entries(in: other, prefix: []) == expected)
    }
  }

  @Test func aFullMapMetThroughAWriteCursorGrowsTheMapAndRetries() throws {
    let dir = try TemporaryDirectory()
    let (env, db) = try Self.oneMegabyteMap(in: dir)
    var runs = 0
    try env.write { txn in
      runs += 1
      try txn.withWriteCursors(on: [db]) { cursors in
        for i in 0..<2000 {
          try cursors.put(
            [UInt8](repeating: 3, count: 4096), forKey: withUnsafeBytes(of: UInt32(i).bigEndian, Array.init), in: db)
        }
      }
    }
    #expect(runs > 1)
    #expect(try env.read { txn in try txn.statistics(of: db).entries } == 2000)
  }

  @Test func valueBytesSumsTheSizesOfEveryValue() throws {
    let dir = try TemporaryDirectory()
    let env = try Environment(path: dir.path)
    let db = try env.database(named: "log")
    try env.write { txn in
      #expect(try txn.valueBytes(in: db) == 0)
      for size in [0, 1, 100, 5000] {
        try txn.put(Array(repeating: 1, count: size), forKey: [UInt8(size % 251), UInt8(size / 251)], in: db)
      }
      #expect(try txn.valueBytes(in: db) == 5101)
    }
  }
}
