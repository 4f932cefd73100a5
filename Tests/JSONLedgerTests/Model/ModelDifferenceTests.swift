import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("What differs between two models")
struct ModelDifferenceTests {
  static func model(changed: Bool) throws -> Model {
    try Model(keyCase: changed ? .snakeCase : .camelCase) {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("formed", changed ? .int64 : .int32, indexed: changed)
        if !changed { Attribute("motto", .string) }
        if changed { Attribute("country", .string) }
        Relationship("albums", to: "Album", many: true, ordered: changed, inverse: "band")
      }
      Entity("Album", identity: ["name"]) {
        Attribute("name", .string)
        Relationship("band", to: "Band", inverse: "albums")
      }
      if changed { Entity("Label", identity: ["name"]) { Attribute("name", .string) } }
    }
  }

  @Test func eachDifferenceIsNamedByEntityAndProperty() throws {
    let differences = try Self.model(changed: false).differences(to: Self.model(changed: true)).map(\.description)
    #expect(
      differences == [
        "model: keyCase: camelCase → snakeCase",
        "Band.formed: indexed: false → true, type: int32 → int64",
        "Band.motto: removed",
        "Band.country: added",
        "Band.albums: ordered: false → true",
        "Label: added",
      ])
    #expect(try Self.model(changed: true).differences(to: Self.model(changed: true)).isEmpty)
  }

  @Test func renamesAreNamedAsRenamesNotAsARemovalAndAnAddition() throws {
    let old = try Model {
      Entity("Band", identity: ["name"]) {
        Attribute("name", .string)
        Attribute("genre", .string)
      }
    }
    let new = try Model {
      Entity("Group", identity: ["name"], renamedFrom: "Band") {
        Attribute("name", .string)
        Attribute("style", .string, indexed: true, renamedFrom: "genre")
      }
    }
    #expect(
      old.differences(to: new).map(\.description) == [
        "Band: renamed to Group", "Group.style: renamed from genre (JSON key stays genre)",
        "Group.style: indexed: false → true",
      ])
  }

  @Test func openingAStoreWithAnotherModelSaysWhatDiffers() throws {
    let directory = try TemporaryDirectory()
    _ = try Ledger.open(at: directory.storePath, model: try Self.model(changed: false))
    #expect {
      try Ledger.open(at: directory.storePath, model: try Self.model(changed: true))
    } throws: { error in
      let text = "\(error)"
      return text.contains("6 differences")
        && text.contains("Band.formed: indexed: false → true, type: int32 → int64")
        && text.contains("Label: added")
    }
  }
}
