import Foundation
import JSONLedger
import JSONLedgerTestSupport
import Testing

/// Each test's time limit guards against a hang, not a slow run: the other suites' tests
/// block the shared threads while their `jsonledger` processes run (`CommandRunner.run` waits
/// synchronously), and on a machine of two cores an observer's poll waited behind them for
/// over a minute once in CI. Five minutes is well past that and still ends a real hang.
@Suite("Observation of an object and a query, across processes")
struct ObservationTests {
  @Test(.timeLimit(.minutes(5))) func anObserverSeesBatchesOfThisProcessAndOfAnother() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let modelFile = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", store, "--model", modelFile]).status == 0)
    let ledger = try Ledger.open(at: store)
    let values = ledger.observe("Album", key: "Tin Drum", every: .milliseconds(50))
    var iterator = values.makeAsyncIterator()
    #expect(try await iterator.next() == .some(nil))  // not there yet

    // Another process imports it.
    let first = try directory.write("first.json", CLIFixtures.first)
    #expect(try CommandRunner.run(["import", store, first]).status == 0)
    let created = try await iterator.next()
    #expect(created??.string("label") == "Virgin")

    // This process changes it.
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Tin Drum", "label": "Virgin Records"]], as: "Album")
    _ = try await ledger.apply(batch)
    let changed = try await iterator.next()
    #expect(changed??.string("label") == "Virgin Records")

    // A batch that leaves it as it is yields nothing; the next change does.
    let other = try directory.write("other.json", #"[{"name": "Quiet Life", "label": "Hansa-Ariola"}]"#)
    #expect(try CommandRunner.run(["import", store, other, "--entity", "Album"]).status == 0)
    let third = try directory.write("third.json", CLIFixtures.third)
    #expect(try CommandRunner.run(["import", store, third, "--entity", "Album"]).status == 0)
    let last = try await iterator.next()
    #expect(last??.string("label") == "Another Label")
  }

  @Test(.timeLimit(.minutes(5))) func theFeedOfBatchesSendsEveryBatchInOrderFromEitherProcess() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let modelFile = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", store, "--model", modelFile]).status == 0)
    let first = try directory.write("first.json", CLIFixtures.first)
    #expect(try CommandRunner.run(["import", store, first]).status == 0)
    let ledger = try Ledger.open(at: store)
    var iterator = ledger.batches(after: 0, every: .milliseconds(50)).makeAsyncIterator()
    #expect(try await iterator.next()?.batchID == 1)  // already there
    var batch = ledger.makeBatch()
    try batch.stage([["name": "Tin Drum", "label": "Virgin Records"]], as: "Album")
    _ = try await ledger.apply(batch)  // this process
    let third = try directory.write("third.json", CLIFixtures.third)
    #expect(try CommandRunner.run(["import", store, third, "--entity", "Album", "--author", "cron"]).status == 0)
    #expect(try await iterator.next()?.batchID == 2)
    let fromAnother = try await iterator.next()
    #expect(fromAnother?.batchID == 3)
    #expect(fromAnother?.metadata.author == "cron")
  }

  @Test(.timeLimit(.minutes(5))) func aQueryObserverSeesItsFirstPageChange() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.path + "/store"
    let modelFile = try directory.write("model.json", CLIFixtures.model)
    #expect(try CommandRunner.run(["init", store, "--model", modelFile]).status == 0)
    let ledger = try Ledger.open(at: store)
    var pages = ledger.observe(Query("Album").sorted(by: "name"), every: .milliseconds(50)).makeAsyncIterator()
    #expect(try await pages.next()?.isEmpty == true)
    let first = try directory.write("first.json", CLIFixtures.first)
    #expect(try CommandRunner.run(["import", store, first]).status == 0)
    let names = try await pages.next()?.compactMap { $0.string("name") }
    #expect(names == ["Quiet Life", "Tin Drum"])
  }
}
