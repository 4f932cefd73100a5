/// The demo's built-in model and data: bands, albums, band members and musicians, in the
/// spirit of the classic Core Data example (snake_case JSON, `description` qualified as
/// `bandDescription`, ISO dates, relationships by key).
enum DemoData {
  static let model = #"""
    {
      "keyCase": "snake_case",
      "dateFormat": "iso8601",
      "entities": {
        "Band": {
          "identity": "name",
          "collectionKey": "bands",
          "attributes": {
            "name": "string", "formed": "int32", "disbanded": "int32",
            "bandDescription": "string", "otherNames": "string", "hiatus": "string"
          },
          "relationships": {
            "albums": { "to": "Album", "many": true, "inverse": "band" },
            "members": { "to": "BandMember", "many": true, "inverse": "band", "ordered": true }
          }
        },
        "Album": {
          "identity": "name",
          "attributes": { "name": "string", "released": "date", "label": "string", "releasedAs": "string" },
          "relationships": { "band": { "to": "Band", "inverse": "albums" } }
        },
        "BandMember": {
          "identity": "id",
          "attributes": { "id": "string", "instruments": "string", "joined": "int32", "left": "int32" },
          "relationships": {
            "band": { "to": "Band", "inverse": "members" },
            "musician": { "to": "Musician", "inverse": "bands" }
          }
        },
        "Musician": {
          "identity": "name",
          "attributes": { "name": "string", "born": "int32", "dead": "int32", "instruments": "string" },
          "relationships": { "bands": { "to": "BandMember", "many": true, "inverse": "musician" } }
        }
      }
    }
    """#

  static let firstBatch = #"""
    {
      "bands": [
        { "name": "Japan", "formed": 1974, "disbanded": 1991,
          "description": "English new wave band from Catford, London", "other_names": "Rain Tree Crow" },
        { "name": "Roxy Music", "formed": 1971, "disbanded": 1983,
          "description": "English art rock band", "hiatus": "1976-1978" }
      ],
      "albums": [
        { "name": "Adolescent Sex", "band": "Japan", "released": "1978-04-08T00:00:00Z", "label": "Hansa" },
        { "name": "Quiet Life", "band": "Japan", "released": "1979-12-01T00:00:00Z", "label": "Hansa" },
        { "name": "Tin Drum", "band": "Japan", "released": "1981-11-13T00:00:00Z", "label": "Virgin" },
        { "name": "Rain Tree Crow", "band": "Japan", "released": "1991-04-08T00:00:00Z", "label": "Virgin",
          "released_as": "Rain Tree Crow" },
        { "name": "Roxy Music", "band": "Roxy Music", "released": "1972-06-16T00:00:00Z", "label": "Island" },
        { "name": "Stranded", "band": "Roxy Music", "released": "1973-11-01T00:00:00Z", "label": "Island" },
        { "name": "Avalon", "band": "Roxy Music", "released": "1982-05-28T00:00:00Z", "label": "EG" }
      ],
      "band_members": [
        { "id": "David Sylvian in Japan", "band": "Japan", "musician": "David Sylvian", "joined": 1974,
          "left": 1991, "instruments": "vocals, guitar" },
        { "id": "Mick Karn in Japan", "band": "Japan", "musician": "Mick Karn", "joined": 1974,
          "left": 1991, "instruments": "bass, saxophone" },
        { "id": "Steve Jansen in Japan", "band": "Japan", "musician": "Steve Jansen", "joined": 1974,
          "left": 1991, "instruments": "drums" },
        { "id": "Bryan Ferry in Roxy Music", "band": "Roxy Music", "musician": "Bryan Ferry", "joined": 1971,
          "instruments": "vocals, keyboards" },
        { "id": "Brian Eno in Roxy Music", "band": "Roxy Music", "musician": "Brian Eno", "joined": 1971,
          "left": 1973, "instruments": "synthesizer" }
      ],
      "musicians": [
        { "name": "David Sylvian", "born": 1958, "instruments": "vocals, guitar, keyboards" },
        { "name": "Mick Karn", "born": 1958, "dead": 2011, "instruments": "bass, saxophone" },
        { "name": "Steve Jansen", "born": 1959, "instruments": "drums, keyboards" },
        { "name": "Bryan Ferry", "born": 1945, "instruments": "vocals, keyboards" },
        { "name": "Brian Eno", "born": 1948, "instruments": "synthesizer, keyboards" }
      ]
    }
    """#

  static let secondBatch = #"""
    {
      "albums": [
        { "name": "Gentlemen Take Polaroids", "band": "Japan", "released": "1980-10-24T00:00:00Z", "label": "Virgin" },
        { "name": "Tin Drum", "label": "Virgin Records" }
      ],
      "band_members": [
        { "id": "Richard Barbieri in Japan", "band": "Japan", "musician": "Richard Barbieri", "joined": 1974,
          "left": 1991, "instruments": "keyboards" }
      ],
      "musicians": [
        { "name": "Richard Barbieri", "born": 1957, "instruments": "keyboards, synthesizer" }
      ]
    }
    """#
}
