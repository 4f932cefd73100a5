import Foundation
import JSONLedger

/// A deterministic bands-like dataset: bands (with musicians by key, to-many) and albums (band
/// by key, to-one; producer as a nested object), snake_case keys, ISO dates.
struct Dataset {
  let objects: Int
  var bandCount: Int { max(1, objects / 20) }
  var albumCount: Int { objects - bandCount }

  static let model = #"""
    {"keyCase": "snake_case", "dateFormat": "iso8601", "entities": {
      "Band": {"identity": "name", "collectionKey": "bands",
        "attributes": {"name": "string", "formed": "int32", "bandDescription": "string"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "band"},
                          "members": {"to": "Musician", "many": true, "inverse": "bands"}}},
      "Album": {"identity": "name", "collectionKey": "albums",
        "attributes": {"name": "string", "released": "date", "label": "string", "sales": "int64"},
        "relationships": {"band": {"to": "Band", "inverse": "albums"},
                          "producer": {"to": "Producer", "inverse": "albums"}}},
      "Musician": {"identity": "name", "attributes": {"name": "string"},
        "relationships": {"bands": {"to": "Band", "many": true, "inverse": "members"}}},
      "Producer": {"identity": "name", "attributes": {"name": "string", "country": "string"},
        "relationships": {"albums": {"to": "Album", "many": true, "inverse": "producer"}}}
    }}
    """#

  /// The model after the dataset's with Album gaining an attribute: a migration in place.
  static let modelGainingAnAttribute = model.replacingOccurrences(
    of: #""sales": "int64"}"#, with: #""sales": "int64", "catalog": "string"}"#)

  /// The model after `modelGainingAnAttribute` with Album.label renamed and Album.sales a
  /// string: a migration that rewrites each album's stored states.
  static let modelRenamingAndRetyping = model.replacingOccurrences(
    of: #""label": "string", "sales": "int64"}"#,
    with: #""imprint": {"type": "string", "renamedFrom": "label"}, "sales": "string", "catalog": "string"}"#)

  /// `modelGainingAnAttribute` without Album.released: removing an attribute rewrites each
  /// album's stored states.
  static let modelRemovingAnAttribute = modelGainingAnAttribute.replacingOccurrences(
    of: #""released": "date", "#, with: "")

  /// `modelRenamingAndRetyping` without Album.released: the same removal after the rename.
  static let modelRenamingThenRemoving = modelRenamingAndRetyping.replacingOccurrences(
    of: #""released": "date", "#, with: "")

  /// `modelRenamingThenRemoving` without the producers' links (Album.producer and its inverse):
  /// removing a relationship replays the log.
  static let modelRemovingARelationship = modelRenamingThenRemoving.replacingOccurrences(
    of: #",\#n                      "producer": {"to": "Producer", "inverse": "albums"}}}"#, with: "}}"
  )
  .replacingOccurrences(
    of: #",\#n    "relationships": {"albums": {"to": "Album", "many": true, "inverse": "producer"}}}"#, with: "}")

  func bandName(_ index: Int) -> String { "band \(index)" }
  func albumName(_ index: Int) -> String { "album \(index)" }

  /// The whole document as JSON bytes; `changedEvery`: every n-th album gets another label.
  func document(changedEvery: Int? = nil) -> [UInt8] {
    var text = "{\"bands\":["
    text.reserveCapacity(objects * 160)
    for index in 0..<bandCount {
      if index > 0 { text += "," }
      text += "{\"name\":\"\(bandName(index))\",\"formed\":\(1950 + index % 70),"
      text += "\"description\":\"A band formed in \(1950 + index % 70) that plays music number \(index)\","
      text += "\"members\":[\"musician \(index * 3)\",\"musician \(index * 3 + 1)\",\"musician \(index * 3 + 2)\"]}"
    }
    text += "],\"albums\":["
    for index in 0..<albumCount {
      if index > 0 { text += "," }
      let changed = changedEvery.map { index % $0 == 0 } ?? false
      text += "{\"name\":\"\(albumName(index))\",\"band\":\"\(bandName(index % bandCount))\","
      text += "\"released\":\"\(1960 + index % 60)-0\(1 + index % 9)-1\(index % 10)T00:00:00Z\","
      text += "\"label\":\"\(changed ? "Changed Records" : "Label \(index % 40)")\",\"sales\":\(index * 7 % 100_000),"
      text += "\"producer\":{\"name\":\"producer \(index % 500)\",\"country\":\"Country \(index % 30)\"}}"
    }
    text += "]}"
    return Array(text.utf8)
  }

  /// A document of one new album, numbered `index`, shaped as in `document`: what a small
  /// write sends (a form posted, a webhook, one page of a pull). Its band is one of ten, so
  /// their lists of albums grow as the batches come.
  func smallBatch(_ index: Int) -> [UInt8] {
    var text = "{\"albums\":[{\"name\":\"new album \(index)\",\"band\":\"\(bandName(index % 10))\","
    text += "\"released\":\"2024-0\(1 + index % 9)-1\(index % 10)T00:00:00Z\",\"label\":\"Label \(index % 40)\","
    text += "\"sales\":\(index),\"producer\":{\"name\":\"producer \(index % 500)\",\"country\":\"Country 1\"}}]}"
    return Array(text.utf8)
  }

  /// Writes a file of one collection, `{"albums": [...]}`, with `albums` albums shaped as in
  /// `document` (band by key, and a nested producer unless `withProducers` is false: 500
  /// producers, so each becomes a hub of `albums / 500` links), streamed in blocks so that a
  /// file of any size can be made: the input of the memory measurement.
  static func writeAlbums(_ albums: Int, to path: String, withProducers: Bool) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path)
    else {
      throw CocoaError(.fileWriteUnknown)
    }
    defer { try? handle.close() }
    let bands = max(1, albums / 20)
    var text = "{\"albums\":["
    for index in 0..<albums {
      if index > 0 { text += "," }
      text += "{\"name\":\"album \(index)\",\"band\":\"band \(index % bands)\","
      text += "\"released\":\"\(1960 + index % 60)-0\(1 + index % 9)-1\(index % 10)T00:00:00Z\","
      text += "\"label\":\"Label \(index % 40)\",\"sales\":\(index * 7 % 100_000)"
      if withProducers {
        text += ",\"producer\":{\"name\":\"producer \(index % 500)\",\"country\":\"Country \(index % 30)\"}"
      }
      text += "}"
      if text.utf8.count > 1 << 20 {
        try handle.write(contentsOf: Data(text.utf8))
        text = ""
      }
    }
    text += "]}"
    try handle.write(contentsOf: Data(text.utf8))
  }
}
