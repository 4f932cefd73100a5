import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Core Data models: what is honoured and what is ignored")
struct CoreDataModelRulesTests {
  @Test func aUniquenessConstraintIsTheIdentityWhenNoAnnotationNamesOne() throws {
    let directory = try TemporaryDirectory()
    let model = try Fixtures.coreDataModel(
      #"""
      <entity name="Cipher"><attribute name="id" attributeType="String"/><attribute name="userId" attributeType="String"/>
        <uniquenessConstraints><uniquenessConstraint><constraint value="userId"/><constraint value="id"/></uniquenessConstraint></uniquenessConstraints>
      </entity>
      <entity name="Tagged"><attribute name="code" attributeType="String">
        <userInfo><entry key="sync.isPrimaryKey" value="YES"/></userInfo></attribute>
        <attribute name="id" attributeType="String"/>
        <uniquenessConstraints><uniquenessConstraint><constraint value="id"/></uniquenessConstraint></uniquenessConstraints>
      </entity>
      <entity name="Plain"><attribute name="title" attributeType="String" optional="YES"/></entity>
      """#, in: directory)
    #expect(model.resolved("Cipher")?.identity == ["userId", "id"])
    #expect(model.resolved("Tagged")?.identity == ["code"])
    #expect(model.insertOnlyEntities == ["Plain"])
  }

  @Test func fetchIndexesAndIndexedAttributesAreIndexed() throws {
    let directory = try TemporaryDirectory()
    let model = try Fixtures.coreDataModel(
      #"""
      <entity name="Book"><attribute name="id" attributeType="String"/>
        <attribute name="title" attributeType="String" optional="YES"/>
        <attribute name="isbn" attributeType="String" optional="YES" indexed="YES"/>
        <attribute name="year" attributeType="Integer 32" optional="YES"/>
        <fetchIndex name="byTitle"><fetchIndexElement property="title" type="Binary" order="ascending"/></fetchIndex>
      </entity>
      """#, in: directory)
    let book = try #require(model.entity(named: "Book"))
    #expect(book.attributes.filter(\.isIndexed).map(\.name) == ["title", "isbn"])
  }

  @Test func anOrderedFlagOnAToOneIsIgnoredWithAWarning() throws {
    let directory = try TemporaryDirectory()
    let model = try Fixtures.coreDataModel(
      #"""
      <entity name="Team"><attribute name="id" attributeType="String"/>
        <relationship name="captain" optional="YES" maxCount="1" ordered="YES" destinationEntity="Player"/></entity>
      <entity name="Player"><attribute name="id" attributeType="String"/></entity>
      """#, in: directory)
    #expect(model.entity(named: "Team")?.relationships.first?.isOrdered == false)
    #expect(model.warnings.count == 1)
    #expect(model.warnings.first?.contains("Team.captain") == true)
  }

  @Test(arguments: ["", "<model/>", "<notAModel/>", "<model>"])
  func aModelWithoutEntitiesIsAnError(contents: String) throws {
    let directory = try TemporaryDirectory()
    let folder = directory.path + "/Empty.xcdatamodel"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try Data(contents.utf8).write(to: URL(fileURLWithPath: folder + "/contents"))
    #expect(throws: ModelError.self) { try Model(contentsOf: folder) }
  }

  @Test func deletionRulesAreReadAndKeptInTheStoredModel() throws {
    let directory = try TemporaryDirectory()
    let model = try Fixtures.coreDataModel(
      #"""
      <entity name="Folder"><attribute name="id" attributeType="String"/>
        <relationship name="items" toMany="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="folder"/>
        <relationship name="locks" toMany="YES" deletionRule="Deny" destinationEntity="Item" inverseName="lockedFolder"/></entity>
      <entity name="Item"><attribute name="id" attributeType="String"/>
        <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="items"/>
        <relationship name="lockedFolder" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Folder" inverseName="locks"/></entity>
      """#, in: directory)
    let rules = model.entity(named: "Folder")?.relationships.map(\.deletionRule)
    #expect(rules == [.cascade, .deny])
    #expect(model.entity(named: "Item")?.relationships.map(\.deletionRule) == [.nullify, .nullify])
    #expect(try Model(json: model.jsonValue) == model)
  }
}
