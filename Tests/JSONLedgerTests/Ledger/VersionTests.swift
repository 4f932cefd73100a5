import Foundation
import Testing

@testable import JSONLedger

/// The version the library and the tool report is the newest one `CHANGELOG.md` describes:
/// "Unreleased" holds only what no version has yet.
@Suite("The version")
struct VersionTests {
  @Test func theVersionReportedIsTheNewestSectionOfTheChangelog() throws {
    let changelog = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appending(path: "CHANGELOG.md")
    let text = try String(contentsOf: changelog, encoding: .utf8)
    let versions = text.split(separator: "\n").filter { $0.hasPrefix("## ") }.map { $0.dropFirst(3) }
      .filter { $0 != "Unreleased" }
    let newest = try #require(versions.first).split(separator: " ").first.map(String.init)
    #expect(newest == jsonLedgerVersion)
  }
}
