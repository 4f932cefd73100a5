import Foundation
@_spi(Replication) import JSONLedger
import Synchronization

/// A remote log held in this process: the second transport of `ReplicaCore` beside
/// PostgreSQL, which the tests of the replica's rules run over (the PostgreSQL suites keep
/// running over the real server). It keeps the contract a transport keeps: appends chain to
/// the locked head, one writer holds the head at a time and the others wait in turn, a session
/// that fails lets the head go, and every append rings the watchers.
///
/// Faults for the tests: the next append refused, a record's bytes damaged, a chain broken.
final class InProcessLog: RemoteLog {
  private struct State {
    var records: [RemoteRecord] = []
    var model: String
    var modelVersion: UInt32 = 1
    var updatedAt = Date()
    var snapshots: [RemoteSnapshot] = []
    /// The session holding the head's lock, and the sessions waiting for it, in turn.
    var holder: UInt64?
    var waiting: [(session: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    var nextSession: UInt64 = 1
    var signals: [HeadSignal] = []
    var refusesNextAppend = false
    var refusesNextGroupAppend = false
    var appendsSeen = 0
    var positions: [UInt64] = []
  }
  private let state: Mutex<State>

  /// An empty log of a ledger whose model is `model`'s first version.
  init(model: Model) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("in-process-\(UUID())").path
    let ledger = try Ledger.open(at: directory, model: model)
    let definition = String(decoding: JSONWriter(options: []).bytes(from: ledger.modelDefinition), as: UTF8.self)
    ledger.close()
    try? FileManager.default.removeItem(atPath: directory)
    state = Mutex(State(model: definition))
  }

  var description: String { "in-process log" }
  var ledgerName: String { "in-process" }
  var remembered: String { "in-process#test" }
  var executor: (any TaskExecutor)? { nil }
  var genesisDigest: [UInt8] { [UInt8](repeating: 0, count: 32) }

  /// Four FNV-1a passes with different starts: a 32-byte digest that tells records apart (the
  /// chain's rules, not its strength, are what these tests check).
  func digest(of record: [UInt8]) -> [UInt8] {
    var digest: [UInt8] = []
    for seed: UInt64 in [0xcbf2_9ce4_8422_2325, 0x8422_2325_cbf2_9ce4, 0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321] {
      var hash = seed
      for byte in record {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
      }
      withUnsafeBytes(of: hash.bigEndian) { digest.append(contentsOf: $0) }
    }
    return digest
  }

  func withSession<R: Sendable>(_ body: (InProcessSession) async throws -> R) async throws -> R {
    let session = InProcessSession(
      log: self,
      id: state.withLock { state in
        defer { state.nextSession += 1 }
        return state.nextSession
      })
    do { return try await body(session) } catch {
      // A session that failed is ended, and the head's lock with it.
      release(session.id)
      throw error
    }
  }

  func withWatchedSession<R: Sendable>(_ body: (InProcessSession, HeadSignal) async throws -> R) async throws -> R {
    let signal = HeadSignal()
    state.withLock { $0.signals.append(signal) }
    defer { state.withLock { $0.signals.removeAll { $0 === signal } } }
    return try await withSession { session in try await body(session, signal) }
  }

  // MARK: - What a session does

  func head() -> RemoteHead {
    state.withLock { state in
      RemoteHead(
        batchID: UInt64(state.records.count), digest: state.records.last?.digest ?? genesisDigest, firstBatch: 1,
        modelVersion: state.modelVersion, model: state.model, updatedAt: state.updatedAt)
    }
  }

  func lockHead(_ session: UInt64) async -> RemoteHead {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let free = state.withLock { state -> Bool in
        guard state.holder != nil else {
          state.holder = session
          return true
        }
        state.waiting.append((session, continuation))
        return false
      }
      if free { continuation.resume() }
    }
    return head()
  }

  /// Appends `records` in order, all or none, and lets the head go: one append, however many
  /// records it carries.
  func append(_ records: [RemoteRecord], model: String?, session: UInt64) throws {
    let signals = try state.withLock { state -> [HeadSignal] in
      guard state.holder == session else { throw RemoteError.refused("the head is not locked by this session") }
      state.appendsSeen += 1
      if state.refusesNextAppend || (state.refusesNextGroupAppend && records.count > 1) {
        state.refusesNextAppend = false
        if records.count > 1 { state.refusesNextGroupAppend = false }
        throw RemoteError.unavailable("in-process log: the append was refused (a fault of the test)")
      }
      var (head, digest) = (UInt64(state.records.count), state.records.last?.digest ?? genesisDigest)
      for record in records {
        guard record.batchID == head + 1, record.previousDigest == digest else {
          throw RemoteError.refused("batch \(record.batchID) does not follow the head")
        }
        (head, digest) = (record.batchID, record.digest)
      }
      state.records.append(contentsOf: records)
      if let model, let record = records.last {
        state.model = model
        state.modelVersion = record.modelVersion
      }
      state.updatedAt = Date()
      return state.signals
    }
    release(session)
    for signal in signals { signal.ring() }
  }

