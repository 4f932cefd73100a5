import Foundation
import JSONLedger
import JSONLedgerPull

/// A progress line on standard error, redrawn in place: objects read, bytes, rate and the time
/// left. Shown only when standard error is a terminal (never when piped or with `--json`).
struct ProgressLine {
  let isShown: Bool
  /// Whether the batch is written once the file is read (one batch), rather than part by part.
  let writesAtEnd: Bool
  private let start = ContinuousClock.now

  init(shown: Bool, writesAtEnd: Bool = true) {
    isShown = shown && isatty(STDERR_FILENO) != 0
    self.writesAtEnd = writesAtEnd
  }

  /// Redraws the line for `progress`.
  func show(_ progress: ImportProgress) {
    guard isShown else { return }
    let elapsed = Self.seconds(ContinuousClock.now - start)
    let megabytes = Double(progress.bytesRead) / 1_000_000
    var line = "read \(Self.format(megabytes))"
    if progress.totalBytes > 0 {
      line += " of \(Self.format(Double(progress.totalBytes) / 1_000_000)) MB"
      line += " (\(Int((progress.fractionRead ?? 0) * 100))%)"
    } else {
      line += " MB"
    }
    line += ", \(progress.objects) objects"
    if elapsed > 0.5 {
      let rate = megabytes / elapsed
      line += ", \(Self.format(rate)) MB/s"
      if progress.totalBytes > progress.bytesRead, rate > 0 {
        let left = Double(progress.totalBytes - progress.bytesRead) / 1_000_000 / rate
        line += ", about \(Int(left.rounded(.up))) s left"
      }
    }
    // The last part read leaves at most the closing brackets and white space.
    if writesAtEnd, progress.totalBytes > 0, progress.totalBytes - progress.bytesRead < 16 {
      line += "; writing the batch"
    }
    write("\r\u{1B}[K" + line)
  }

  /// Redraws the line for a pull's `progress`.
  func show(_ progress: PullProgress) {
    guard isShown else { return }
    var line =
      "read \(progress.pages) page\(progress.pages == 1 ? "" : "s"), \(Self.format(Double(progress.bytes) / 1_000_000)) MB"
    if progress.notModified > 0 { line += ", \(progress.notModified) not modified" }
    if progress.retries > 0 { line += ", \(progress.retries) retried" }
    write("\r\u{1B}[K" + line)
  }

  /// Clears the line.
  func finish() {
    guard isShown else { return }
    write("\r\u{1B}[K")
  }

  private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

  private static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  private static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
