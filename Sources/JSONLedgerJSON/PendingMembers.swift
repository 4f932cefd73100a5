/// The members of the objects a parser is reading, innermost last: each object's members are
/// pushed here as they are read and moved out into an array of their own, at their count,
/// when the object closes.
///
/// A stack of its own, not an `[JSONObject.Member]`: taking the top members off an array
/// copies them (a retain of each key and value) and then removes them through the generic
/// `replaceSubrange`, and an array made from a slice spanning all of it shares its storage,
/// so that the removal copies the whole. Here a member is moved in once and out once.
///
/// Each parse makes its own. A copy of a parser (a `JSONValueReader` copied) shares it, which
/// holds while the copies take turns: an object takes only the members pushed since it
/// opened, and a read begins by letting go of what a failed one left.
final class PendingMembers {
  /// Slots `0..<count` hold members, `count..<capacity` are uninitialised; nil until the
  /// first member, so that a parse of a value with no object allocates no room.
  private var base: UnsafeMutablePointer<JSONObject.Member>?
  private var capacity = 0
  private(set) var count = 0

  init() {}

  deinit {
    guard let base else { return }
    base.deinitialize(count: count)
    base.deallocate()
  }

  func append(_ member: consuming JSONObject.Member) {
    if count == capacity {
      let grownCapacity = max(16, capacity * 2)
      let grown = UnsafeMutablePointer<JSONObject.Member>.allocate(capacity: grownCapacity)
      if let base {
        grown.moveInitialize(from: base, count: count)
        base.deallocate()
      }
      base = grown
      capacity = grownCapacity
    }
    (base.unsafelyUnwrapped + count).initialize(to: member)
    count += 1
  }

  /// The members from `first` on, in the order they were pushed, moved out and off the stack.
  func take(from first: Int) -> [JSONObject.Member] {
    precondition(first >= 0 && first <= count, "a parser takes only the members it pushed")
    let taken = count - first
    guard taken > 0, let base else { return [] }
    // Reserved and appended: `Array(unsafeUninitializedCapacity:)` allocates through the
    // standard library's unspecialized code, which looks the storage's type up at run time,
    // for every object parsed (CONTRIBUTING.md, "Hot paths").
    var members: [JSONObject.Member] = []
    members.reserveCapacity(taken)
    for index in first..<count { members.append((base + index).move()) }
    count = first
    return members
  }

  /// Lets go of every member (what a parse that failed left behind).
  func removeAll() {
    base?.deinitialize(count: count)
    count = 0
  }
}
