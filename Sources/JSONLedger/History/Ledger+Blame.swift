public import Foundation
import JSONLedgerSupport

/// The batch that set one field's current value (`Ledger.blame(_:key:asOf:)`).
public struct FieldBlame: Sendable, Equatable {
  /// The attribute or relationship.
  public var field: String
  /// The newest batch that changed it.
  public var batchID: UInt64
  /// When that batch was applied.
  public var time: Date
  /// Who sent it, and why, as the batch says.
  public var author: String?
  public var message: String?
}

extension Ledger {
  /// For each field of an object — attribute or relationship — the batch that set the value it
  /// has now (or had right after batch `asOf`): the newest such batch that changed it, with its
  /// time, author and message, in the order of the field names. A field no batch set (never
  /// given) is not listed.
  public func blame(_ entity: String, key: JSONValue, asOf: UInt64? = nil) throws -> [FieldBlame] {
    var blamed: [String: FieldBlame] = [:]
    for entry in try log(entity, key: key) where entry.batchID <= asOf ?? .max {
      guard let change = entry.change else { continue }
      let described = try describe(change.withoutHiddenLinks)
      // A link is named `Entity.relationship`; the object's own field is the relationship.
      let links = described.links.map { $0.relationship.split(separator: ".").last.map(String.init) ?? $0.relationship }
      let fields = described.attributes.map(\.name) + links
      for field in fields where blamed[field] == nil {
        blamed[field] = FieldBlame(
          field: field, batchID: entry.batchID, time: entry.time, author: entry.metadata.author,
          message: entry.metadata.message)
      }
    }
    return blamed.values.sorted { $0.field < $1.field }
  }

  /// `blame(_:key:asOf:)` of the object whose identity is the Swift value `key`.
  public func blame(_ entity: String, key: some IdentityKey, asOf: UInt64? = nil) throws -> [FieldBlame] {
    try blame(entity, key: key.identityJSON, asOf: asOf)
  }

  /// `blame(_:key:asOf:)`, off the caller's executor.
  public func blame(_ entity: String, key: JSONValue, asOf: UInt64? = nil) async throws -> [FieldBlame] {
    try await runBriefly { try self.blame(entity, key: key, asOf: asOf) }
  }

  /// `blame(_:key:asOf:)`, off the caller's executor.
  public func blame(_ entity: String, key: some IdentityKey, asOf: UInt64? = nil) async throws -> [FieldBlame] {
    let key = key.identityJSON
    return try await runBriefly { try self.blame(entity, key: key, asOf: asOf) }
  }

  @available(*, deprecated, renamed: "blame(_:key:asOf:)", message: "the entity is unlabelled, as in object(_:key:)")
  public func blame(entity: String, key: JSONValue, asOf: UInt64? = nil) throws -> [FieldBlame] {
    try blame(entity, key: key, asOf: asOf)
  }

  @available(*, deprecated, renamed: "blame(_:key:asOf:)", message: "the entity is unlabelled, as in object(_:key:)")
  public func blame(entity: String, key: JSONValue, asOf: UInt64? = nil) async throws -> [FieldBlame] {
    try await blame(entity, key: key, asOf: asOf)
  }
}

extension FieldBlame {
  /// The blame as JSON: field, batch, time, author, message.
  public var jsonValue: JSONValue {
    [
      "field": .string(field), "batch": .number(JSONNumber(batchID)),
      "time": .string(Ledger.timeText(time)), "author": author.map { .string($0) } ?? .null,
      "message": message.map { .string($0) } ?? .null,
    ]
  }
}
