// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "JSONLedger",
  products: [
    .library(name: "JSONLedger", targets: ["JSONLedger"]),
    .library(name: "JSONLedgerJSON", targets: ["JSONLedgerJSON"]),
    .library(name: "LMDB", targets: ["LMDB"]),
    .library(name: "JSONLedgerPostgres", targets: ["JSONLedgerPostgres"]),
    .library(name: "JSONLedgerServer", targets: ["JSONLedgerServer"]),
    .library(name: "JSONLedgerPull", targets: ["JSONLedgerPull"]),
    .executable(name: "jsonledger", targets: ["jsonledger"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
    .package(url: "https://github.com/apple/swift-crypto.git", "3.9.0"..<"5.0.0"),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
    // TLS to PostgreSQL (`sslmode`); in the graph already through postgres-nio.
    .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.4.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
    // `pull`'s HTTP client; in the graph already through HummingbirdTesting.
    .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.20.0"),
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
    // Hash and name tables, FNV-1a, byte appending: generic helpers of the core, no product of
    // their own. Their API is `public` and `@inlinable` so that the hot paths that use them
    // specialise and inline across the module boundary as they did inside it: Swift 6.3 does
    // neither for `@inlinable package` (measured with callgrind; RESULTS.md).
    // glibc's `malloc.h`, for handing a large batch's freed memory back (`FreedMemory`).
    .systemLibrary(name: "CMalloc"),
    .target(name: "JSONLedgerSupport", dependencies: ["CMalloc"]),
    .target(
      name: "JSONLedger",
      dependencies: [
        "LMDB", "JSONLedgerJSON", "JSONLedgerSupport", .product(name: "Logging", package: "swift-log"),
      ],
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
        "JSONLedger", "JSONLedgerSupport",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The HTTP API and the audit console (Hummingbird): routes an app adds to its own server.
    .target(
      name: "JSONLedgerServer",
      dependencies: [
        "JSONLedger", "JSONLedgerSupport",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "Logging", package: "swift-log"),
      ],
      resources: [.copy("Resources/openapi.json")]
    ),
    // Pulls from live HTTP APIs (AsyncHTTPClient): pages, retries, one batch per run.
    .target(
      name: "JSONLedgerPull",
      dependencies: [
        "JSONLedger",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        // To tell a TLS failure (not tried again) from a lost connection (tried again).
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "Crypto", package: "swift-crypto"),
      ]
    ),
    .executableTarget(
      name: "jsonledger",
      dependencies: [
        "JSONLedger",
        "JSONLedgerPostgres",
        "JSONLedgerServer",
        "JSONLedgerPull",
        "JSONLedgerSupport",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "Prometheus", package: "swift-prometheus"),
      ],
      path: "Tools/jsonledger"
    ),
    .target(name: "JSONLedgerTestSupport", path: "Tests/TestSupport"),
    .testTarget(name: "LMDBTests", dependencies: ["LMDB", "JSONLedgerTestSupport"]),
    .testTarget(
      name: "JSONLedgerTests",
      dependencies: [
        "JSONLedger", "JSONLedgerSupport", "LMDB", "JSONLedgerTestSupport",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PropertyBased", package: "swift-property-based"),
      ],
      resources: [.copy("Fixtures")]
    ),
    .testTarget(
      name: "JSONLedgerCLITests", dependencies: ["jsonledger", "JSONLedger", "LMDB", "JSONLedgerTestSupport"]),
    .testTarget(
      name: "JSONLedgerServerTests",
      dependencies: [
        "JSONLedger", "JSONLedgerServer", "JSONLedgerTestSupport",
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Prometheus", package: "swift-prometheus"),
      ]),
    .testTarget(
      name: "JSONLedgerPullTests",
      dependencies: [
        "jsonledger", "JSONLedger", "JSONLedgerPull", "JSONLedgerTestSupport",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
      ]),
    .testTarget(
      name: "JSONLedgerPostgresTests",
      dependencies: [
        "jsonledger", "JSONLedger", "JSONLedgerPostgres", "JSONLedgerTestSupport",
        .product(name: "Logging", package: "swift-log"),
      ]),
  ],
  swiftLanguageModes: [.v6]
)

// CI builds with JSONLEDGER_WARNINGS_AS_ERRORS set: a warning in this package's own code is an
// error there (the dependencies' warnings stay warnings). Unset, the build is as a user's.
let warningsAsErrors: [SwiftSetting] =
  Context.environment["JSONLEDGER_WARNINGS_AS_ERRORS"] == nil ? [] : [.unsafeFlags(["-warnings-as-errors"])]

for target in package.targets where target.type != .system {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .enableUpcomingFeature("ExistentialAny"),
      .enableUpcomingFeature("InternalImportsByDefault"),
    ] + warningsAsErrors
}
