/// A block holding a value's fields and two lists, each in room made for it when the block is
/// made: one allocation where a struct of two arrays takes three, and one to free.
///
/// The tail is whole words: the first list's room starts it, the second's starts at the first
/// word after the first's room. Both element types must be aligned to a word or less.
///
/// Invariants (`_checkInvariants()`): each count is within its room; the first `firstCount`
/// elements of the first list and the first `secondCount` of the second are initialized,
/// nothing else of the tail is.
///
/// Copy on write is the owner's: a value holding a block checks `isKnownUniquelyReferenced`
/// before it writes, and copies (`copy(firstRoom:secondRoom:moving:)`) when another value
/// shares it.
///
/// The class is open so that an owner can subclass it with its element types fixed and call
/// `destroyLists()` in its own `deinit`: a generic class's `deinit` runs unspecialized (it
/// cannot be inlined into the owner's module), so it destroys each element through the type's
/// value witnesses; the subclass's runs the element types' own code, and the base's then finds
/// nothing left to destroy.
open class TwoTailBuffer<Fields, First, Second>: ManagedBuffer<TwoTailHeader<Fields>, UInt64> {
  deinit {
    destroyLists()
  }

  /// A block holding `fields` with room for `firstRoom` and `secondRoom` elements, none of them
  /// initialized yet. Made as the class it is called on (a subclass's call makes a subclass).
  @inlinable
  public final class func make(_ fields: Fields, firstRoom: Int, secondRoom: Int) -> Self {
    precondition(
      MemoryLayout<First>.alignment <= 8 && MemoryLayout<Second>.alignment <= 8,
      "a two-tail buffer's element is aligned past a word")
    let firstRoom = max(0, firstRoom)
    let secondRoom = max(0, secondRoom)
    let secondBytes = secondRoom * MemoryLayout<Second>.stride
    let words = (secondOffset(firstRoom: firstRoom) + secondBytes + 7) / 8
    // The header is made in the closure: made outside, it would be copied in and then
    // destroyed, a retain and a release of everything the fields hold.
    let block = unsafeDowncast(
      create(minimumCapacity: words) { _ in
        TwoTailHeader(fields: fields, firstRoom: firstRoom, secondRoom: secondRoom)
      }, to: self)
    block.withUnsafeMutablePointerToElements { words in
      let raw = UnsafeMutableRawPointer(words)
      raw.bindMemory(to: First.self, capacity: firstRoom)
      (raw + secondOffset(firstRoom: firstRoom)).bindMemory(to: Second.self, capacity: secondRoom)
    }
    return block
  }

  /// Where the second list's room starts, in bytes from the tail's start.
  @inlinable
  public static func secondOffset(firstRoom: Int) -> Int {
    (firstRoom * MemoryLayout<First>.stride + 7) & ~7
  }

  /// Calls `body` with the header and the start of each list.
  @inlinable
  public final func withPointers<Result>(
    _ body: (UnsafeMutablePointer<TwoTailHeader<Fields>>, UnsafeMutablePointer<First>, UnsafeMutablePointer<Second>)
      throws -> Result
  ) rethrows -> Result {
    try withUnsafeMutablePointers { header, words in
      let raw = UnsafeMutableRawPointer(words)
      return try body(
        header, raw.assumingMemoryBound(to: First.self),
        (raw + Self.secondOffset(firstRoom: header.pointee.firstRoom)).assumingMemoryBound(to: Second.self))
    }
  }

  /// Appends `element` to the first list; there must be room (`firstCount < firstRoom`).
  @inlinable
  public final func appendFirst(_ element: First) {
    withPointers { header, first, _ in
      precondition(header.pointee.firstCount < header.pointee.firstRoom, "an element past the first list's room")
      (first + header.pointee.firstCount).initialize(to: element)
      header.pointee.firstCount += 1
    }
  }

  /// Appends `element` to the second list; there must be room (`secondCount < secondRoom`).
  @inlinable
  public final func appendSecond(_ element: Second) {
    withPointers { header, _, second in
      precondition(header.pointee.secondCount < header.pointee.secondRoom, "an element past the second list's room")
      (second + header.pointee.secondCount).initialize(to: element)
      header.pointee.secondCount += 1
    }
  }

  /// A new block of the same class with this one's fields and room for at least as many of
  /// each list as this one holds, holding copies of its elements (`moving`: holding them, this
  /// block left holding none; only for a block no other value shares).
  @inlinable
  public final func copy(firstRoom: Int, secondRoom: Int, moving: Bool) -> Self {
    withPointers { header, first, second in
      let (firstCount, secondCount) = (header.pointee.firstCount, header.pointee.secondCount)
      let copy = Self.make(
        header.pointee.fields, firstRoom: max(firstRoom, firstCount), secondRoom: max(secondRoom, secondCount))
      copy.withPointers { newHeader, newFirst, newSecond in
        if moving {
          newFirst.moveInitialize(from: first, count: firstCount)
          newSecond.moveInitialize(from: second, count: secondCount)
          header.pointee.firstCount = 0
          header.pointee.secondCount = 0
        } else {
          newFirst.initialize(from: first, count: firstCount)
          newSecond.initialize(from: second, count: secondCount)
        }
        newHeader.pointee.firstCount = firstCount
        newHeader.pointee.secondCount = secondCount
      }
      return copy
    }
  }

  /// Destroys every element of both lists, one at a time with the element type's own code,
  /// and leaves the counts at zero. What a subclass's `deinit` calls (see the type's comment).
  @inlinable
  public final func destroyLists() {
    withPointers { header, first, second in
      for index in 0..<header.pointee.firstCount { (first + index).deinitialize(count: 1) }
      for index in 0..<header.pointee.secondCount { (second + index).deinitialize(count: 1) }
      header.pointee.firstCount = 0
      header.pointee.secondCount = 0
    }
  }

  /// Traps unless the type's invariants hold: each count within its room, the second list's
  /// room after the first's, and the tail large enough for both.
  public final func _checkInvariants() {
    withUnsafeMutablePointers { header, _ in
      let fields = header.pointee
      precondition(fields.firstRoom >= 0 && fields.secondRoom >= 0, "a negative room")
      precondition(fields.firstCount >= 0 && fields.firstCount <= fields.firstRoom, "the first list past its room")
      precondition(fields.secondCount >= 0 && fields.secondCount <= fields.secondRoom, "the second list past its room")
      let offset = Self.secondOffset(firstRoom: fields.firstRoom)
      precondition(offset >= fields.firstRoom * MemoryLayout<First>.stride && offset % 8 == 0, "lists overlap")
      let needed = offset + fields.secondRoom * MemoryLayout<Second>.stride
      precondition(capacity * 8 >= needed, "the tail is smaller than the lists' room")
    }
  }
}

/// A two-tail buffer's header: the owner's fields, and each list's count and room.
public struct TwoTailHeader<Fields> {
  public var fields: Fields
  public var firstCount = 0
  public var secondCount = 0
  public var firstRoom: Int
  public var secondRoom: Int

  @inlinable
  public init(fields: Fields, firstRoom: Int, secondRoom: Int) {
    self.fields = fields
    self.firstRoom = firstRoom
    self.secondRoom = secondRoom
  }
}