  /// Lets the head's lock go if `session` holds it, to the next waiting session.
  func release(_ session: UInt64) {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard state.holder == session else { return nil }
      guard !state.waiting.isEmpty else {
        state.holder = nil
        return nil
      }
      let next = state.waiting.removeFirst()
      state.holder = next.session
      return next.continuation
    }
    next?.resume()
  }

  func records(after batch: UInt64, limit: Int) -> [RemoteRecord] {
    state.withLock { state in Array(state.records.dropFirst(Int(batch)).prefix(limit)) }
  }

  func snapshots() -> [RemoteSnapshot] { state.withLock { $0.snapshots } }

  func publish(_ snapshot: RemoteSnapshot) {
    state.withLock { state in
      if !state.snapshots.contains(where: { $0.batchID == snapshot.batchID }) { state.snapshots.append(snapshot) }
    }
  }

  // MARK: - Faults

  /// The next append is refused, as a remote that went away before it committed.
  func refuseNextAppend() { state.withLock { $0.refusesNextAppend = true } }

  /// The next append of more than one record is refused.
  func refuseNextGroupAppend() { state.withLock { $0.refusesNextGroupAppend = true } }

  /// Flips a bit of `batch`'s record bytes, leaving its digest as it was.
  func damage(batch: UInt64) {
    state.withLock { state in
      let index = Int(batch) - 1
      state.records[index].bytes[state.records[index].bytes.count / 2] ^= 0x01
    }
  }

  /// Makes `batch`'s record name another record before it.
  func breakChain(at batch: UInt64) {
    state.withLock { state in state.records[Int(batch) - 1].previousDigest = [UInt8](repeating: 7, count: 32) }
  }

  /// How many appends the log was asked for (one for a group of records).
  var appendsSeen: Int { state.withLock { $0.appendsSeen } }

  /// Takes the head's lock for a session of the test's, which `release` lets go: writers
  /// wait for it meanwhile.
  func holdHead() async -> UInt64 {
    let session = state.withLock { state in
      defer { state.nextSession += 1 }
      return state.nextSession
    }
    _ = await lockHead(session)
    return session
  }

  /// How many sessions wait for the head's lock.
  var sessionsWaitingForHead: Int { state.withLock { $0.waiting.count } }

  /// The heads followers said they were at, in the order they said them.
  var positions: [UInt64] { state.withLock { $0.positions } }

  func notePosition(_ head: UInt64) { state.withLock { $0.positions.append(head) } }
}

/// A session of `InProcessLog`: its calls answer at once.
struct InProcessSession: RemoteLogSession {
  let log: InProcessLog
  let id: UInt64

  var isClosed: Bool { false }
  func checkFormat() async throws {}
  func head() async throws -> RemoteHead { log.head() }
  func lockHead() async throws -> RemoteHead { await log.lockHead(id) }
  func append(_ record: RemoteRecord, movingModelTo model: String?) async throws {
    try log.append([record], model: model, session: id)
  }
  func append(contentsOf records: [RemoteRecord]) async throws {
    try log.append(records, model: nil, session: id)
  }
  func releaseHead() async throws { log.release(id) }
  func records(after batch: UInt64, limit: Int) async throws -> [RemoteRecord] {
    log.records(after: batch, limit: limit)
  }
  func digest(ofBatch batch: UInt64) async throws -> [UInt8]? {
    guard batch > 0 else { return nil }
    return log.records(after: batch - 1, limit: 1).first.map(\.digest)
  }
  func newestSnapshot(atOrBefore batch: UInt64) async throws -> RemoteSnapshot? {
    log.snapshots().filter { $0.batchID <= batch }.max { $0.batchID < $1.batchID }
  }
  func publish(_ snapshot: RemoteSnapshot) async throws { log.publish(snapshot) }
  func recordPosition(follower: String, head: UInt64) async throws { log.notePosition(head) }
  func storedBytes() async throws -> Int64 {
    Int64(log.records(after: 0, limit: .max).reduce(0) { $0 + $1.bytes.count })
  }
}
