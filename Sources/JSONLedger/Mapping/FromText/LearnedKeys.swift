import Synchronization

/// What a mapper's stagings of JSON text learned of its keys, held between two of them: the
/// skimmer's (`PayloadSkimmer.Learned`) and what mapping objects from their text learned
/// (`PlainKeys`). Both say what a key's bytes mean to an entity of the mapper's model, the same
/// in any text, so a ledger's batches (which share its mapper) hand them on, and a batch of one
/// object does not learn its keys anew. None of either is held while a staging has it: two
/// batches staged at once learn apart, and the last to finish hands its own on.
final class LearnedKeys: Sendable {
  private let skimmed = Mutex<PayloadSkimmer.Learned?>(nil)
  private let plain = Mutex<PlainKeys?>(nil)

  func take() -> PayloadSkimmer.Learned? { skimmed.withLock { $0.take() } }

  func keep(_ learned: PayloadSkimmer.Learned) { skimmed.withLock { $0 = learned } }

  func takePlainKeys() -> PlainKeys { plain.withLock { $0.take() } ?? PlainKeys() }

  func keep(_ keys: PlainKeys) { plain.withLock { $0 = keys } }
}
