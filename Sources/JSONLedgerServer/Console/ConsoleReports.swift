import Foundation
import Hummingbird
import JSONLedger

// What a browser reports when the console's Content-Security-Policy blocks something
// (`report-uri /csp-reports`): a value that got past the escaping and tried to run a script
// or load from elsewhere. Each report is counted (`jsonledger_csp_reports_total` on
// `/metrics`) and logged for the operator; nothing is stored. A report needs no token, as a
// browser sends it without one, and a read-only server takes it too.

extension LedgerRoutes {
  /// The largest report taken: a browser's is about a kilobyte.
  static let reportLimit = 16 * 1024

  func addReportRoute<Routes: RouterMethods>(to router: Routes) {
    router.post("csp-reports") { request, _ in
      let body: ByteBuffer
      do {
        body = try await request.body.collect(upTo: Self.reportLimit)
      } catch {
        throw APIFailure.bodyTooLarge(limit: Self.reportLimit)
      }
      let report = try Self.violation(in: Array(buffer: body))
      metrics?.cspReports.increment()
      logger.warning(
        "the console's content security policy blocked something",
        metadata: [
          "directive": "\(Self.printable(report.directive))", "blocked": "\(Self.printable(report.blocked))",
          "page": "\(Self.printable(report.page))",
        ])
      return Response(status: .noContent)
    }
  }

  /// The directive, the blocked address and the page of a report as `report-uri` sends it
  /// (`{"csp-report": {…}}`) or as the Reporting API does (`[{"type": "csp-violation",
  /// "body": {…}}]`).
  static func violation(in bytes: [UInt8]) throws -> (directive: String, blocked: String, page: String) {
    let document: JSONValue
    do { document = try JSONParser.parse(bytes) } catch {
      throw APIFailure.badRequest("a CSP report must be JSON: \(error)")
    }
    let found: JSONObject? =
      switch document {
      case .object(let object): object["csp-report"]?.objectValue
      case .array(let reports): reports.first?.objectValue?["body"]?.objectValue
      default: nil
      }
    guard let found else {
      throw APIFailure.badRequest("a CSP report is {\"csp-report\": {…}} or a list of reports with a body")
    }
    func text(_ names: String...) -> String {
      for name in names { if case .string(let value)? = found[name] { return value } }
      return "?"
    }
    return (
      text("effective-directive", "effectiveDirective", "violated-directive"), text("blocked-uri", "blockedURL"),
      text("document-uri", "documentURL")
    )
  }

  /// `text` cut to 200 characters, with control and format characters (a newline, a
  /// right-to-left override) written as `\u{…}`: a hostile page cannot forge or hide log lines.
  static func printable(_ text: String) -> String {
    var printed = ""
    for scalar in text.unicodeScalars.prefix(200) {
      switch scalar.properties.generalCategory {
      case .control, .format, .lineSeparator, .paragraphSeparator:
        printed += "\\u{\(String(scalar.value, radix: 16))}"
      default:
        printed.unicodeScalars.append(scalar)
      }
    }
    return printed
  }
}
