import Foundation
import JSONLedger

// Pictures the console draws on the server, as SVG in the page: no script and no framework.
// Colours come from attributes, not `style`, so the page's policy needs no inline styles.

enum ConsoleCharts {
  /// The batches of a timeline page, oldest on the left: a bar per batch, its created,
  /// updated and deleted objects stacked, each bar a link to its batch; a revert is marked
  /// with an R above its bar, a migration with an M, and a batch a revert undid drawn hollow.
  static func batches(_ entries: [LogEntry]) -> HTML {
    guard !entries.isEmpty else { return "" }
    let ordered = entries.reversed()
    let width = 720.0
    let height = 140.0
    let top = 18.0
    let slot = width / Double(ordered.count)
    let bar = max(1, min(28, slot * 0.7))
    let largest = Double(
      ordered.map { $0.statistics.created + $0.statistics.updated + $0.statistics.deleted }.max() ?? 0)
    let scale = largest > 0 ? (height - top) / largest : 0
    var bars: [HTML] = []
    for (index, entry) in ordered.enumerated() {
      let x = Double(index) * slot + (slot - bar) / 2
      var y = height
      var pieces: [HTML] = []
      let parts = [
        (entry.statistics.created, "#1e6b30", "created"), (entry.statistics.updated, "#2f5d9b", "updated"),
        (entry.statistics.deleted, "#a4262c", "deleted"),
      ]
      for (count, colour, _) in parts where count > 0 {
        let length = max(1, Double(count) * scale)
        y -= length
        let fill = entry.revertedBy == nil ? colour : "#ffffff"
        pieces.append(
          HTML(
            "<rect x=\"\(number(x))\" y=\"\(number(y))\" width=\"\(number(bar))\" height=\"\(number(length))\" fill=\"\(fill)\" stroke=\"\(colour)\"/>"
          ))
      }
      if pieces.isEmpty {
        pieces.append(
          HTML(
            "<rect x=\"\(number(x))\" y=\"\(number(height - 1))\" width=\"\(number(bar))\" height=\"1\" fill=\"#8a8f98\"/>"
          ))
      }
      let mark: String? =
        switch entry.kind {
        case .revert: "R"
        case .migration: "M"
        default: nil
        }
      let label = mark.map { text in
        HTML(
          "<text x=\"\(number(x + bar / 2))\" y=\"\(number(max(12, y - 4)))\" text-anchor=\"middle\" font-size=\"11\" fill=\"#5c4800\">\(text)</text>"
        )
      }
      let counts =
        "\(entry.statistics.created) created, \(entry.statistics.updated) updated, \(entry.statistics.deleted) deleted"
      let reverted = entry.revertedBy.map { ", reverted by batch \($0)" } ?? ""
      let title = "batch \(entry.batchID) (\(entry.kind)): \(counts)\(reverted)"
      bars.append(
        HTML(
          "<a href=\"/batches/\(entry.batchID)\" aria-label=\"\(title)\"><title>\(title)</title>\(pieces)\(label ?? "")</a>"
        ))
    }
    return """
      <figure class="chart"><svg viewBox="0 0 \(Int(width)) \(Int(height) + 2)" role="img" aria-labelledby="chart-caption" preserveAspectRatio="none">
      <line x1="0" y1="\(Int(height) + 1)" x2="\(Int(width))" y2="\(Int(height) + 1)" stroke="#8a8f98"/>\(bars)</svg>
      <figcaption id="chart-caption">Objects each batch created (green), updated (blue) and deleted (red), oldest on the left; R marks a revert, M a migration, a hollow bar a batch a revert undid.</figcaption></figure>
      """
  }

  /// A number field's values over the batches that set it, oldest on the left: a line
  /// through a point per batch, each point titled with its batch and value. Nil when fewer
  /// than two of the values are numbers.
  static func values(_ points: [(batch: UInt64, value: Double)], field: String) -> HTML? {
    guard points.count >= 2, let low = points.map(\.value).min(), let high = points.map(\.value).max() else {
      return nil
    }
    let width = 320.0
    let height = 80.0
    let margin = 6.0
    let span = high - low
    func x(_ index: Int) -> Double { margin + Double(index) * (width - 2 * margin) / Double(points.count - 1) }
    func y(_ value: Double) -> Double {
      span == 0 ? height / 2 : height - margin - (value - low) / span * (height - 2 * margin)
    }
    let line = points.enumerated().map { "\(number(x($0.offset))),\(number(y($0.element.value)))" }.joined(
      separator: " ")
    let dots = points.enumerated().map { index, point in
      HTML(
        "<a href=\"/batches/\(point.batch)\"><circle cx=\"\(number(x(index)))\" cy=\"\(number(y(point.value)))\" r=\"3.5\" fill=\"#2f5d9b\"><title>batch \(point.batch): \(number(point.value))</title></circle></a>"
      )
    }
    return """
      <svg class="spark" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(field) over \(points.count) batches, from \(number(points[0].value)) to \(number(points[points.count - 1].value))">
      <polyline points="\(line)" fill="none" stroke="#2f5d9b" stroke-width="1.5"/>\(dots)</svg>
      """
  }

  /// `value` with at most two decimals and no trailing zeros.
  static func number(_ value: Double) -> String {
    let rounded = (value * 100).rounded() / 100
    return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : String(rounded)
  }
}
