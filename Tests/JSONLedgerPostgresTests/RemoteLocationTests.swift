import JSONLedgerPostgres
import Testing

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
      ("postgres://app:s3cret@db/ledgers?sslmode=require", "unknown parameter"),
    ] {
      #expect {
        try RemoteLocation(url: url, environment: [:])
      } throws: { error in
        "\(error)".contains(words) && !"\(error)".contains("s3cret")
      }
    }
  }
}
