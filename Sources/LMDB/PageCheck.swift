internal import CLMDB
import Glibc

/// Why the data file's pages do not hold together.
public struct PageCheckFailure: Error, Sendable, CustomStringConvertible {
  /// The page at fault, when one is.
  public var page: Int?
  /// What is wrong there.
  public var reason: String

  public var description: String { page.map { "page \($0): \(reason)" } ?? reason }

  /// The snapshot's meta page was overwritten by later commits before it was read.
  var isSnapshotGone = false
}

/// A walk over every page of one snapshot of an environment's data file, read with `pread`
/// (never through the map), checking what LMDB trusts when it reads a page: page numbers,
/// kinds and bounds, node offsets and sizes, overflow runs, child pages and tree depths, named
/// databases and the free list. LMDB 0.9 reads these without checks; a flipped byte among them
/// can make a read run off the map (SIGSEGV, SIGBUS). After this walk passes, every page the
/// snapshot reaches is in bounds.
///
/// Layout (LMDB 0.9, 64-bit): a page starts with its number (8 bytes), 2 spare, flags (2), and
/// either the lower and upper bounds of its free space (2 + 2) or an overflow run's page count
/// (4); a branch or leaf page then has one 2-byte offset per node. A node holds two 16-bit
/// halves of its data size (in a branch: of the child page number, whose high bits take the
/// flags field), flags and the key size (2 each), then the key and the data.
struct PageWalk {
  private static let headerSize = 16
  private static let nodeHeaderSize = 8
  private static let branch: UInt16 = 0x01
  private static let leaf: UInt16 = 0x02
  private static let overflow: UInt16 = 0x04
  private static let meta: UInt16 = 0x08
  private static let leaf2: UInt16 = 0x20
  private static let bigData: UInt16 = 0x01
  private static let subData: UInt16 = 0x02
  private static let dupData: UInt16 = 0x04
  private static let invalidPage = UInt64.max
  private static let maximumKeySize = 511

  let descriptor: Int32
  let pageSize: Int
  let lastPage: UInt64
  private var page: [UInt8]
  private var visited: Set<UInt64> = []
  private(set) var pagesChecked = 0

  private init(descriptor: Int32, pageSize: Int, lastPage: UInt64) {
    self.descriptor = descriptor
    self.pageSize = pageSize
    self.lastPage = lastPage
    page = [UInt8](repeating: 0, count: pageSize)
  }

