// Replication through PostgreSQL, measured in one run against a server you start (its
// README section says how): append throughput by writers, a follower's apply rate against a
// local import of the same batches, replication lag under a steady import, PostgreSQL's
// bytes per million objects, and bootstrapping a replica of `--bootstrap-objects` objects by
// replay and from a snapshot against a local `restore-log` of the same batches (0 skips it).
import Foundation
import JSONLedger
import JSONLedgerPostgres
import Synchronization

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: String) -> String {
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
  return arguments[index + 1]
}
let url = option("--remote", "postgres://postgres@127.0.0.1:55432/postgres")
let batches = Int(option("--batches", "200")) ?? 200
let perBatch = Int(option("--objects-per-batch", "500")) ?? 500
let bootstrapObjects = Int(option("--bootstrap-objects", "200000")) ?? 200_000
// `--only PART`: one part of the run (for profiling it): import, writers, lag or bootstrap.
let parts = ["import", "writers", "lag", "bootstrap"]
let only = option("--only", "")
guard only.isEmpty || parts.contains(only) else {
  FileHandle.standardError.write(Data("jsonledger-replication-bench: --only takes one of \(parts), not \(only)\n".utf8))
  exit(2)
}
func runs(_ part: String) -> Bool { only.isEmpty || only == part }
// `--writers N,N,…`: the numbers of writers racing (1, 2, 4 and 8 unless told), and
// `--appends N` each makes (60 unless told).
let writerCounts = option("--writers", "1,2,4,8").split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
let appendsPerWriter = max(1, Int(option("--appends", "60")) ?? 60)
let root = FileManager.default.temporaryDirectory.appendingPathComponent(
  "jsonledger-rbench-\(UUID().uuidString.prefix(8))"
).path
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }

