import Foundation
import JSONLedgerTestSupport
import Testing

@testable import JSONLedger

@Suite("Decoding straight from JSON values")
struct JSONValueDecoderTests {
  struct Everything: Codable, Equatable {
    var text: String
    var small: Int8
    var count: Int
    var big: UInt64
    var ratio: Double
    var half: Float
    var flag: Bool
    var missing: String?
    var null: Int?
    var when: Date
    var link: URL
    var blob: Data
    var amount: Decimal
    var token: UUID
    var list: [Int]
    var nested: [String: [Bool]]
    var matrix: [[String?]]
  }

  static let decoder = JSONValueDecoder { DateCoding.date(from: .string($0)) }

  static func random(using generator: inout SeededGenerator) -> Everything {
    Everything(
      text: String(
        (0..<Int.random(in: 0..<8, using: &generator)).map { _ in "aé\"\n日z".randomElement(using: &generator) ?? "a" }),
      small: Int8.random(in: .min ... .max, using: &generator), count: Int.random(in: .min ... .max, using: &generator),
      big: UInt64.random(in: .min ... .max, using: &generator), ratio: Double.random(in: -1e9...1e9, using: &generator),
      half: Float.random(in: -100...100, using: &generator), flag: Bool.random(using: &generator), missing: nil,
      null: Bool.random(using: &generator) ? 7 : nil,
      when: Date(timeIntervalSince1970: Double(Int.random(in: 0..<2_000_000_000, using: &generator))),
      link: URL(string: "https://example.org/\(Int.random(in: 0..<99, using: &generator))?q=a%20b")
        ?? URL(fileURLWithPath: "/"),
      blob: Data(
        (0..<Int.random(in: 0..<12, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }),
      amount: Decimal(Int.random(in: -9_999_999...9_999_999, using: &generator)) / 100,
      token: UUID(), list: (0..<Int.random(in: 0..<4, using: &generator)).map { $0 },
      nested: ["a": [true, false], "b": []], matrix: [["x", nil], []])
  }

  @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
  func whatJSONEncoderWritesDecodesToTheSameValue(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    for _ in 0..<20 {
      let value = Self.random(using: &generator)
      let json = try JSONParser.parse(try encoder.encode(value))
      #expect(try Self.decoder.decode(Everything.self, from: json) == value)
    }
  }

  @Test func aValueThatDoesNotFitIsAnErrorAtItsPath() throws {
    struct Small: Decodable { var values: [Int8] }
    #expect {
      try Self.decoder.decode(Small.self, from: ["values": [1, 300]])
    } throws: { error in
      guard case DecodingError.dataCorrupted(let context) = error else { return false }
      return context.codingPath.map(\.stringValue) == ["values", "1"]
        && context.debugDescription.contains("300 does not fit in Int8")
    }
    struct Named: Decodable { var name: String }
    #expect(throws: DecodingError.self) { try Self.decoder.decode(Named.self, from: ["name": 3]) }
    #expect(throws: DecodingError.self) { try Self.decoder.decode(Named.self, from: [:]) }
    #expect(throws: DecodingError.self) { try Self.decoder.decode(Date.self, from: "not a date") }
  }
}
