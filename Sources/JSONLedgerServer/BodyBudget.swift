import Synchronization

/// The bytes of request bodies all requests hold at once, bounded by a limit: each request
/// reserves its body's bytes as they arrive (or whole, when `Content-Length` says how many)
/// and releases them once its batch is applied.
final class BodyBudget: Sendable {
  let limit: Int
  private let held = Mutex(0)

  init(limit: Int) {
    self.limit = limit
  }

  /// The bytes held now, by every request.
  var bytesHeld: Int { held.withLock { $0 } }

  func reservation() -> Reservation { Reservation(budget: self) }

  /// One request's share of the budget: grows as its body arrives, released once.
  final class Reservation: Sendable {
    private let budget: BodyBudget
    private let bytes = Mutex(0)

    fileprivate init(budget: BodyBudget) {
      self.budget = budget
    }

    /// Takes `count` more bytes, or throws `APIFailure.busy` (taking none) when the budget
    /// has not that many left.
    func grow(by count: Int) throws {
      let taken = budget.held.withLock { held in
        guard count <= budget.limit - held else { return false }
        held += count
        return true
      }
      guard taken else { throw APIFailure.busy(limit: budget.limit) }
      bytes.withLock { $0 += count }
    }

    /// Gives back every byte taken; a second release gives back nothing.
    func release() {
      let count = bytes.withLock { bytes in
        defer { bytes = 0 }
        return bytes
      }
      budget.held.withLock { $0 -= count }
    }
  }
}