let model = try Model(
  json: try JSONParser.parse(
    Array(
      #"""
      {"keyCase": "snake_case", "entities": {
        "Band": {"identity": "name", "attributes": {"name": "string"},
          "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
        "Album": {"identity": "name", "attributes": {"name": "string", "label": "string", "plays": "int64"},
          "relationships": {"band": {"to": "Band", "inverse": "albums"}}}}}
      """#.utf8)))

func albums(_ prefix: String, _ count: Int) -> JSONValue {
  .array(
    (0..<count).map { index in
      [
        "name": .string("\(prefix)-\(index)"), "label": .string("label \(index % 17)"),
        "plays": .number(JSONNumber(index)), "band": .string("band \(index % 50)"),
      ]
    })
}

func seconds(_ start: ContinuousClock.Instant) -> Double {
  let elapsed = ContinuousClock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func percentile(_ values: [Double], _ p: Double) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return 0 }
  return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

var rows: [(String, String, String)] = []
func newLedgerName() -> String { "bench-\(UUID().uuidString.prefix(12))" }

/// A published leader with one batch, and its location.
func publishedLeader() async throws -> (Replica, RemoteLocation) {
  let location = try RemoteLocation(url: url, ledger: newLedgerName())
  let ledger = try Ledger.open(at: root + "/\(location.ledger)-leader", model: model)
  var batch = ledger.makeBatch()
  try batch.stage(albums("seed", 10), as: "Album")
  _ = try ledger.applySynchronously(batch)
  return (try await Replica.publish(ledger, to: location), location)
}

// 1. A local import of the batches, then the same batches through the remote, then a clone
//    (a follower replaying them all).
if runs("import") {
  let local = try Ledger.open(at: root + "/local", model: model)
  let payloads = (0..<batches).map { albums("b\($0)", perBatch) }
  var start = ContinuousClock.now
  for payload in payloads {
    var batch = local.makeBatch()
    try batch.stage(payload, as: "Album")
    _ = try local.applySynchronously(batch)
  }
  let localRate = Double(batches * perBatch) / seconds(start)
  let (leader, location) = try await publishedLeader()
  start = ContinuousClock.now
  for payload in payloads {
    var batch = leader.ledger.makeBatch()
    try batch.stage(payload, as: "Album")
    _ = try await leader.apply(batch)
  }
  let remoteRate = Double(batches * perBatch) / seconds(start)
  start = ContinuousClock.now
  let clone = try await Replica.clone(from: location, into: root + "/clone")
  let cloneSeconds = seconds(start)
  let followRate = Double(batches * perBatch + 10) / cloneSeconds
  rows.append(("local import, \(batches) batches of \(perBatch) objects", "\(Int(localRate)) objects/s", "1.00×"))
  rows.append(
    (
      "the same batches written through PostgreSQL", "\(Int(remoteRate)) objects/s",
      String(format: "%.2f×", remoteRate / localRate)
    ))
  rows.append(
    (
      "a follower applying them (clone: replay and verify)", "\(Int(followRate)) objects/s",
      String(format: "%.2f×", followRate / localRate)
    ))
  let sizes = try await clone.status().remoteBytes
  rows.append(
    (
      "PostgreSQL bytes per 1M objects (the log rows as stored)",
      "\(Int(Double(sizes) / Double(batches * perBatch + 10) * 1_000_000 / 1_048_576)) MB", "—"
    ))
  clone.ledger.close()
}

// 2. Append throughput for 1, 2, 4 and 8 writers racing: each a replica of its own (its own
//    store and connections, as a machine has; all in this process, on its cores), then as many
//    tasks sharing one replica (a server's requests, whose applies waiting together are
//    appended together).
for writers in writerCounts where runs("writers") {
  for sharing in writers > 1 ? [false, true] : [false] {
    let (leader, location) = try await publishedLeader()
    var replicas = [leader]
    for index in 1..<writers {
      replicas.append(
        sharing ? leader : try await Replica.clone(from: location, into: root + "/\(location.ledger)-w\(index)"))
    }
    let appends = appendsPerWriter
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, replica) in replicas.enumerated() {
        group.addTask {
          for round in 0..<appends {
            var batch = replica.ledger.makeBatch()
            try batch.stage(albums("w\(index)-\(round)", 20), as: "Album")
            _ = try await replica.apply(batch)
          }
        }
      }
      try await group.waitForAll()
    }
    let rate = Double(writers * appends) / seconds(start)
    let who =
      writers == 1 ? "1 writer" : sharing ? "\(writers) writers sharing one replica" : "\(writers) writers racing"
    rows.append(("appends of 20 objects, \(who)", "\(Int(rate)) appends/s", "—"))
  }
}

// 3. Lag: a leader applies a batch every 20 ms; a follower follows; commit → applied there.
if runs("lag") {
  let (leader, location) = try await publishedLeader()
  let follower = try await Replica.clone(from: location, into: root + "/follower")
  let committed = Mutex<[UInt64: ContinuousClock.Instant]>([:])
  let lags = Mutex<[Double]>([])
  let changes = follower.ledger.changes
  let watcher = Task {
    for await summary in changes {
      let now = ContinuousClock.now
      if let at = committed.withLock({ $0[summary.batchID] }) {
        let lag = now - at
        lags.withLock { $0.append(Double(lag.components.attoseconds) / 1e15 + Double(lag.components.seconds) * 1000) }
      }
    }
  }
  let following = Task { try await follower.follow(pollInterval: .seconds(1)) }
  try await Task.sleep(for: .milliseconds(500))
  for round in 0..<150 {
    var batch = leader.ledger.makeBatch()
    try batch.stage(albums("lag-\(round)", 20), as: "Album")
    let summary = try await leader.apply(batch)
    committed.withLock { $0[summary.batchID] = ContinuousClock.now }
    try await Task.sleep(for: .milliseconds(20))
  }
  try await Task.sleep(for: .seconds(1))
  following.cancel()
  watcher.cancel()
  let values = lags.withLock { $0 }
  rows.append(
    (
      "replication lag, commit → applied on the follower (\(values.count) batches of 20, one every 20 ms)",
      String(format: "p50 %.1f ms, p99 %.1f ms", percentile(values, 0.5), percentile(values, 0.99)), "—"
    ))
}

// 4. Bootstrap: the same batches of 10,000 objects in a local store, archived by a compaction
//    and restored (`restore-log`: the baseline); published, then cloned by replay; compacted
//    on the leader (a snapshot), then cloned from the snapshot.
if bootstrapObjects > 0, runs("bootstrap") {
  let chunk = 10_000
  let parts = max(1, bootstrapObjects / chunk)
  let payloads = (0..<parts).map { albums("boot\($0)", chunk) }
  let plain = try Ledger.open(at: root + "/boot-plain", model: model)
  let location = try RemoteLocation(url: url, ledger: newLedgerName())
  let leaderStore = try Ledger.open(at: root + "/boot-leader", model: model)
  for payload in payloads {
    for ledger in [plain, leaderStore] {
      var batch = ledger.makeBatch()
      try batch.stage(payload, as: "Album")
      _ = try ledger.applySynchronously(batch)
    }
  }
  _ = try plain.compact(keepingBatches: 0, archive: root + "/boot.archive")
  plain.close()
  var start = ContinuousClock.now
  let restored = try Ledger.restoreLog(from: root + "/boot.archive", to: root + "/boot-restored")
  let restoreSeconds = seconds(start)
  restored.close()
  let leader = try await Replica.publish(leaderStore, to: location)
  start = ContinuousClock.now
  let replayed = try await Replica.clone(from: location, into: root + "/boot-replay", fromSnapshot: false)
  let replaySeconds = seconds(start)
  start = ContinuousClock.now
  _ = try await replayed.ledger.verify()
  let verifySeconds = seconds(start)
  replayed.ledger.close()
  start = ContinuousClock.now
  try await leader.compact(keepingBatches: 0, archive: nil, discarding: true)
  let compactSeconds = seconds(start)
  start = ContinuousClock.now
  let snapshotted = try await Replica.clone(from: location, into: root + "/boot-snapshot")
  let snapshotSeconds = seconds(start)
  snapshotted.ledger.close()
  let objects = parts * chunk
  rows.append(
    (
      "bootstrap of \(objects) objects: local restore-log of the same \(parts) batches (the baseline here)",
      String(format: "%.2f s", restoreSeconds), "1.00×"
    ))
  rows.append(
    (
      "the same, a clone replaying the remote's log (then verify)", String(format: "%.2f s", replaySeconds),
      String(format: "%.2f× the restore", replaySeconds / restoreSeconds)
    ))
  rows.append(
    (
      "a verify of that clone alone (what the clone ends with)", String(format: "%.2f s", verifySeconds),
      String(format: "%.2f× the restore", verifySeconds / restoreSeconds)
    ))
  rows.append(
    (
      "a replica compacting to its head and publishing the snapshot", String(format: "%.2f s", compactSeconds), "—"
    ))
  rows.append(
    (
      "the same, a clone from the snapshot (then verify)", String(format: "%.2f s", snapshotSeconds),
      String(format: "%.2f× the restore", snapshotSeconds / restoreSeconds)
    ))
}

print("| workload | result | vs local import |")
print("|---|---:|---:|")
for (name, value, ratio) in rows { print("| \(name) | \(value) | \(ratio) |") }
