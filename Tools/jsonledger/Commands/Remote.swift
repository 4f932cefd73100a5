import ArgumentParser
import Foundation
@_spi(Replication) import JSONLedger
import JSONLedgerPostgres

/// `--remote` and `--ledger`: a PostgreSQL database and a ledger in it.
struct RemoteOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "The PostgreSQL database: postgres://user[:password]@host[:port]/database (?host=/socket/dir for a socket).",
      discussion: "PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE fill what the URL leaves out."))
  var remote: String?

  @Option(help: "The ledger's name in that database.")
  var ledger = "default"

  func location() throws -> RemoteLocation {
    try RemoteLocation(url: remote, ledger: ledger)
  }
}

struct Remote: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "remote",
    abstract: "A store's remote log in PostgreSQL: publish it, see where a replica stands, verify it.",
    subcommands: [RemoteInit.self, RemoteStatus.self, RemoteVerify.self])
}

struct RemoteInit: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "init",
    abstract: "Publish a store's log to PostgreSQL (same batch ids and bytes); the store becomes a replica.")

  @OptionGroup var storeOptions: StoreOptions
  @OptionGroup var remoteOptions: RemoteOptions

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let ledger = try storeOptions.open()
    let replica = try await Replica.publish(ledger, to: try remoteOptions.location())
    let head = try ledger.head
    if json {
      Output.json([
        "remote": .string(replica.remote.description), "ledger": .string(replica.remote.ledger),
        "batches": .number(JSONNumber(head)),
      ])
    } else {
      Output.line(
        "published \(head) batch\(head == 1 ? "" : "es") to \(replica.remote) as ledger \"\(replica.remote.ledger)\"; \(storeOptions.store) is now a replica"
      )
    }
  }
}

struct RemoteStatus: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status", abstract: "A replica's local head, the remote's head, and the lag between them.")

  @OptionGroup var storeOptions: StoreOptions

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let replica = try ReplicaRoute.replica(of: try storeOptions.open(), store: storeOptions.store)
    let status = try await replica.status()
    if json {
      Output.json([
        "remote": .string(replica.remote.description), "ledger": .string(replica.remote.ledger),
        "localHead": .number(JSONNumber(status.localHead)),
        "remoteHead": .number(JSONNumber(status.remoteHead)), "lag": .number(JSONNumber(status.lag)),
      ])
    } else {
      Output.line("remote: \(replica.remote) (ledger \"\(replica.remote.ledger)\")")
      Output.line("local head: batch \(status.localHead); remote head: batch \(status.remoteHead); lag: \(status.lag)")
    }
  }
}

struct RemoteVerify: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract: "Check the remote's chain of checksums, that every local record is the remote's, and the store.")

  @OptionGroup var storeOptions: StoreOptions

  func run() async throws {
    let replica = try ReplicaRoute.replica(of: try storeOptions.open(), store: storeOptions.store)
    let report = try await replica.verifyAgainstRemote()
    Output.line(
      "ok: the remote's \(report.remoteHead) records chain; the replica's \(report.batches) are the remote's, and the store verifies"
    )
  }
}

struct Clone: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "clone",
    abstract: "Build a new replica from a remote log (from batch 1), then verify it.")

  @Argument(help: "The PostgreSQL URL (as --remote takes it).")
  var url: String

  @Argument(help: "The new store's directory.")
  var store: String

  @Option(help: "The ledger's name in that database.")
  var ledger = "default"

  @Flag(help: "Replace a store already there once the new one is whole (how a diverged replica recovers).")
  var reset = false

  @Option(
    help: "Start from this backup of a store of the ledger (`jsonledger backup`) and apply only the later batches.")
  var fromBackup: String?

  @Flag(help: "Apply the remote's log from batch 1, even where a snapshot would start the store later.")
  var fullLog = false

  func run() async throws {
    let location = try RemoteLocation(url: url, ledger: ledger)
    let replica = try await Replica.clone(
      from: location, into: store, reset: reset, fromBackup: fromBackup, fromSnapshot: !fullLog)
    let (first, head) = try replica.ledger.logExtent()
    let from = first > 1 ? " (from the snapshot at batch \(first))" : ""
    Output.line(
      "cloned \(head) batch\(head == 1 ? "" : "es") of \(location) (ledger \"\(ledger)\") into \(store)\(from)")
  }
}

struct Follow: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "follow",
    abstract: "Apply a replica's remote records as they are committed (until interrupted).")

  @OptionGroup var storeOptions: StoreOptions

  // A follower's records are the remote's: one a machine crash loses is fetched again, so a
  // follower may commit without a flush each (noMetaSync, noSync) where a writer should not.
  @OptionGroup var writeOptions: WriteOptions

  @Flag(help: "Stop once the replica holds the remote's head as it was at the start.")
  var untilCaughtUp = false

  @Option(help: "How often to look for records when no notification comes, in milliseconds.")
  var pollInterval = 1000

  @Flag(help: "Print machine-readable JSON (a line per catch-up).")
  var json = false

  func validate() throws {
    guard (10...600_000).contains(pollInterval) else {
      throw ValidationError("--poll-interval is from 10 to 600000 milliseconds")
    }
  }

  func run() async throws {
    let replica = try ReplicaRoute.replica(
      of: try storeOptions.open(durability: writeOptions.durability), store: storeOptions.store)
    let json = self.json
    try await replica.follow(untilCaughtUp: untilCaughtUp, pollInterval: .milliseconds(pollInterval)) { report in
      if json {
        Output.jsonLine([
          "applied": .number(JSONNumber(report.applied)), "head": .number(JSONNumber(report.head)),
        ])
      } else {
        Output.line("applied \(report.applied) record\(report.applied == 1 ? "" : "s"); head: batch \(report.head)")
      }
    }
    if untilCaughtUp {
      let head = try replica.ledger.head
      if json {
        Output.jsonLine(["caughtUp": true, "head": .number(JSONNumber(head))])
      } else {
        Output.line("caught up: batch \(head)")
      }
    }
  }
}

/// Writes go where the store's log lives: through the remote for a replica, else to the store.
enum ReplicaRoute {
  static func replica(of ledger: Ledger, store: String) throws -> Replica {
    guard let replica = try Replica.ifReplica(ledger) else {
      throw CommandFailure(message: "\(store) is not a replica: publish it with `jsonledger remote init` first")
    }
    return replica
  }

  /// Runs one write: through the remote's head lock when `ledger` is a replica's.
  static func write<R: Sendable>(
    _ ledger: Ledger, _ what: String, _ body: @escaping @Sendable (Ledger) throws -> R
  ) async throws -> R {
    if let replica = try Replica.ifReplica(ledger) { return try await replica.write(what, body) }
    return try body(ledger)
  }

  static func isReplica(_ ledger: Ledger) throws -> Bool { try Replica.ifReplica(ledger) != nil }
}
