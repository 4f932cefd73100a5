// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so that the library's build and tests never pay for
// GRDB. Run: swift run -c release --package-path Tools/Benchmarks jsonledger-bench --objects 100000
let package = Package(
  name: "JSONLedgerBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "JSONLedger", path: "../.."),
    .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
  ],
  targets: [
    // Callgrind's client requests (valgrind's headers; no-ops without them).
    .target(name: "CCallgrind"),
    .executableTarget(
      name: "jsonledger-bench",
      dependencies: [
        "CCallgrind",
        .product(name: "JSONLedger", package: "JSONLedger"),
        .product(name: "LMDB", package: "JSONLedger"),
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
    ),
    // Replication through PostgreSQL (a server you start: README.md says how).
    .executableTarget(
      name: "jsonledger-replication-bench",
      dependencies: [
        .product(name: "JSONLedger", package: "JSONLedger"),
        .product(name: "JSONLedgerPostgres", package: "JSONLedger"),
      ]
    ),
    // The HTTP API under load (wrk from Debian's packages).
    .executableTarget(
      name: "jsonledger-serve-bench",
      dependencies: [
        .product(name: "JSONLedger", package: "JSONLedger"),
        .product(name: "JSONLedgerServer", package: "JSONLedger"),
        .product(name: "Hummingbird", package: "hummingbird"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
