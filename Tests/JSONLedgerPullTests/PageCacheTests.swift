import Foundation
import JSONLedger
import Testing

@testable import JSONLedgerPull

/// How a page kept for the next run's conditional request is stored beside the store.
@Suite("Kept pages")
struct PageCacheTests {
  @Test func aKeptPageReadsBackByteForByte() throws {
    let body = Array(#"[{"title": "line one\nline \"two\""}]"#.utf8) + [10, 10]
    let entry = PageCache.Entry(etag: #"W/"a\"b""#, lastModified: nil, link: #"</p2>; rel="next""#, body: body)
    let read = try #require(PageCache.decode(PageCache.encode(entry)))
    #expect(read.body == body && read.etag == entry.etag && read.link == entry.link && read.lastModified == nil)
  }

  /// Regression: a release before kept a page as one JSON object with its body as a string,
  /// written through the JSON writer (a tenth of a 100-page pull's time): those still read.
  @Test func aPageKeptByTheReleaseBeforeStillReads() throws {
    let old = Array(#"{"body":"[{\"number\":1}]","etag":"\"p1\"","link":"</p2>; rel=\"next\""}"#.utf8)
    let read = try #require(PageCache.decode(old))
    #expect(String(decoding: read.body, as: UTF8.self) == #"[{"number":1}]"#)
    #expect(read.etag == #""p1""# && read.link == #"</p2>; rel="next""#)
  }

  @Test func aPageWithoutAValidatorOrThatDoesNotReadIsNotKept() {
    #expect(PageCache.decode(PageCache.encode(PageCache.Entry(body: Array("[]".utf8)))) == nil)
    #expect(PageCache.decode(Array("not json\n[]".utf8)) == nil)
    #expect(PageCache.decode([]) == nil)
  }

  /// The key of a kept page is its URL's SHA-256 in hex, as the release before wrote it, so
  /// that its pages are found.
  @Test func aPagesKeyIsItsURLsDigestInHex() throws {
    let url = try #require(URL(string: "http://127.0.0.1/issues?page=1"))
    #expect(PageCache.hex([0, 1, 0xab, 0xff]) == "0001abff")
    let key = PageCache.key(url)
    #expect(key.hasPrefix("pull.page.") && key.count == "pull.page.".count + 64)
    #expect(key == "pull.page.35d0e0e1d3f7b3d5e363dbd0e573e81ffb1bb70988e32e8c1270bbc95cd09809")
  }
}
