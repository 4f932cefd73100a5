import Glibc

/// A process-local readers–writer lock (pthread).
///
/// Every transaction of an `Environment` holds it shared; growing the map holds it exclusively,
/// because `mdb_env_set_mapsize` may only run while this process has no transaction active.
final class ReadersWriterLock: @unchecked Sendable {
  // Safety: the pthread lock is allocated once, never moved, and pthread_rwlock_* are
  // thread-safe by contract; the pointer itself is immutable after init.
  private let lock: UnsafeMutablePointer<pthread_rwlock_t>

  init() {
    lock = .allocate(capacity: 1)
    lock.initialize(to: pthread_rwlock_t())
    pthread_rwlock_init(lock, nil)
  }

  deinit {
    pthread_rwlock_destroy(lock)
    lock.deallocate()
  }

  func lockShared() { pthread_rwlock_rdlock(lock) }
  func lockExclusive() { pthread_rwlock_wrlock(lock) }
  func unlock() { pthread_rwlock_unlock(lock) }
}
