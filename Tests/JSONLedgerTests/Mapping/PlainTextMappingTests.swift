import JSONLedgerJSON
import PropertyBased
import Testing

@testable import JSONLedger

/// Objects mapped straight from their text (`Mapper.mapPlainObject`) against the same objects
/// parsed and mapped from their tree (`Mapper.mapElement`): where the text path answers, it
/// must give the very object, report and end; where it declines, it must leave the report as
/// it was; and it must answer for every object that maps without a problem.
@Suite("Mapping objects straight from their text")
struct PlainTextMappingTests {
  static let model = #"""
    {"keyCase": "snake_case", "dateFormat": "iso8601", "entities": {
      "Album": {"identity": "name",
        "attributes": {"name": "string", "released": "date", "sales": "int64", "rating": "double", "live": "bool",
                       "label": {"type": "string", "optional": false}},
        "relationships": {"band": {"to": "Band", "inverse": "albums"},
                          "producer": {"to": "Producer", "inverse": "albums"},
                          "tracks": {"to": "Track", "many": true, "inverse": "album"}}},
      "Band": {"identity": "name", "attributes": {"name": "string"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"}}},
      "Producer": {"identity": "name", "attributes": {"name": "string", "country": "string"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "producer"}}},
      "Track": {"identity": "number", "attributes": {"number": "int32", "title": "string"},
        "relationships": {"album": {"to": "Album", "inverse": "tracks"}}}
    }}
    """#

  /// Members an album's text is made of, plain and not: wrong types, nulls, unknown and
  /// escaped keys, keys by another spelling, nested objects with and without their identity.
  static let members = [
    #""name":"a1""#, #""name":"a2""#, #""name":12"#, #""name":null"#, #""name":"""#,
    #""released":"2001-02-03T04:05:06Z""#, #""released":"not a date""#, #""released":null"#,
    #""sales":5"#, #""sales":-1"#, #""sales":1.5"#, #""sales":"7""#, #""sales":1e400"#, #""sales":true"#,
    #""rating":4.5"#, #""rating":"x""#, #""live":true"#, #""live":0"#, #""live":null"#,
    #""label":"L""#, #""label":null"#,
    #""band":"b1""#, #""band":3"#, #""band":null"#, #""band":{"name":"b2"}"#, #""band":["b1"]"#, #""band":true"#,
    #""band_id":"b1""#, #""band_id":{"name":"b2"}"#,
    #""producer":{"name":"p1","country":"c"}"#, #""producer":{"name":"p2"}"#, #""producer":{"country":"c"}"#,
    #""producer":{"name":"p1","extra":1}"#, #""producer":{ "name" : "p1" , "country" : "c" , }"#,
    #""producer":null"#, #""producer":"p3""#, #""producer":{"name":"p4","albums":["a9"]}"#,
    #""tracks":[1,2]"#, #""tracks":[{"number":1,"title":"t"},null,3]"#, #""tracks":[]"#, #""tracks":null"#,
    #""tracks":"x""#, #""tracks":[[1]]"#, #""tracks":[{"title":"no number"}]"#, #""track_ids":[1,2]"#,
    #""unknown":1"#, #""unknown":{"a":[1,{"b":null}]}"#, #""Name":"a9""#, #""n\u0061me":"a3""#, #""ünknown":1"#,
    #""label" : "spaced""#,
    #""released":"1441888808""#, #""released":"1441888808.5""#, #""released":"0000-01-01T00:00:00Z""#,
    #""released":"2001-02-03""#, #""released":1441888808"#, #""sales":0"#, #""sales":-0"#, #""sales":-7"#,
    #""sales":999999999999999999"#, #""sales":12345678901234567890"#, #""sales":1e2"#, #""sales":2.0"#,
    #""name":"\u00e9""#, #""name":"é""#, #""name":"a\"b""#, #""band":"b\/1""#, #""band":" b1 ""#,
  ]

  /// The text of one to three albums, an array, from `choices` (each picks a member, or
  /// ends an object).
  static func text(_ choices: [Int]) -> String {
    var objects: [[String]] = [[]]
    for choice in choices {
      if choice % 13 == 12, objects.count < 3 {
        objects.append([])
      } else {
        objects[objects.count - 1].append(members[choice % members.count])
      }
    }
    return "[" + objects.map { "{" + $0.joined(separator: ",") + "}" }.joined(separator: ", ") + "]"
  }

  /// A mapped object in words, everything the resolver reads of it included.
  static func describe(_ object: MappedObject) -> String {
    var parts = [
      "\(object.entity.name) at \(object.path)", "identity \(String(describing: object.identity))",
      "key only \(object.isKeyOnly)", "refused \(object.refusedIdentity)",
      "fingerprint \(String(describing: object.fingerprint.value)) mask \(object.fingerprint.mask)",
    ]
    for attribute in object.attributes { parts.append("\(attribute.name) = \(String(describing: attribute.value))") }
    for relationship in object.relationships {
      let value: String
      switch relationship.value {
      case .clear: value = "clear"
      case .toOne(let reference): value = "one " + describe(reference)
      case .toMany(let references): value = "many [" + references.map(describe).joined(separator: "; ") + "]"
      }
      parts.append("\(relationship.relationship.name) -> \(value)")
    }
    return "{" + parts.joined(separator: ", ") + "}"
  }

