import Foundation
import JSONLedgerTestSupport
import Testing

/// The helper that runs the tool in a process of its own.
@Suite("Running the tool in a process")
struct CommandRunnerTests {
  /// A child that writes more to standard error than a pipe holds, and reads a large input,
  /// finishes: the runner reads both pipes and writes the input at once, not one after the
  /// other (which waited forever on a full pipe).
  @Test func aChildThatFillsBothPipesAndReadsALargeInputFinishes() throws {
    let script = "head -c 300000 /dev/zero >&2; wc -c; head -c 300000 /dev/zero | tr '\\\\0' x"
    let input = String(repeating: "y", count: 300_000)
    let result = try CommandRunner.run(
      ["-c", script], input: input, program: URL(fileURLWithPath: "/bin/sh"))
    #expect(result.status == 0)
    #expect(result.error.utf8.count == 300_000)
    #expect(result.output.hasPrefix("300000\n"))
    #expect(result.output.utf8.count == 7 + 300_000)
  }
}
