import Foundation
import HTTPTypes
import Hummingbird
import JSONLedger
import JSONLedgerTestSupport
import NIOCore
import Synchronization
import Testing

@testable import JSONLedgerServer

/// Exports streamed to clients that stop reading: each holds its reader, and nothing else.
@Suite("Streamed exports")
struct ExportStreamTests {
  /// A client that takes nothing until `gate` opens, as one that stopped reading does.
  struct StalledWriter: ResponseBodyWriter {
    let gate: Gate
    mutating func write(_ buffer: ByteBuffer) async throws { await gate.wait() }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
  }

  /// Opens once; every wait before and after returns then.
  final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
      await withCheckedContinuation { continuation in
        let open = state.withLock { state in
          if !state.open { state.waiters.append(continuation) }
          return state.open
        }
        if open { continuation.resume() }
      }
    }

    func open() {
      let waiters = state.withLock { state in
        state.open = true
        defer { state.waiters = [] }
        return state.waiters
      }
      for waiter in waiters { waiter.resume() }
    }
  }

  @Test func clientsThatStopReadingDoNotHoldUpOtherWork() async throws {
    let directory = try TemporaryDirectory()
    let model = try Model {
      Entity("Note", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("text", .string)
      }
    }
    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    // About 1 MB of JSON: more than the chunks an export holds for its client.
    let text = JSONValue.string(String(repeating: "words and more words ", count: 20))
    try batch.stage(.array((0..<2_500).map { ["id": .number(JSONNumber($0)), "text": text] }), as: "Note")
    _ = try ledger.applySynchronously(batch)

    // More stalled exports than the threads every task of the process shares.
    let gate = Gate()
    let stalled = 2 * ProcessInfo.processInfo.activeProcessorCount + 4
    var exports: [Task<Void, any Error>] = []
    for _ in 0..<stalled {
      let body = ExportStream.body(ledger: ledger, asOf: nil, entity: nil, options: ExportOptions())
      exports.append(Task.detached { try await body.write(StalledWriter(gate: gate)) })
    }
    // Opened in any case, so that a failure does not leave the readers waiting.
    let opener = Task.detached {
      try? await Task.sleep(for: .seconds(20))
      gate.open()
    }
    // A second for the readers to fill what their clients do not take, then a read: neither
    // waits behind them.
    let clock = ContinuousClock()
    let start = clock.now
    try await Task.sleep(for: .seconds(1))
    let count = try await ledger.read { view in try view.count("Note") }
    let elapsed = clock.now - start
    #expect(count == 2_500)
    #expect(elapsed < .seconds(4), "a second's sleep and a read took \(elapsed) beside the stalled exports")
    gate.open()
    for export in exports { try await export.value }
    opener.cancel()
  }
}
