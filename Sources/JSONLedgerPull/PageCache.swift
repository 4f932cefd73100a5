import Crypto
import Foundation
import JSONLedger
import NIOHTTP1

/// The pages of earlier runs that came with a validator (`ETag`, `Last-Modified`), kept as
/// the store's local values (`Ledger.localValue(forKey:)`): each URL's validators, its `Link`
/// header and its body. A run asks with the validators; a 304 stands for the kept page, which
/// is staged again (it changes nothing, and a prune counts its objects as present) and read
/// for the next page.
struct PageCache {
  struct Entry: Sendable {
    var etag: String?
    var lastModified: String?
    var link: String?
    var body: [UInt8]

    init(etag: String? = nil, lastModified: String? = nil, link: String? = nil, body: [UInt8]) {
      (self.etag, self.lastModified, self.link, self.body) = (etag, lastModified, link, body)
    }

    /// The headers that ask whether the page changed since.
    var validators: [(String, String)] {
      (etag.map { [("If-None-Match", $0)] } ?? []) + (lastModified.map { [("If-Modified-Since", $0)] } ?? [])
    }
  }

  /// The local value's key of a URL: a digest, as URLs can be longer than a key may be.
  static func key(_ url: URL) -> String {
    "pull.page." + hex(SHA256.hash(data: Array(url.absoluteString.utf8)))
  }

  /// `bytes` in lowercase hexadecimal. (`String(format:)` took a tenth of a 100-page pull.)
  static func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
    return String(decoding: text, as: UTF8.self)
  }

  /// The kept page of `url`, or nil (none kept, or one that does not read: asked for whole).
  static func entry(for url: URL, in ledger: Ledger) throws -> Entry? {
    guard let bytes = try ledger.localValue(forKey: key(url)) else { return nil }
    return decode(bytes)
  }

  /// An entry as `encode` writes it: a JSON object of the validators and the `Link` header,
  /// a newline, then the body's bytes as they came (no JSON writer escapes a page of JSON
  /// again). An entry a release before kept, one JSON object with the body as a string,
  /// reads too. Nil when it reads as neither, or has no validator.
  static func decode(_ bytes: [UInt8]) -> Entry? {
    let newline = bytes.firstIndex(of: UInt8(ascii: "\n"))
    guard let value = try? JSONParser.parse(Array(bytes[..<(newline ?? bytes.endIndex)])) else { return nil }
    let body: [UInt8]
    if let newline {
      body = Array(bytes[(newline + 1)...])
    } else {
      guard let text = value["body"]?.stringValue else { return nil }
      body = Array(text.utf8)
    }
    let entry = Entry(
      etag: value["etag"]?.stringValue, lastModified: value["lastModified"]?.stringValue,
      link: value["link"]?.stringValue, body: body)
    return entry.validators.isEmpty ? nil : entry
  }

  /// The bytes `decode` reads back as `entry`.
  static func encode(_ entry: Entry) -> [UInt8] {
    var object = JSONObject()
    if let etag = entry.etag { object["etag"] = .string(etag) }
    if let lastModified = entry.lastModified { object["lastModified"] = .string(lastModified) }
    if let link = entry.link { object["link"] = .string(link) }
    return JSONWriter(options: [.sortedKeys]).bytes(from: .object(object)) + [UInt8(ascii: "\n")] + entry.body
  }

  /// The entry a page answered with a validator makes, or nil.
  static func entry(for page: FetchedPage) -> Entry? {
    let etag = page.headers.first(name: "ETag")
    let lastModified = page.headers.first(name: "Last-Modified")
    // A body that is not UTF-8 is not kept: it could not be JSON either.
    guard etag != nil || lastModified != nil, String(validating: page.body, as: UTF8.self) != nil else { return nil }
    return Entry(etag: etag, lastModified: lastModified, link: page.headers.first(name: "Link"), body: page.body)
  }

}
