#if canImport(Glibc)
  import CMalloc
  import Glibc
#endif

/// Memory a large batch has freed, handed back to the system.
package enum FreedMemory {
  /// Hands the whole pages of memory the allocator holds free back to the system (glibc's
  /// `malloc_trim`), so that they stop counting toward the process's resident memory.
  ///
  /// glibc keeps what a program frees for its next allocations. A large batch frees many
  /// small blocks (its lookup tables, then each object it has folded) just before it makes
  /// large ones (the changes' array, the record, the pages its transaction fills), which do
  /// not fit in the gaps: without this, the process holds both at once. The call walks the
  /// allocator's free lists, so only a large batch makes it: once its resolver is done, and
  /// every 2,048 changes it folds (`Projector.foldsBetweenTrims`). A no-op where the C library
  /// has no such call.
  package static func returnToSystem() {
    #if canImport(Glibc)
      _ = malloc_trim(0)
    #endif
  }

  /// Hands back the whole pages of `array`'s room past its last element (`madvise`'s
  /// `MADV_DONTNEED`): an array that elements are popped off stops counting its popped part
  /// toward the process's resident memory, without being copied into a smaller one. The
  /// room stays the array's; a page used again comes back zeroed, and room past the count
  /// holds no element to read. For an array held only here (a shared one is copied first).
  /// A no-op where the C library has no such call.
  package static func returnUnusedRoom<Element>(of array: inout [Element]) {
    #if canImport(Glibc)
      let stride = MemoryLayout<Element>.stride
      let (count, capacity) = (array.count, array.capacity)
      guard stride > 0, capacity > count else { return }
      let page = Int(sysconf(Int32(_SC_PAGESIZE)))
      array.withUnsafeMutableBufferPointer { buffer in
        guard let base = buffer.baseAddress else { return }
        let raw = UnsafeMutableRawPointer(base)
        // Pages wholly inside the room past the count: never the array's header before it,
        // nor anything after its capacity.
        let start = (Int(bitPattern: raw) + count * stride + page - 1) / page * page
        let end = (Int(bitPattern: raw) + capacity * stride) / page * page
        guard end > start, let first = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(first, end - start, MADV_DONTNEED)
      }
    #endif
  }
}
