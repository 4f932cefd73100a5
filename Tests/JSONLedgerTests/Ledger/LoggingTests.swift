import JSONLedgerTestSupport
import Logging
import Synchronization
import Testing

@testable import JSONLedger

/// A log handler that keeps what it is given.
final class RecordingLogHandler: LogHandler, Sendable {
  let entries = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
  var metadata: Logger.Metadata {
    get { [:] }
    set {}
  }
  var logLevel: Logger.Level {
    get { .trace }
    set {}
  }

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { nil }
    set {}
  }

  func log(event: LogEvent) {
    entries.withLock { $0.append((event.level, event.message.description, event.metadata ?? [:])) }
  }

}

@Suite("Logging through swift-log")
struct LoggingTests {
  @Test func opensAppliesRevertsAndRefusalsAreLogged() async throws {
    let handler = RecordingLogHandler()
    var options = Ledger.Options()
    options.logger = Logger(label: "test", factory: { _ in handler })
    let model = try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("label", .string)
      }
    }
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model, options: options)
    for label in ["A", "B"] {
      var batch = ledger.makeBatch()
      try batch.stage([["name": "Japan", "label": .string(label)]], as: "Band")
      _ = try await ledger.apply(batch)
    }
    let refused = #expect(throws: LedgerError.self) { try ledger.revert(1) }

    #expect(refused?.code == .revertConflicts)
    _ = try await ledger.revert(2)
    let entries = handler.entries.withLock { $0 }
    #expect(entries.contains { $0.level == .debug && $0.message == "opened store" })
    let applied = entries.filter { $0.message == "applied batch" }
    #expect(applied.map { $0.metadata["batch"]?.description } == ["1", "2", "3"])
    #expect(applied.last?.metadata["kind"]?.description == "revert")
    #expect(entries.contains { $0.level == .notice && $0.message == "revert refused" })
  }
}
