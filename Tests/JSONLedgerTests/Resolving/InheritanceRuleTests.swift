import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Inheritance: abstract entities and siblings")
struct InheritanceRuleTests {
  static func model() throws -> Model {
    try Model {
      Entity("Vehicle", identity: ["id"], abstract: true) { Attribute("id", .int64) }
      Entity("Car", parent: "Vehicle") { Attribute("doors", .int64) }
      Entity("Bike", parent: "Vehicle") { Attribute("gears", .int64) }
      Entity("Shape", abstract: true) { Attribute("name", .string) }
      Entity("Circle", parent: "Shape") { Attribute("radius", .double) }
    }
  }

  @Test func aPayloadForAStoredCarCannotTurnItIntoABike() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var cars = ledger.makeBatch()
    try cars.stage([["id": 1, "doors": 4]], as: "Car")
    _ = try ledger.applySynchronously(cars)
    var bike = ledger.makeBatch()
    try bike.stage([["id": 1, "gears": 21]], as: "Bike")
    #expect {
      try ledger.applySynchronously(bike)
    } throws: { error in
      "\(error)".contains("Car") && "\(error)".contains("Bike")
    }
    let car = try ledger.read { view in try view.object("Vehicle", key: 1) }
    #expect(car?.entity == "Car")
    #expect(car?["gears"] == nil)
  }

  @Test func aPayloadForTheParentUpdatesTheStoredSubEntity() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var cars = ledger.makeBatch()
    try cars.stage([["id": 1, "doors": 4]], as: "Car")
    _ = try ledger.applySynchronously(cars)
    var update = ledger.makeBatch()
    try update.stage([["id": 1, "doors": 2]], as: "Vehicle")
    _ = try ledger.applySynchronously(update)
    #expect(try ledger.read { view in try view.object("Car", key: 1)?["doors"] } == .integer(2))
  }

  @Test func anAbstractEntityIsNeverInstantiatedWithOrWithoutAnIdentity() throws {
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: try Self.model())
    var keyed = ledger.makeBatch()
    try keyed.stage([["id": 7]], as: "Vehicle")
    #expect(throws: LedgerError.self) { try ledger.applySynchronously(keyed) }
    var unkeyed = ledger.makeBatch()
    try unkeyed.stage([["name": "blob"]], as: "Shape")
    #expect(throws: LedgerError.self) { try ledger.applySynchronously(unkeyed) }
    #expect(try ledger.head == 0)
  }
}
