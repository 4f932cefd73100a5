import Testing

@testable import JSONLedgerPostgres

@Suite("Remote locations: URLs, the libpq variables, no password printed")
struct RemoteLocationTests {
  @Test func aURLReadsAndPrintsWithoutItsPassword() throws {
    let location = try RemoteLocation(
      url: "postgres://app:s3cret@db.internal:6432/ledgers", ledger: "bands", environment: [:])
    #expect(location.host == "db.internal")
    #expect(location.port == 6432)
    #expect(location.user == "app")
    #expect(location.password == "s3cret")
    #expect(location.database == "ledgers")
    #expect(location.description == "postgres://app@db.internal:6432/ledgers")
    #expect(!"\(location)".contains("s3cret"))
  }

  @Test func theLibpqVariablesFillWhatTheURLLeavesOut() throws {
    let environment = ["PGHOST": "/run/postgresql", "PGPORT": "5433", "PGUSER": "ops", "PGPASSWORD": "pw"]
    let location = try RemoteLocation(url: nil, environment: environment)
    #expect(location.socketDirectory == "/run/postgresql")
    #expect(location.port == 5433)
    #expect(location.user == "ops")
    #expect(location.database == "ops")
    #expect(location.password == "pw")
    #expect(!location.description.contains("pw"))
    let socket = try RemoteLocation(url: "postgres://app@/ledgers?host=/tmp/pg", environment: [:])
    #expect(socket.socketDirectory == "/tmp/pg")
  }

  @Test func badLocationsAreRefusedWithoutShowingThePassword() {
    for (url, words) in [
      ("mysql://app:s3cret@db/ledgers", "is not a PostgreSQL URL"),
      ("postgres://:s3cret@db/ledgers", "no user"),
      ("postgres://app:s3cret@db:70000/ledgers", "not"),
      ("postgres://app:s3cret@db/ledgers?colour=red", "unknown parameter"),
      ("postgres://app:s3cret@db/ledgers?sslmode=sometimes", "sslmode"),
    ] {
      #expect {
        try RemoteLocation(url: url, environment: [:])
      } throws: { error in
        "\(error)".contains(words) && !"\(error)".contains("s3cret")
      }
    }
  }

  /// H2: what a replica remembers of its remote reads back as the same ledger and folder,
  /// whatever characters the ledger's name and the socket folder hold.
  @Test(arguments: [("team#a", "/tmp/pg"), ("a&b#c%d e", "/tmp/sock&et#1 + 2"), ("plain", "/run/postgresql")])
  func aRememberedRemoteReadsBackAsItself(ledger: String, socket: String) throws {
    let location = try RemoteLocation(
      url:
        "postgres://app:pw@/ledgers?host=\(socket.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
      ledger: ledger, environment: [:])
    #expect(location.socketDirectory == socket)
    let back = try RemoteLocation.remembered(location.remembered, environment: [:])
    #expect(back.ledger == ledger)
    #expect(back.socketDirectory == socket)
    #expect(back.user == "app" && back.database == "ledgers")
    #expect(!location.remembered.contains("pw"))
  }

  /// H10: a URL that does not parse, or gives its password as a parameter, is refused without
  /// the password in the message.
  @Test(arguments: [
    "postgres://app:s3cr#et@db/ledgers", "postgres://app:s3c?ret@db/ledgers",
    "postgres://app@db/ledgers?password=s3cret&colour=red",
  ])
  func aPasswordNeverReachesAnError(url: String) {
    #expect {
      try RemoteLocation(url: url, environment: [:])
    } throws: { error in
      !"\(error)".contains("s3cr") && !"\(error)".contains("cret")
    }
  }
}
