import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// Values an application keeps beside a store, outside its log.
@Suite("Local values")
struct LocalValuesTests {
  static func model() throws -> Model {
    try Model { Entity("Band", identity: ["name"]) { Attribute("name", .string) } }
  }

  @Test func aLocalValueIsKeptAcrossOpensAndIsNoPartOfTheData() throws {
    let directory = try TemporaryDirectory()
    do {
      let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
      defer { ledger.close() }
      var batch = ledger.makeBatch()
      try batch.stage([["name": "Can"]], as: "Band")
      _ = try ledger.applySynchronously(batch)
      try ledger.setLocalValue(Array("etag-1".utf8), forKey: "pull/https://example.com/bands")
      try ledger.setLocalValue([0, 1, 2], forKey: "other")
      try ledger.setLocalValue(nil, forKey: "other")
      #expect(try ledger.head == 1)
    }
    let ledger = try Ledger.open(at: directory.storePath)
    defer { ledger.close() }
    #expect(try ledger.localValue(forKey: "pull/https://example.com/bands") == Array("etag-1".utf8))
    #expect(try ledger.localValue(forKey: "other") == nil)
    #expect(try ledger.localValue(forKey: "head") == nil)
    // No batch, nothing exported, and verify (which replays the log) finds the store whole.
    #expect(try ledger.head == 1)
    _ = try ledger.verify()
    let export = try ledger.read { view in JSONWriter(options: [.sortedKeys]).string(from: try view.exportDocument()) }
    #expect(!export.contains("etag"))
  }

  @Test func aKeyThatCannotBeStoredAndAReadOnlyStoreAreRefused() throws {
    let directory = try TemporaryDirectory()
    do {
      let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
      defer { ledger.close() }
      #expect(throws: LedgerError.self) { try ledger.setLocalValue([1], forKey: "") }
      #expect(throws: LedgerError.self) { try ledger.setLocalValue([1], forKey: String(repeating: "k", count: 401)) }
    }
    var options = Ledger.Options()
    options.readOnly = true
    let readOnly = try Ledger.open(at: directory.storePath, options: options)
    defer { readOnly.close() }
    let refused = #expect(throws: LedgerError.self) { try readOnly.setLocalValue([1], forKey: "k") }
    #expect(refused?.code == .readOnly)
    #expect(try readOnly.localValue(forKey: "k") == nil)
  }
}
