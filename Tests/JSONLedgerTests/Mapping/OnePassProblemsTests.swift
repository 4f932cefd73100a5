import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

/// The user review's sync job met its problems in rounds: type errors, then on the next run a
/// missing identity, then a missing non-optional attribute. One run names them all.
@Suite("Every problem of a batch or a model file in one pass")
struct OnePassProblemsTests {
  static func model() throws -> Model {
    try Model {
      Entity("Issue", identity: ["id"]) {
        Attribute("id", .int64)
        Attribute("title", .string, optional: false)
        Attribute("votes", .int32)
      }
    }
  }

  static let payload: JSONValue = [
    ["id": 1, "title": "a", "votes": "many"],  // a type error
    ["title": "no id"],  // no identity
    ["id": 3],  // a new Issue without its title
    ["id": "x", "title": "t"],  // an identity of the wrong type: one problem, not two
    ["id": 5, "title": "fine"],
  ]

  @Test func typeErrorsMissingIdentitiesAndMissingAttributesComeTogether() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var batch = ledger.makeBatch()
    try batch.stage(Self.payload, as: "Issue")
    #expect(batch.problems.map(\.path) == ["[0].votes", "[1]", "[3].id"])
    #expect {
      try ledger.applySynchronously(batch)
    } throws: { error in
      guard let mapping = (error as? LedgerError)?.mapping else { return false }
      let lines = mapping.problems.map(\.description)
      return lines.count == 4 && lines[0].contains("[0].votes") && lines[1].contains("identity \"id\" is missing")
        && lines[2].contains("[3].id") && lines[3].contains("[2]: a new Issue needs title")
    }
    #expect(try ledger.head == 0)
  }

  @Test func aModelFileNamesItsTypingsAndItsReferencesInOnePass() throws {
    let json: JSONValue = [
      "entities": [
        "A": [
          "identity": "id", "attributes": ["id": "int65", "x": ["type": "string", "bogus": 1]],
          "relationships": ["r": ["to": "Nope"]],
        ],
        "B": ["identity": "zz", "attributes": [:]],
      ]
    ]
    #expect {
      try Model(json: json)
    } throws: { error in
      let places = (error as? ModelError)?.problems.map(\.place) ?? []
      return places == [
        "entities.A.attributes.id", "entities.A.attributes.x.bogus", "entities.A.relationships.r.to",
        "entities.B.identity",
      ]
    }
    // An element left out (an attribute that is not an object) is not reported again as missing.
    let dropped: JSONValue = ["entities": ["A": ["identity": "id", "attributes": ["id": 5]]]]
    #expect {
      try Model(json: dropped)
    } throws: { error in
      (error as? ModelError)?.problems.map(\.place) == ["entities.A.attributes.id"]
    }
  }
}
