import Foundation
import Testing

@testable import JSONLedger

@Suite("Decoding stored states")
struct StateDecodingTests {
  private func encoded(_ state: ObjectState, model: Model) -> [UInt8] {
    var writer = BinaryWriter()
    StateCoding.write(state, since: 12, model: model, into: &writer)
    return writer.bytes
  }

  @Test func aStateDecodesTheSameWhetherItsNamesAreTheModelsOrNot() throws {
    let model = MappingRuleTests.model
    var state = ObjectState(entity: "User", identity: [.integer(7)])
    state.links[1] = [3, 9]
    let known: [String: AttributeValue] = [
      "remoteID": .integer(7), "age": .integer(40), "firstName": .string("Ada"), "userType": .string("admin"),
    ]
    // Names the model lacks, sorting before, between and after its own, and one a prefix of a model name.
    let unknown: [String: AttributeValue] = [
      "aaa": .bool(true), "firstNam": .string("x"), "nickname": .string("é"), "zzz": .double(1.5), "é": .integer(1),
    ]
    for attributes in [known, unknown, known.merging(unknown) { $1 }, [:]] {
      state.attributes = AttributeList(attributes)
      let decoded = try #require(try StateCoding.decode(encoded(state, model: model), model: model))
      #expect(decoded.state == state)
      #expect(decoded.since == 12)
      #expect(decoded.deltas.isEmpty)
    }
    var other = ObjectState(entity: "NotInTheModel", identity: [.string("k")])
    other.attributes = AttributeList(known)
    #expect(try StateCoding.decode(encoded(other, model: model), model: model)?.state == other)
  }

  @Test func identityValuesDatesAndLinksRoundTripInTheirShortForms() throws {
    let model = MappingRuleTests.model
    var state = ObjectState(entity: "User", identity: [.integer(7)])
    // Ids of two roots, out of order (an ordered list), and a long ascending run.
    state.links[1] = [ObjectIDs.make(root: 2, sequence: 900), ObjectIDs.make(root: 1, sequence: 5), 3]
    state.links[2] = LinkTargets((1...70).map { ObjectIDs.make(root: 3, sequence: UInt64($0 * 3)) })
    let whole = Date(timeIntervalSince1970: 1_000_000_000)
    let fraction = Date(timeIntervalSince1970: -12.25)
    state.attributes = AttributeList([
      "remoteID": .integer(7), "age": .integer(7), "birthDate": .date(whole), "updatedAt": .date(fraction),
    ])
    let bytes = encoded(state, model: model)
    #expect(try StateCoding.decode(bytes, model: model)?.state == state)
    // Whole lists of 73 ids, four attributes: short forms keep it near two bytes an id.
    #expect(bytes.count < 190, "\(bytes.count) bytes")
  }

  @Test func aStoredDateOfSecondsOutOfRangeIsAnErrorNotATrap() throws {
    var writer = BinaryWriter()
    writer.write(13)
    writer.write(signed: .max)
    var reader = BinaryReader(writer.bytes)
    #expect(throws: DecodingFailure.self) { try reader.readRequiredValue() }
  }
}
