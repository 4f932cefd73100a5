import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Model loading and validation")
struct ModelTests {
  @Test func modelFileRoundTripsThroughItsJSON() throws {
    let model = try Fixtures.bandsModel()
    let reloaded = try Model(json: model.jsonValue)
    #expect(reloaded == model)
    #expect(reloaded.entities.map(\.name) == ["Band", "Album", "BandMember", "Musician"])
  }

  @Test(
    arguments: [
      (
        #"{"entities": {"Band": {"attributes": {"name": "text"}}}}"#, "entities.Band.attributes.name",
        "is not an attribute type"
      ),
      (
        #"{"entities": {"Band": {"identity": "title", "attributes": {"name": "string"}}}}"#, "entities.Band.identity",
        "is not an attribute of Band"
      ),
      (#"{"entities": {"Band": {"colour": "red", "attributes": {}}}}"#, "entities.Band.colour", "unknown key"),
      (
        #"{"entities": {"A": {"relationships": {"b": {"to": "B", "inverse": "x"}}}, "B": {}}}"#,
        "entities.A.relationships.b.inverse", "is not a relationship of B"
      ),
      (
        #"{"entities": {"A": {"relationships": {"b": {"to": "B", "inverse": "a"}}}, "B": {"relationships": {"a": {"to": "C"}}}, "C": {}}}"#,
        "entities.A.relationships.b.inverse", "not back to A"
      ),
      (
        #"{"entities": {"A": {"relationships": {"b": {"to": "Nope"}}}}}"#, "entities.A.relationships.b.to",
        "is not an entity"
      ),
      (#"{"entities": {"A": {"parent": "A"}}}"#, "entities.A.parent", "inheritance cycle"),
      (
        #"{"entities": {"Band": {"identity": ["name", "name"], "attributes": {"name": "string"}}}}"#,
        "entities.Band.identity", #""name" is listed twice"#
      ),
      (#"{"keyCase": "kebab", "entities": {}}"#, "keyCase", "is not one of"),
      (
        #"{"entities": {"A": {"attributes": {"x": {"type": "string", "jsonKey": "a..b"}}}}}"#,
        "entities.A.attributes.x.jsonKey", "not a valid JSON key"
      ),
    ] as [(String, String, String)])
  func invalidModelsNameThePlace(text: String, place: String, reason: String) throws {
    #expect {
      try Model(json: try JSONParser.parse(text))
    } throws: { error in
      guard let model = error as? ModelError else { return false }
      return model.problems.contains { $0.place == place && $0.reason.contains(reason) }
    }
  }

  /// A store made before an identity that lists an attribute twice was refused keys its
  /// objects by the identity as listed: it keeps opening with the model it keeps, and
  /// migrates to the model that lists the attribute once.
  @Test func aStoredModelWhoseIdentityListsAnAttributeTwiceStillOpensAndMigrates() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path + "/store"
    let attributes = #""attributes": {"name": "string", "formed": "int32"}"#
    let once = try Model(json: JSONParser.parse(#"{"entities": {"Band": {"identity": ["name"], \#(attributes)}}}"#))
    do {
      let ledger = try Ledger.open(at: path, model: once)
      defer { ledger.close() }
      // What an earlier release stored for such a model.
      let twice = #"{"entities": {"Band": {"identity": ["name", "name"], \#(attributes)}}}"#
      try ledger.environment.write { txn in
        try txn.put(Array(twice.utf8), forKey: MetaKey.model, in: ledger.layout.meta)
      }
    }
    do {
      let stored = try Ledger.open(at: path)
      defer { stored.close() }
      #expect(stored.model.entity(named: "Band")?.identity == ["name", "name"])
      var batch = stored.makeBatch()
      try batch.stage(json: Array(#"[{"name": "Wire", "formed": 1976}]"#.utf8), as: "Band")
      #expect(try stored.applySynchronously(batch).created == 1)
    }
    try Ledger.migrate(at: path, to: once)
    let migrated = try Ledger.open(at: path, model: once)
    defer { migrated.close() }
    let formed = try migrated.read { view in try view.object("Band", key: "Wire")?["formed"] }
    #expect(formed == .integer(1976))
  }

  @Test func inheritanceGivesAttributesRelationshipsAndIdentity() throws {
    let model = try Model {
      Entity("Car", identity: ["id"], subentityKey: "kind") {
        Attribute("id", .int64)
        Attribute("maxSpeed", .int32)
        Relationship("passengers", to: "Person", many: true, inverse: "car")
      }
      Entity("Racecar", parent: "Car") { Attribute("team", .string) }
      Entity("Person", identity: ["id"]) {
        Attribute("id", .int64)
        Relationship("car", to: "Car", inverse: "passengers")
      }
    }
    let racecar = try #require(model.resolved("Racecar"))
    #expect(racecar.attributes.map(\.name) == ["id", "maxSpeed", "team"])
    #expect(racecar.identity == ["id"])
    #expect(racecar.rootName == "Car")
    #expect(model.resolved("Car")?.family == ["Car", "Racecar"])
  }

  @Test func xcodeCoreDataModelWithAnnotationsOfAllFourLibraries() throws {
    let directory = try TemporaryDirectory()
    let bundle = directory.path + "/Shop.xcdatamodeld"
    try FileManager.default.createDirectory(atPath: bundle + "/Shop 2.xcdatamodel", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: bundle + "/Shop.xcdatamodel", withIntermediateDirectories: true)
    try Data("<model/>".utf8).write(to: URL(fileURLWithPath: bundle + "/Shop.xcdatamodel/contents"))
    try Data(
      #"""
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Shop 2.xcdatamodel</string></dict></plist>
      """#.utf8
    ).write(to: URL(fileURLWithPath: bundle + "/.xccurrentversion"))
    try Data(
      #"""
      <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <model type="com.apple.IDECoreDataModeler.DataModel">
        <entity name="User" syncable="YES">
          <attribute name="remoteID" attributeType="Integer 64" optional="YES"/>
          <attribute name="fullName" attributeType="String" optional="YES">
            <userInfo><entry key="hyper.remoteKey" value="name"/><entry key="sync.remoteKey" value="full_name"/></userInfo>
          </attribute>
          <attribute name="password" attributeType="String" optional="YES">
            <userInfo><entry key="sync.nonExportable" value="NO"/></userInfo>
          </attribute>
          <relationship name="orders" toMany="YES" destinationEntity="Order" inverseName="user" inverseEntity="Order"/>
        </entity>
        <entity name="Order">
          <attribute name="number" attributeType="String">
            <userInfo><entry key="sync.isPrimaryKey" value="YES"/></userInfo>
          </attribute>
          <attribute name="total" attributeType="Decimal"/>
          <relationship name="user" maxCount="1" destinationEntity="User" inverseName="orders" inverseEntity="User"/>
        </entity>
        <entity name="Card">
          <attribute name="suit" attributeType="String"/>
          <attribute name="value" attributeType="String"/>
          <userInfo><entry key="identityAttributes" value="suit, value"/></userInfo>
        </entity>
        <entity name="Album">
          <attribute name="title" attributeType="String">
            <userInfo><entry key="JC.isIdentifier" value="Yes"/></userInfo>
          </attribute>
        </entity>
        <entity name="Character">
          <attribute name="identifier" attributeType="Integer 64">
            <userInfo><entry key="JSONKeyPath" value="id"/></userInfo>
          </attribute>
          <attribute name="realName" attributeType="String">
            <userInfo><entry key="JSONKeyPath" value="real_name"/></userInfo>
          </attribute>
          <attribute name="secret" attributeType="String"/>
          <userInfo><entry key="identityAttribute" value="identifier"/></userInfo>
        </entity>
      </model>
      """#.utf8
    ).write(to: URL(fileURLWithPath: bundle + "/Shop 2.xcdatamodel/contents"))
    let model = try Model(contentsOf: bundle)
    let user = try #require(model.resolved("User"))
    #expect(user.identity == ["remoteID"])
    #expect(user.attributeIndex["fullName"]?.jsonKey == "full_name")
    #expect(user.attributeIndex["password"]?.isExported == false)
    #expect(model.resolved("Order")?.identity == ["number"])
    #expect(model.resolved("Order")?.attributeIndex["total"]?.type == .decimal)
    #expect(model.resolved("Card")?.identity == ["suit", "value"])
    #expect(model.resolved("Album")?.identity == ["title"])
    #expect(model.resolved("Character")?.identity == ["identifier"])
    #expect(model.entity(named: "Character")?.mapsOnlyCustomKeys == true)

    let ledger = try Ledger.open(at: directory.storePath, model: model)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1699, "real_name": "Bruce Wayne", "secret": "Batman"]], as: "Character")
    try batch.stage([["id": 7, "full_name": "Ada", "orders": [["number": "A-1", "total": "12.20"]]]], as: "User")
    _ = try ledger.applySynchronously(batch)
    try ledger.read { view throws in
      let character = try #require(try view.object("Character", key: 1699))
      #expect(character["realName"] == .string("Bruce Wayne"))
      #expect(character["secret"] == nil)  // Groot: only JSONKeyPath properties map
      let order = try #require(try view.object("Order", key: "A-1"))
      #expect(order["total"] == .decimal(Decimal(string: "12.20")!))
      let exported = try view.exportJSON(try #require(try view.object("User", key: 7)))
      #expect(exported["password"] == nil)
      #expect(exported["full_name"] == "Ada")
    }
  }

  @Test func unregisteredTransformerFailsToOpenUnlessPassingThrough() throws {
    let model = try Model { Entity("A", identity: ["id"]) { Attribute("id", .string, transformer: "Upper") } }
    let directory = try TemporaryDirectory()
    #expect {
      try Ledger.open(at: directory.storePath, model: model)
    } throws: { error in
      "\(error)".contains("\"Upper\" is not registered") && "\(error)".contains("entities.A.attributes.id.transformer")
    }
    var options = Ledger.Options()
    options.transformers.passesUnknownThrough = true
    _ = try Ledger.open(at: directory.storePath, model: model, options: options)
  }

  @Test func registeredTransformerRunsForwardOnImportAndReverseOnExport() throws {
    let model = try Model {
      Entity("Character", identity: ["identifier"]) {
        Attribute("identifier", .int64, jsonKey: "id", transformer: "StringToInt")
      }
    }
    var options = Ledger.Options()
    options.transformers.register(
      "StringToInt",
      forward: { value in value.stringValue.flatMap { Int($0) }.map { .number(JSONNumber($0)) } ?? value },
      reverse: { value in .string(JSONWriter().string(from: value)) })
    let directory = try TemporaryDirectory()
    let ledger = try Ledger.open(at: directory.storePath, model: model, options: options)
    var batch = ledger.makeBatch()
    try batch.stage([["id": "1699"]], as: "Character")
    _ = try ledger.applySynchronously(batch)
    let exported = try ledger.read { view in try view.exportJSON("Character") }
    #expect(exported == [["id": "1699"]])
    #expect(try ledger.read { view in try view.object("Character", key: 1699) } != nil)
  }
}
