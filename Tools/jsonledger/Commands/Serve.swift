import ArgumentParser
import Foundation
import Hummingbird
import JSONLedger
import JSONLedgerPostgres
import JSONLedgerPull
import JSONLedgerServer
import Logging
import Metrics
import Prometheus

struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: "Serve the store's HTTP API (/v1, /openapi.json, /metrics) and its audit console (/).",
    discussion: """
      Binds 127.0.0.1 by default. With --token-file, every write needs `Authorization: Bearer TOKEN` \
      (and, with --token-for-reads, every read; the console asks for the token in its header). \
      A server on another address takes writes only with a token, or none with --read-only.
      """)

  @OptionGroup var storeOptions: StoreOptions

  @Option(help: "The address to bind.")
  var host = "127.0.0.1"

  @Option(help: "The port (0: any free one; the line printed at start names it).")
  var port = 8080

  @Option(help: "A file whose content (less surrounding whitespace) is the bearer token.")
  var tokenFile: String?

  @Flag(help: "Reads need the token too.")
  var tokenForReads = false

  @Flag(help: "Refuse every write (405).")
  var readOnly = false

  @Option(help: "Seconds a request body may take to arrive whole (408 after it).")
  var bodyTimeout = 60

  @Option(
    help: ArgumentHelp("A pull file: pull its sources beside the API (see jsonledger pull --plan).", valueName: "file"))
  var pull: String?

  @Option(help: ArgumentHelp("With --pull: how long after each run ends to pull again (10m).", valueName: "interval"))
  var pullEvery: Interval?

  @Option(
    help: ArgumentHelp(
      "With --pull: a header whose value is an environment variable's, NAME=VARIABLE.", valueName: "pair"))
  var pullHeaderEnv: [String] = []

  func validate() throws {
    guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, not \(port)") }
    guard (1...3600).contains(bodyTimeout) else {
      throw ValidationError("--body-timeout must be from 1 to 3600 seconds, not \(bodyTimeout)")
    }
    if tokenForReads, tokenFile == nil { throw ValidationError("--token-for-reads needs --token-file") }
    let loopback = ["127.0.0.1", "::1", "localhost"].contains(host)
    if !loopback, tokenFile == nil, !readOnly {
      throw ValidationError(
        "serving \(host) (not loopback) takes writes from anyone who reaches it: give --token-file, or --read-only")
    }
    // Read here to be refused with this command's usage; `run` reads it again to use it.
    if let tokenFile { _ = try Self.readToken(tokenFile) }
    if pull == nil, pullEvery != nil || !pullHeaderEnv.isEmpty {
      throw ValidationError("--pull-every and --pull-header-env go with --pull FILE")
    }
    if pull != nil, readOnly { throw ValidationError("a --read-only server takes no writes: it cannot --pull") }
  }

  func run() async throws {
    var options = LedgerServerOptions(tokenForReads: tokenForReads, readOnly: readOnly)
    if let tokenFile {
      options.token = try Self.readToken(tokenFile)
      Self.warnIfShared(tokenFile)
    }
    // On loopback, requests addressed to another name (DNS rebinding) are refused.
    if ["127.0.0.1", "::1", "localhost"].contains(host) { options.allowedHosts = LedgerServerOptions.loopbackHosts }
    options.bodyTimeout = .seconds(bodyTimeout)
    // A server that takes no writes opens the store read-only: it then serves a snapshot or a
    // read-only mount too.
    let ledger = try readOnly ? storeOptions.openForReading() : storeOptions.open()
    // A replica's server takes writes through its remote, as its CLI does.
    let writes: (any LedgerWrites)? = try Replica.ifReplica(ledger)
    // Hummingbird's request metrics and the ledger's own land in one registry: /metrics.
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    let router = Router()
    LedgerRoutes(ledger: ledger, options: options, metrics: registry, writes: writes).addRoutes(to: router)
    let store = storeOptions.store
    let host = host
    let serving = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let app = Application(
      router: router,
      // A request the HTTP parser refuses is answered as JSON, as the API's other errors are.
      server: .http1(
        configuration: .init(additionalChannelHandlers: [MalformedRequestHandler()], idleTimeout: .seconds(60))),
      configuration: .init(address: .hostname(host, port: port), serverName: "jsonledger"),
      onServerRunning: { channel in
        let bound = channel.localAddress?.port ?? 0
        Output.line("serving \(store) at http://\(host.contains(":") ? "[\(host)]" : host):\(bound)/")
        serving.continuation.yield()
      },
      logger: Logger(label: "jsonledger.serve")
    )
    // Pulls on a schedule beside the API, once the server is up; `/v1/changes` publishes
    // their batches as any other writer's.
    let pulling = try pull.map { file in
      var command = try Pull.parse(
        [storeOptions.store, "--plan", file] + pullHeaderEnv.flatMap { ["--header-env", $0] })
      let plan = try command.pullPlan()
      command.every = pullEvery
      let (every, pullCommand) = (pullEvery?.duration ?? .seconds(600), command)
      return Task {
        for await _ in serving.stream { break }
        while !Task.isCancelled {
          try await pullCommand.pullReportingFailure(plan, into: ledger)
          try await Task.sleep(for: every)
        }
      }
    }
    defer { pulling?.cancel() }
    try await app.runService()
  }

  /// Says so when other users may read the token file, as ssh does of a private key.
  static func warnIfShared(_ path: String) {
    var status = stat()
    guard stat(path, &status) == 0, status.st_mode & 0o077 != 0 else { return }
    Output.note(
      "warning: the token file \(path) can be read by other users (mode \(String(status.st_mode & 0o777, radix: 8))): "
        + "chmod 600 it")
  }

  static func readToken(_ path: String) throws -> String {
    let token: String
    do { token = try String(contentsOfFile: path, encoding: .utf8) } catch {
      throw ValidationError("cannot read the token file \(path): \(JSONFileError.reason(of: error))")
    }
    let trimmed = token.trimmingCharacters(in: .whitespacesAndNewlines)
    guard trimmed.count >= 16 else {
      throw ValidationError("the token in \(path) is \(trimmed.count) characters: use at least 16")
    }
    return trimmed
  }
}
