#if canImport(Glibc)
  import CMalloc
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
  /// every 8,192 changes it folds (`Projector.foldsBetweenTrims`). A no-op where the C library
  /// has no such call.
  package static func returnToSystem() {
    #if canImport(Glibc)
      _ = malloc_trim(0)
    #endif
  }
}