  /// Walks the snapshot whose meta page carries `transactionID` (the check's read
  /// transaction keeps its pages from being reused meanwhile); returns the pages checked.
  static func check(dataFile path: String, transactionID: UInt64) throws(PageCheckFailure) -> Int {
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW)
    guard descriptor >= 0 else {
      throw PageCheckFailure(page: nil, reason: "cannot read \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: 512)
    guard readFully(descriptor, &header, at: 0) else {
      throw PageCheckFailure(page: 0, reason: "the file is shorter than its first page")
    }
    // The page size sits in the meta page's free-database record (its spare field).
    let pageSize = Int(header.loadLittle(UInt32.self, at: 40))
    guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else {
      throw PageCheckFailure(page: 0, reason: "the page size \(pageSize) is not one LMDB writes")
    }
    var walk = PageWalk(descriptor: descriptor, pageSize: pageSize, lastPage: 0)
    var chosen: (main: [UInt8], free: [UInt8], lastPage: UInt64)?
    for metaPage in [UInt64(0), 1] {
      try walk.load(metaPage, checkingBounds: false)
      guard walk.field(UInt16.self, at: 10) & meta != 0, walk.field(UInt32.self, at: 16) == 0xBEEF_C0DE else {
        throw PageCheckFailure(page: Int(metaPage), reason: "not a meta page (bad flags or magic)")
      }
      if walk.field(UInt64.self, at: 144) == transactionID {
        chosen = (
          Array(walk.page[88..<136]), Array(walk.page[40..<88]), walk.field(UInt64.self, at: 136)
        )
      }
    }
    guard let chosen else {
      var failure = PageCheckFailure(page: nil, reason: "no meta page holds transaction \(transactionID)")
      failure.isSnapshotGone = true
      throw failure
    }
    let fileSize = lseek(descriptor, 0, SEEK_END)
    guard fileSize >= 0, UInt64(fileSize) >= (chosen.lastPage + 1) * UInt64(pageSize) else {
      throw PageCheckFailure(page: nil, reason: "the file is shorter than its last page \(chosen.lastPage)")
    }
    walk = PageWalk(descriptor: descriptor, pageSize: pageSize, lastPage: chosen.lastPage)
    walk.visited = [0, 1]
    try walk.checkDatabase(chosen.free, isMain: false, isFreeList: true)
    try walk.checkDatabase(chosen.main, isMain: true, isFreeList: false)
    return walk.pagesChecked
  }

  /// Walks one database from its 48-byte record: flags, depth, page counts, root.
  private mutating func checkDatabase(_ record: [UInt8], isMain: Bool, isFreeList: Bool) throws(PageCheckFailure) {
    let flags = record.loadLittle(UInt16.self, at: 4)
    let depth = Int(record.loadLittle(UInt16.self, at: 6))
    let root = record.loadLittle(UInt64.self, at: 40)
    // INTEGERKEY (8) on the free list, REVERSEKEY (2) or INTEGERKEY on named databases: no
    // DUPSORT (4) or other flags, which this store never sets.
    guard flags & ~UInt16(0x0A) == 0 else {
      throw PageCheckFailure(page: nil, reason: "a database record has flags \(flags) this store never sets")
    }
    if root == Self.invalidPage { return }
    guard depth >= 1, depth <= 32 else {
      throw PageCheckFailure(page: Int(truncatingIfNeeded: root), reason: "a tree depth of \(depth)")
    }
    try checkTree(root, depthLeft: depth, isMain: isMain, isFreeList: isFreeList)
  }

  /// Checks the page `number` of a tree and, for a branch, its children.
  private mutating func checkTree(_ number: UInt64, depthLeft: Int, isMain: Bool, isFreeList: Bool)
    throws(PageCheckFailure)
  {
    try load(number, checkingBounds: true)
    let flags = field(UInt16.self, at: 10)
    let isBranch = flags & Self.branch != 0
    guard flags & (Self.branch | Self.leaf) != 0, flags & (Self.overflow | Self.meta | Self.leaf2) == 0,
      isBranch != (flags & Self.leaf != 0)
    else { throw failure(number, "flags \(flags) are not those of a branch or leaf page") }
    guard isBranch ? depthLeft > 1 : depthLeft == 1 else {
      throw failure(number, "a \(isBranch ? "branch" : "leaf") page where the tree's depth says otherwise")
    }
    let lower = Int(field(UInt16.self, at: 12))
    let upper = Int(field(UInt16.self, at: 14))
    guard lower >= Self.headerSize, lower & 1 == 0, lower <= upper, upper <= pageSize else {
      throw failure(number, "free space from \(lower) to \(upper)")
    }
    let count = (lower - Self.headerSize) / 2
    if isBranch, count == 0 { throw failure(number, "a branch page without children") }
    // Nodes are read first and their children walked after, as the page buffer is reused.
    var children: [UInt64] = []
    var subDatabases: [[UInt8]] = []
    for index in 0..<count {
      let offset = Int(field(UInt16.self, at: Self.headerSize + 2 * index))
      guard offset >= upper, offset & 1 == 0, offset + Self.nodeHeaderSize <= pageSize else {
        throw failure(number, "node \(index) at offset \(offset)")
      }
      let low = UInt64(field(UInt16.self, at: offset))
      let high = UInt64(field(UInt16.self, at: offset + 2))
      let nodeFlags = field(UInt16.self, at: offset + 4)
      let keySize = Int(field(UInt16.self, at: offset + 6))
      let keyEnd = offset + Self.nodeHeaderSize + keySize
      guard keySize <= Self.maximumKeySize, keyEnd <= pageSize else {
        throw failure(number, "node \(index) has a key of \(keySize) bytes")
      }
      if isBranch {
        let child = low | high << 16 | UInt64(nodeFlags) << 32
        guard child >= 2, child <= lastPage else { throw failure(number, "node \(index) points to page \(child)") }
        children.append(child)
        continue
      }
      let dataSize = Int(low | high << 16)
      guard nodeFlags & ~(Self.bigData | Self.subData) == 0, nodeFlags & Self.subData == 0 || isMain else {
        throw failure(number, "node \(index) has flags \(nodeFlags)")
      }
      if nodeFlags & Self.bigData != 0 {
        guard keyEnd + 8 <= pageSize else { throw failure(number, "node \(index) overruns the page") }
        let first = loadLittle(UInt64.self, at: keyEnd)
        let pages = UInt64((dataSize + Self.headerSize + pageSize - 1) / pageSize)
        guard first >= 2, first <= lastPage, pages <= lastPage - first + 1 else {
          throw failure(number, "node \(index) points to \(pages) overflow pages from \(first)")
        }
        // A long free-list entry is kept on overflow pages too.
        children.append(first | 1 << 63)
        continue
      }
      guard keyEnd + dataSize <= pageSize else { throw failure(number, "node \(index) overruns the page") }
      if nodeFlags & Self.subData != 0 {
        guard dataSize == 48 else {
          throw failure(number, "node \(index) holds a database record of \(dataSize) bytes")
        }
        subDatabases.append(Array(page[keyEnd..<(keyEnd + 48)]))
      } else if isFreeList {
        // A list of page numbers, its count first.
        guard dataSize >= 8, (Int(loadLittle(UInt64.self, at: keyEnd)) &+ 1) &* 8 <= dataSize else {
          throw failure(number, "free-list node \(index) miscounts its pages")
        }
      }
    }
    for child in children {
      if child & 1 << 63 != 0 {
        try checkOverflow(child & ~(1 << 63))
      } else {
        try checkTree(child, depthLeft: depthLeft - 1, isMain: isMain, isFreeList: isFreeList)
      }
    }
    for record in subDatabases { try checkDatabase(record, isMain: false, isFreeList: false) }
  }

  private mutating func checkOverflow(_ number: UInt64) throws(PageCheckFailure) {
    try load(number, checkingBounds: true)
    let pages = UInt64(field(UInt32.self, at: 12))
    guard field(UInt16.self, at: 10) & Self.overflow != 0, pages >= 1, pages <= lastPage - number + 1 else {
      throw failure(number, "not the first page of an overflow run of pages within the file")
    }
    for next in (number + 1)..<(number + pages) where !visited.insert(next).inserted {
      throw failure(next, "reached twice")
    }
  }

  /// Reads page `number` into `page`, checking that it is within the snapshot, reached once,
  /// and says it is that page.
  private mutating func load(_ number: UInt64, checkingBounds: Bool) throws(PageCheckFailure) {
    if checkingBounds {
      guard number <= lastPage else { throw failure(number, "beyond the last page \(lastPage)") }
      guard visited.insert(number).inserted else { throw failure(number, "reached twice") }
    }
    guard Self.readFully(descriptor, &page, at: Int(number) * pageSize) else {
      throw failure(number, "cannot be read")
    }
    guard field(UInt64.self, at: 0) == number else {
      throw failure(number, "it says it is page \(field(UInt64.self, at: 0))")
    }
    pagesChecked += 1
  }

  private func field<Integer: FixedWidthInteger>(_: Integer.Type, at offset: Int) -> Integer {
    page.loadLittle(Integer.self, at: offset)
  }

  private func loadLittle<Integer: FixedWidthInteger>(_: Integer.Type, at offset: Int) -> Integer {
    page.loadLittle(Integer.self, at: offset)
  }

  private func failure(_ page: UInt64, _ reason: String) -> PageCheckFailure {
    PageCheckFailure(page: Int(truncatingIfNeeded: page), reason: reason)
  }

  private static func readFully(_ descriptor: Int32, _ buffer: inout [UInt8], at offset: Int) -> Bool {
    let count = buffer.count
    return buffer.withUnsafeMutableBytes { bytes in pread(descriptor, bytes.baseAddress, count, off_t(offset)) == count
    }
  }
}

extension [UInt8] {
  /// A little-endian integer at `offset` (the caller keeps `offset` within bounds).
  fileprivate func loadLittle<Integer: FixedWidthInteger>(_: Integer.Type, at offset: Int) -> Integer {
    var value: Integer = 0
    for index in 0..<(Integer.bitWidth / 8) {
      value |= Integer(truncatingIfNeeded: self[offset + index]) << (8 * index)
    }
    return value
  }
}

extension Environment {
  /// Walks every page of the current snapshot of the data file (`PageWalk`), inside a read
  /// transaction that keeps those pages from being reused meanwhile; returns the pages
  /// checked, or throws where the file does not hold together.
  public func checkPages() throws -> Int {
    // A writer in another process may commit twice between the transaction's start and the
    // reading of the meta pages, overwriting the one of this snapshot: then again.
    var attempt = 0
    while true {
      attempt += 1
      do {
        return try read { txn in
          let id = UInt64(mdb_txn_id(try txn.handle))
          return try PageWalk.check(dataFile: path + "/data.mdb", transactionID: id)
        }
      } catch let failure as PageCheckFailure where failure.isSnapshotGone && attempt < 5 {
        continue
      }
    }
  }
}
