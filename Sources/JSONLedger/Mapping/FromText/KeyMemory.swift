// Part of the byte-level paths (`Mapper+Text.swift`, `PayloadSkim.swift`): what a key's raw
// bytes mean, remembered. Its reference is the entity's key table (`EntityKeyTable`), which
// the differential tests of those paths hold it to.

import Foundation

/// What member keys met in one JSON text mean to the entities whose objects hold them,
/// remembered by the keys' raw bytes: the objects of a collection repeat a few keys, and a key
/// found here is neither decoded nor looked up in its entity's table again. The skimmer
/// (`PayloadSkimmer`) and the mapper's text path (`Mapper.mapPlainObject`) each keep one, with
/// a meaning of their own.
///
/// Bounded by `limit`: text with ever new keys starts the memory over (`makeRoom`) rather than
/// searching a long list.
struct KeyMemory<Meaning> {
  /// Where a key's bytes are in `knownBytes`, and its entity: plain values, compared without
  /// retaining anything.
  private struct Place {
    var start: Int
    var count: Int
    var entity: UInt32
  }
  private var places: [Place] = []
  private var meanings: [Meaning] = []
  private var knownBytes: [UInt8] = []
  let limit: Int

  init(limit: Int) { self.limit = limit }

  var count: Int { places.count }

  subscript(slot: Int) -> Meaning { meanings[slot] }

  /// The slot of the key whose raw bytes are at `range` of `bytes`, for `entity`'s objects:
  /// `guess` tried first, then every slot; nil when it was not met.
  func slot(of range: Range<Int>, in bytes: [UInt8], entity: UInt32, guess: Int?) -> Int? {
    if let guess, guess < places.count, matches(places[guess], range, of: bytes, entity: entity) { return guess }
    return places.indices.first { matches(places[$0], range, of: bytes, entity: entity) }
  }

  /// Empties the memory when it holds `limit` keys; whether it did (slots met before are then
  /// gone).
  mutating func makeRoom() -> Bool {
    guard places.count >= limit else { return false }
    places.removeAll(keepingCapacity: true)
    meanings.removeAll(keepingCapacity: true)
    knownBytes.removeAll(keepingCapacity: true)
    return true
  }

  /// Remembers the key at `range` of `bytes` for `entity`'s objects; its slot.
  mutating func remember(_ range: Range<Int>, in bytes: [UInt8], entity: UInt32, as meaning: Meaning) -> Int {
    places.append(Place(start: knownBytes.count, count: range.count, entity: entity))
    knownBytes.append(contentsOf: bytes[range])
    meanings.append(meaning)
    return places.count - 1
  }

  /// Whether the key at `place` is the one at `range` of `bytes`, of `entity`'s objects.
  private func matches(_ place: Place, _ range: Range<Int>, of bytes: [UInt8], entity: UInt32) -> Bool {
    guard place.count == range.count, place.entity == entity else { return false }
    guard !range.isEmpty else { return true }
    return knownBytes.withUnsafeBufferPointer { known in
      bytes.withUnsafeBufferPointer { text in
        guard let knownBase = known.baseAddress, let base = text.baseAddress,
          place.start + place.count <= known.count, range.lowerBound >= 0, range.upperBound <= text.count
        else { return false }
        return memcmp(knownBase + place.start, base + range.lowerBound, range.count) == 0
      }
    }
  }
}

/// A memory of `Sendable` meanings is one too (it holds plain values and arrays of them): a
/// skimmer's is handed from one staging to the next (`LearnedKeys`).
extension KeyMemory: Sendable where Meaning: Sendable {}
