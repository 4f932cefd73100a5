import Foundation
import JSONLedgerTestSupport
import Synchronization

/// A private PostgreSQL cluster for one test: `initdb` into a temporary folder (as the
/// `postgres` user when the tests run as root: PostgreSQL refuses root), `pg_ctl` on a free
/// port of 127.0.0.1 and a socket in that folder; stopped and removed when the test ends.
final class PostgresCluster: Sendable {
  /// The folder of PostgreSQL's server programs, or nil when they are not installed.
  static let binaries: String? = {
    let root = "/usr/lib/postgresql"
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
      let bin = "\(root)/\(version)/bin"
      if FileManager.default.isExecutableFile(atPath: bin + "/initdb") { return bin }
    }
    return nil
  }()

  static var isAvailable: Bool { binaries != nil }

  let directory: String
  let port: Int
  private let bin: String

  var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

  /// The certificate of a cluster that takes only TLS (`tlsOnly`), self-signed for
  /// 127.0.0.1: what `sslrootcert` names to verify it.
  var certificate: String { directory + "/server.crt" }

  /// `tlsOnly`: the cluster answers TCP connections only over TLS, with a certificate made
  /// here (`openssl`), as hosted PostgreSQL does.
  init(tlsOnly: Bool = false) throws {
    guard let bin = Self.binaries else { throw ClusterFailure("PostgreSQL's server programs are not installed") }
    self.bin = bin
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("jsonledger-pg-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    port = try Self.freePort()
    if getuid() == 0 { try Self.shell(["chown", "postgres:", directory]) }
    try asServerUser([
      bin + "/initdb", "-D", directory + "/data", "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
    ])
    if tlsOnly { try requireTLS() }
    try start()
  }

  /// A self-signed certificate for 127.0.0.1, TLS on, and plain TCP refused.
  private func requireTLS() throws {
    let data = directory + "/data"
    try asServerUser([
      "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", data + "/server.key", "-out", data + "/server.crt",
    ])
    try asServerUser(["chmod", "600", data + "/server.key"])
    try Self.shell(["cp", data + "/server.crt", certificate])
    try Self.shell(["chmod", "644", certificate])
    try asServerUser(["sh", "-c", "echo \"ssl = on\" >> \(data)/postgresql.conf"])
    try asServerUser([
      "sh", "-c",
      "printf 'local all all trust\\nhostssl all all 127.0.0.1/32 trust\\nhostnossl all all 0.0.0.0/0 reject\\n' > \(data)/pg_hba.conf",
    ])
  }

  /// Starts the server; a start that fails says how the server's log ends.
  func start() throws {
    do {
      try asServerUser([
        bin + "/pg_ctl", "-D", directory + "/data", "-l", directory + "/log", "-w", "-o",
        "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory) -c fsync=off -c max_connections=200", "start",
      ])
    } catch {
      let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
      let end = log.split(separator: "\n").suffix(5).joined(separator: "\n")
      throw ClusterFailure("\(error)\nthe server's log ends:\n\(end)")
    }
  }

  /// `pg_ctl stop -m fast`.
  func stop() throws {
    try asServerUser([bin + "/pg_ctl", "-D", directory + "/data", "-m", "fast", "-w", "stop"])
  }

  /// `pg_ctl restart -m fast`: every connection is terminated.
  func restart() throws {
    try asServerUser([bin + "/pg_ctl", "-D", directory + "/data", "-m", "fast", "-w", "restart"])
  }

  /// Runs SQL with psql and returns its unaligned output.
  func psql(_ sql: String) throws -> String {
    try Self.shell([bin + "/psql", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-At", "-c", sql])
  }

  deinit {
    _ = try? asServerUser([bin + "/pg_ctl", "-D", directory + "/data", "-m", "immediate", "stop"])
    try? FileManager.default.removeItem(atPath: directory)
  }

  @discardableResult
  private func asServerUser(_ arguments: [String]) throws -> String {
    try Self.shell(getuid() == 0 ? ["runuser", "-u", "postgres", "--"] + arguments : arguments)
  }

  @discardableResult
  static func shell(_ arguments: [String]) throws -> String {
    // posix_spawn and waitpid, not Foundation's Process: its wait was seen to miss the exit of
    // a runuser whose grandchild (the server) lives on. Output goes to a file, not a pipe: the
    // server would hold a pipe open for good.
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString).out").path
    defer { try? FileManager.default.removeItem(atPath: file) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = (["/usr/bin/env"] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, argv, environ)
    guard spawned == 0 else {
      throw ClusterFailure("cannot start \(arguments[0]): \(String(cString: strerror(spawned)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    let exited = (status & 0x7f) == 0
    let code = (status >> 8) & 0xff
    guard exited, code == 0 else {
      throw ClusterFailure("\(arguments.joined(separator: " ")) failed: \(text)")
    }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// A port of 127.0.0.1 free now, below the range the kernel hands out to outgoing
  /// connections (`ip_local_port_range`, from 32768 here), and not handed out before by this
  /// process. A port the kernel picks (a bind to port 0) comes from that range, where another
  /// test's client connection could take it before the server binds it: a server then failed
  /// to start in CI.
  static func freePort() throws -> Int {
    for _ in 0..<500 {
      let candidate = Int.random(in: 20_000..<32_768)
      guard handedOut.withLock({ $0.insert(candidate).inserted }) else { continue }
      if canBind(candidate) { return candidate }
    }
    throw ClusterFailure("no free port from 20000 to 32767")
  }

  private static let handedOut = Mutex<Set<Int>>([])

  /// Whether a socket can bind `port` of 127.0.0.1 now.
  private static func canBind(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    return bound == 0
  }
}

struct ClusterFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// Test fixtures: a small model and payloads.
enum ReplicaFixtures {
  static let model = """
    {"entities": {
      "Band": {"identity": "name", "collectionKey": "bands",
        "attributes": {"name": "string", "formed": "int32"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
      "Album": {"identity": "name",
        "attributes": {"name": "string", "label": "string", "plays": "int64"},
        "relationships": {"band": {"to": "Band", "inverse": "albums"}}}
    }}
    """

  /// Albums for one import: `count` of them named from `prefix`, all on one band.
  static func albums(_ prefix: String, count: Int, plays: Int = 0) -> String {
    let albums = (0..<count).map { #"{"name": "\#(prefix)-\#($0)", "band": "B\#($0 % 3)", "plays": \#(plays)}"# }
    return "[" + albums.joined(separator: ",") + "]"
  }

  /// A store with the fixture model that is no replica.
  static func plainStore(in directory: TemporaryDirectory) throws -> String {
    let store = directory.path + "/plain-\(UUID().uuidString.prefix(6))"
    _ = try CommandRunner.run(["init", store, "--model", try directory.write("plain-model.json", Self.model)])
    return store
  }

  /// A store with the fixture model and one batch, published to `cluster` as `ledger`.
  static func published(in directory: TemporaryDirectory, cluster: PostgresCluster, ledger: String = "main") throws
    -> String
  {
    let store = directory.path + "/leader"
    let model = try directory.write("model.json", Self.model)
    _ = try CommandRunner.run(["init", store, "--model", model])
    let first = try directory.write("first.json", albums("first", count: 5))
    _ = try CommandRunner.run(["import", store, first, "--entity", "Album"])
    let published = try CommandRunner.run(["remote", "init", store, "--remote", cluster.url, "--ledger", ledger])
    guard published.status == 0 else { throw ClusterFailure("remote init failed: \(published.error)") }
    return store
  }
}
