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
}
