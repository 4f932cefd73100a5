/// The name among `known` that `name` most likely meant: the one equal to it but for case,
/// else the one fewest edits away (an insertion, a deletion, a substitution or two neighbours
/// swapped count one each), when that is at most one edit in three characters of `name`, and
/// at most two. Nil when none is that close, or when two are equally close.
package func closestName(to name: String, among known: [String]) -> String? {
  let lowered = name.lowercased()
  if let match = known.first(where: { $0.lowercased() == lowered }) { return match }
  let limit = min(2, max(1, lowered.count / 3))
  var best: (name: String, distance: Int)?
  var tied = false
  for candidate in known {
    let distance = editDistance(Array(lowered), Array(candidate.lowercased()))
    guard distance <= limit else { continue }
    if let current = best, distance >= current.distance {
      if distance == current.distance { tied = true }
      continue
    }
    best = (candidate, distance)
    tied = false
  }
  return tied ? nil : best?.name
}

/// The optimal string alignment distance between `a` and `b`: Levenshtein's, with two
/// neighbouring characters swapped counting one edit.
package func editDistance(_ a: [Character], _ b: [Character]) -> Int {
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  // Three rows of the table: two back (for a swap), the one before, and this one.
  var twoBack = [Int](repeating: 0, count: b.count + 1)
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
      if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
        current[j] = min(current[j], twoBack[j - 2] + 1)
      }
    }
    (twoBack, previous, current) = (previous, current, twoBack)
  }
  return previous[b.count]
}
