import ArgumentParser
import Foundation
import JSONLedger
import JSONLedgerPostgres
import JSONLedgerPull
import JSONLedgerSupport

/// The names the tool's first argument may take: its commands, and argument parser's `help`.
private let commandNames = ["help"] + JSONLedgerCommand.configuration.subcommands.map { $0._commandName }

/// A first argument that is not an option and names no command, said as such with the command
/// it most likely meant: argument parser would call it an unexpected argument.
private func refuseUnknownCommand(_ first: String?) throws {
  guard let first, !first.hasPrefix("-"), !commandNames.contains(first) else { return }
  let guess = closestName(to: first, among: commandNames).map { ": did you mean \($0)?" } ?? ""
  throw CommandFailure(
    message: "unknown command \"\(first)\"\(guess) (see jsonledger --help)",
    exitCode: ExitCode.validationFailure.rawValue)
}

/// `jsonledger`: the command line face of a JSONLedger store.
///
/// Every command names itself (`commandName:`): a name left to argument parser is derived with
/// `String(describing:)` of the type, a scan of the runtime's conformance records on each start
/// (about 2 ms of a 19 ms `stats`).
@main
struct JSONLedgerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "jsonledger",
    abstract: "Cache backend JSON as entities in an append-only LMDB log: import, export, audit, time travel.",
    discussion: "Every command takes the store directory first. --json gives machine-readable output.",
    version: "jsonledger \(jsonLedgerVersion) (store format \(Ledger.formatVersion))",
    subcommands: [
      Initialize.self, Import.self, Pull.self, Export.self, Get.self, Log.self, Show.self, Diff.self, Revert.self,
      Rewind.self, Blame.self, Verify.self, Stats.self, Upgrade.self, Backup.self, Compact.self, RestoreLog.self,
      Migrate.self,
      Remote.self, Clone.self, Follow.self, Serve.self, Demo.self,
      Stress.self, ReadCheck.self,
    ]
  )

  static func main() async {
    do {
      var command: any ParsableCommand
      do { command = try parseAsRoot() } catch {
        // Said as an unknown command when it is one; the names are read only then (reading
        // them takes milliseconds of reflection that a command that parses does not pay).
        try refuseUnknownCommand(CommandLine.arguments.dropFirst().first)
        throw error
      }
      if var asyncCommand = command as? any AsyncParsableCommand {
        try await asyncCommand.run()
      } else {
        try command.run()
      }
      try Output.finishStandardOutput()
    } catch let error as CommandFailure {
      Output.error(error.message)
      Foundation.exit(error.exitCode)
    } catch let error as RemoteError {
      Output.error(error.description)
      // A diverged replica and an unsupported record are told apart from a failure to connect.
      switch error.code {
      case .diverged: Foundation.exit(2)
      case .unsupported: Foundation.exit(3)
      default: Foundation.exit(1)
      }
    } catch let error as PullError {
      Output.error(error.message)
      Foundation.exit(1)
    } catch let error as LedgerError {
      Output.error(error.description)
      if let hint = Hints.hint(for: error) { Output.note("hint: \(hint)") }
      // A query the user wrote that does not read is a usage error (EX_USAGE), as a bad flag is.
      Foundation.exit(error.code == .invalidQuery ? ExitCode.validationFailure.rawValue : 1)
    } catch {
      let code = exitCode(for: error)
      if code == .success {
        print(fullMessage(for: error))
        Foundation.exit(0)
      }
      var message = fullMessage(for: error)
      if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
      Output.error(message.isEmpty ? "\(error)" : message)
      Foundation.exit(code.rawValue == 0 ? 1 : code.rawValue)
    }
  }
}
