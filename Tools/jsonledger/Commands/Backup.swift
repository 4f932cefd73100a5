import ArgumentParser
import JSONLedger

struct Backup: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backup",
    abstract: "Write a consistent, compacted copy of the store to a new directory while writers go on.")

  @OptionGroup var storeOptions: StoreOptions

  @Argument(help: "The directory of the copy: new, or empty.")
  var destination: String

  @Flag(help: "Keep a copy that fails verification (it is reported, and the exit status is 0).")
  var allowDamaged = false

  @Flag(help: "Print machine-readable JSON.")
  var json = false

  func run() async throws {
    let report: BackupReport
    do {
      report = try await storeOptions.openForReading().backup(to: destination, allowingDamaged: allowDamaged)
    } catch let error as LedgerError where error.code == .verificationFailed {
      throw CommandFailure(
        message:
          "\(error.message)\nrun `jsonledger verify \(storeOptions.store)` to see the damage; --allow-damaged keeps such a copy"
      )
    }
    if json {
      Output.json([
        "path": .string(report.path), "firstBatch": .number(JSONNumber(Int(report.firstBatch))),
        "head": .number(JSONNumber(Int(report.head))), "bytes": .number(JSONNumber(report.bytes)),
        "damage": report.damage.map { .string($0) } ?? .null,
      ])
    } else {
      let batches = report.head == 0 ? "no batches" : "batches \(report.firstBatch) to \(report.head)"
      Output.line("backed up \(storeOptions.store) to \(report.path): \(batches), \(report.bytes) bytes")
    }
    if let damage = report.damage {
      Output.note("warning: the copy is damaged, as the store is: \(damage)")
    }
  }
}
