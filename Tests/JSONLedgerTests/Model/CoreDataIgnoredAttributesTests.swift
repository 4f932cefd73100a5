import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Core Data attributes with no JSON form")
struct CoreDataIgnoredAttributesTests {
  @Test func transientAndUntransformedTransformableAttributesAreNotMapped() throws {
    let directory = try TemporaryDirectory()
    let model = try Fixtures.coreDataModel(
      #"""
        <entity name="User">
          <attribute name="id" attributeType="Integer 64" optional="YES"/>
          <attribute name="draft" attributeType="String" optional="YES" transient="YES"/>
          <attribute name="ignored" attributeType="Transformable" optional="YES"/>
          <attribute name="tags" attributeType="Transformable" optional="YES">
            <userInfo><entry key="sync.valueTransformer" value="TagsTransformer"/></userInfo>
          </attribute>
        </entity>
      """#, in: directory)
    let user = try #require(model.resolved("User"))
    #expect(user.attributes.map(\.name) == ["id", "tags"])
    var options = Ledger.Options()
    options.transformers.passesUnknownThrough = true
    let ledger = try Ledger.open(at: directory.storePath, model: model, options: options)
    var batch = ledger.makeBatch()
    try batch.stage([["id": 1, "draft": "x", "ignored": "y", "tags": ["a"]]], as: "User")
    let summary = try ledger.applySynchronously(batch)
    #expect(Set(summary.ignoredKeys) == ["User.draft", "User.ignored"])
    let exported = try ledger.read { view in try view.exportJSON("User") }
    #expect(exported.arrayValue?.first?.objectValue?["ignored"] == nil)
    #expect(exported.arrayValue?.first?.objectValue?["draft"] == nil)
  }

  @Test(arguments: ["Integer 128", "Undefined", "Objectid"])
  func anAttributeOfATypeCoreDataDoesNotHaveIsRefusedByName(type: String) throws {
    let directory = try TemporaryDirectory()
    #expect {
      try Fixtures.coreDataModel(
        #"""
          <entity name="User">
            <attribute name="id" attributeType="Integer 64" optional="YES"/>
            <attribute name="score" attributeType="\#(type)" optional="YES"/>
          </entity>
        """#, in: directory)
    } throws: { error in
      "\(error)".contains("entities.User.attributes.score") && "\(error)".contains("\"\(type)\"")
    }
  }

  @Test func aTransientAttributeOfNoStoredTypeIsLeftOut() throws {
    let directory = try TemporaryDirectory()
    let model = try Fixtures.coreDataModel(
      #"""
        <entity name="User">
          <attribute name="id" attributeType="Integer 64" optional="YES"/>
          <attribute name="cache" attributeType="Undefined" optional="YES" transient="YES"/>
        </entity>
      """#, in: directory)
    #expect(model.resolved("User")?.attributes.map(\.name) == ["id"])
  }
}
