// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "JSONLedger",
  products: [
    .library(name: "JSONLedger", targets: ["JSONLedger"]),
    .library(name: "JSONLedgerJSON", targets: ["JSONLedgerJSON"]),
    .library(name: "LMDB", targets: ["LMDB"]),
    .library(name: "JSONLedgerPostgres", targets: ["JSONLedgerPostgres"]),
    .executable(name: "jsonledger", targets: ["jsonledger"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
    .package(url: "https://github.com/apple/swift-crypto.git", "3.9.0"..<"5.0.0"),
    // Property tests that shrink a failing history to a small one (tests only).
    .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
    // `swift package generate-documentation --target JSONLedger` builds the DocC catalog.
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
  ],
  targets: [
    .systemLibrary(
      name: "CLMDB",
      pkgConfig: "lmdb",
      providers: [.apt(["liblmdb-dev"])]
    ),
    .target(name: "LMDB", dependencies: ["CLMDB"]),
    // JSON in and out: parser, stream, value, writer, decoder; its own errors, nothing of a store.
    .target(name: "JSONLedgerJSON"),
    .target(
      name: "JSONLedger",
      dependencies: ["LMDB", "JSONLedgerJSON", .product(name: "Logging", package: "swift-log")],
      // With JSONLEDGER_INTERNAL_CHECKS set in the environment (CI sets it), debug builds check
      // hand-rolled structures' invariants, `LinkGraph._checkInvariants()` among them, after
      // every change; an app that depends on the package does not pay for them.
      swiftSettings: Context.environment["JSONLEDGER_INTERNAL_CHECKS"] == nil
        ? [] : [.define("JSONLEDGER_INTERNAL_CHECKS", .when(configuration: .debug))]
    ),
    // Replicas over PostgreSQL: the one target that needs NIO, so the core builds without it.
    .target(
      name: "JSONLedgerPostgres",
      dependencies: [
        "JSONLedger",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .executableTarget(
      name: "jsonledger",
      dependencies: [
        "JSONLedger",
        "JSONLedgerPostgres",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Tools/jsonledger"
    ),
    .target(name: "JSONLedgerTestSupport", path: "Tests/TestSupport"),
    .testTarget(name: "LMDBTests", dependencies: ["LMDB", "JSONLedgerTestSupport"]),
    .testTarget(
      name: "JSONLedgerTests",
      dependencies: [
        "JSONLedger", "LMDB", "JSONLedgerTestSupport", .product(name: "Logging", package: "swift-log"),
        .product(name: "PropertyBased", package: "swift-property-based"),
      ],
      resources: [.copy("Fixtures")]
    ),
    .testTarget(
      name: "JSONLedgerCLITests", dependencies: ["jsonledger", "JSONLedger", "LMDB", "JSONLedgerTestSupport"]),
    .testTarget(
      name: "JSONLedgerPostgresTests",
      dependencies: ["jsonledger", "JSONLedger", "JSONLedgerPostgres", "JSONLedgerTestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .enableUpcomingFeature("ExistentialAny"),
      .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