  static func describe(_ reference: ObjectReference) -> String {
    switch reference {
    case .key(let entity, let value, let path): "key \(entity.name) \(value) at \(path)"
    case .object(let nested): describe(nested.object)
    }
  }

  /// Maps the albums of `text` both ways, as staging does: the text path first, the tree for
  /// what it declines. Records an issue for every difference; how many were mapped from text.
  @discardableResult
  static func compareBothWays(_ text: String) throws -> Int {
    let model = try Model(json: JSONParser.parse(Self.model))
    let mapper = Mapper(model: model, transformers: ValueTransformers())
    let album = try #require(model.resolved("Album"))
    let bytes = Array(text.utf8)
    let skim = JSONSkim(bytes)
    var treeReport = Mapper.Report()
    treeReport.text = skim
    var textReport = Mapper.Report()
    textReport.text = skim
    var treeReader = JSONValueReader(bytes)
    var textReader = JSONValueReader(bytes)
    var item = try #require(skim.firstItem(ofContainerAt: 0))
    var index = 0
    var fromText = 0
    while !item.closed {
      let path = JSONPath("albums").appending(index: index)
      let element = try treeReader.value(at: item.index, depthLimit: JSONParser.maximumDepth - 1)
      let problemsBefore = treeReport.problems.problems.count
      let byTree = mapper.mapElement(element.value, entity: album, path: path, report: &treeReport)
      let mappedCleanly = byTree != nil && treeReport.problems.problems.count == problemsBefore
      let before = (textReport.ignoredKeys, textReport.problems.problems.count, textReport.nesting)
      var textEnd = -1
      if let byText = mapper.mapPlainObject(
        at: item.index, entity: album, path: path, depthLimit: JSONParser.maximumDepth - 1, reader: &textReader,
        report: &textReport, end: &textEnd)
      {
        fromText += 1
        #expect(mappedCleanly, "element \(index) of \(text): mapped from text, but not cleanly from its tree")
        #expect(textEnd == element.end, "element \(index) of \(text)")
        if let byTree { #expect(describe(byText) == describe(byTree), "element \(index) of \(text)") }
      } else {
        #expect(textReport.ignoredKeys == before.0 && textReport.problems.problems.count == before.1)
        #expect(textReport.nesting == before.2)
        // Declined only for a problem, or a key written with an escape.
        #expect(!mappedCleanly || text.contains("\\u"), "element \(index) of \(text): declined a plain object")
        let fallback = mapper.mapElement(element.value, entity: album, path: path, report: &textReport)
        #expect(fallback.map(describe) == byTree.map(describe))
      }
      item = try #require(skim.nextItem(after: element.end, closing: UInt8(ascii: "]")))
      index += 1
    }
    #expect(textReport.ignoredKeys == treeReport.ignoredKeys, "\(text)")
    #expect(
      textReport.problems.problems.map { "\($0)" } == treeReport.problems.problems.map { "\($0)" }, "\(text)")
    return fromText
  }

  @Test func anObjectMappedFromItsTextIsTheObjectMappedFromItsTree() async {
    await propertyCheck(count: 400, input: Gen.int(in: 0...999).array(of: 0...12)) { choices in
      do { try Self.compareBothWays(Self.text(choices)) } catch { Issue.record("\(error)") }
    }
  }

  @Test func examples() throws {
    // A nested object met again is taken from the first, at its own place.
    let both = try Self.compareBothWays(
      #"[{"name":"a1","label":"L","producer":{"name":"p1","country":"c"}},"#
        + #"{"name":"a2","label":"L","producer":{"name":"p1","country":"c"}}]"#)
    #expect(both == 2)
    // A nested object that ignored a key, met again after its first parent was declined.
    let second = try Self.compareBothWays(
      #"[{"name":"a1","producer":{"name":"p1","extra":1},"label":null},"#
        + #"{"name":"a2","label":"L","producer":{"name":"p1","extra":1}}]"#)
    #expect(second == 1)
    // The same key twice: both are mapped, in order, the last one's value the identity.
    #expect(try Self.compareBothWays(#"[{"name":"a1","label":"L","name":"a2"}]"#) == 1)
    // White space everywhere, a trailing comma.
    #expect(
      try Self.compareBothWays("[ {\n \"name\" :\t\"a1\" , \"label\" : \"L\" , \"tracks\" : [ 1 , 2 , ] , } ]") == 1)
  }
}

@Suite("A payload fingerprint that awaits its text's")
struct AwaitedTextFingerprintTests {
  @Test func itIsNoneUntilTheTextsFingerprintIsAdoptedAndTheMaskIsKept() throws {
    let model = try Model(json: JSONParser.parse(PlainTextMappingTests.model))
    let album = try #require(model.resolved("Album"))
    let band = try #require(album.relationships.first { $0.name == "band" })
    var fingerprint = PayloadFingerprint(entity: album)
    fingerprint.awaitTextFingerprint()
    fingerprint.add(attribute: 1, .string("a1"))
    fingerprint.add(relationship: band.id, kind: 1, count: 1)
    #expect(fingerprint.value == nil, "a promise not kept is no fingerprint: never skipped")
    #expect(fingerprint.mask == PayloadFingerprint.maskBit(band.id))
    fingerprint.adopt(textFingerprint: 42)
    #expect(fingerprint.value == 42)
  }
}
