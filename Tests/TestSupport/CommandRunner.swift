public import Foundation

/// Runs the built `jsonledger` executable as a separate process.
public struct CommandRunner {
  public struct Result: Sendable {
    public var status: Int32
    public var output: String
    public var error: String
  }

  /// The executable next to the test bundle (SwiftPM builds it because the tests depend on it).
  public static let executable: URL = {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("jsonledger")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      directory.deleteLastPathComponent()
    }
    return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("jsonledger")
  }()

  /// Starts the executable with `arguments`, output discarded, and kills it with SIGKILL
  /// after `milliseconds`: a crash at that moment.
  public static func runKilled(_ arguments: [String], afterMilliseconds milliseconds: Int) throws {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    usleep(useconds_t(milliseconds * 1000))
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  /// Runs the executable (or `program`) with `arguments` and `input` on its standard input,
  /// and `environment` added to this process's, and returns its exit status and what it wrote.
  public static func run(
    _ arguments: [String], input: String? = nil, directory: String? = nil, program: URL = executable,
    environment: [String: String] = [:]
  ) throws -> Result {
    let process = Process()
    process.executableURL = program
    process.arguments = arguments
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let output = Pipe()
    let error = Pipe()
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = stdin
    try process.run()
    // Standard error is read on a thread of its own while standard output is read here, and
    // the input written on a third: read one after the other, a child that fills one pipe
    // while this waits on another would wait forever.
    let errorData = PipeReader(error.fileHandleForReading)
    let writing = Thread {
      if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
      try? stdin.fileHandleForWriting.close()
    }
    writing.start()
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    let errData = errorData.wait()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
      error: String(decoding: errData, as: UTF8.self))
  }

  /// Runs the executable with `arguments` (output discarded) and returns its peak resident
  /// memory in bytes: the kernel's high-water mark for its own address space (`VmHWM` in
  /// `/proc/PID/status`), sampled until it exits. (`wait4`'s `ru_maxrss` would not do: a child
  /// started with vfork keeps the test process's own peak.)
  public static func peakMemory(_ arguments: [String]) throws -> Int {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let status = "/proc/\(process.processIdentifier)/status"
    var peak = 0
    while process.isRunning {
      if let text = try? String(contentsOfFile: status, encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
      {
        peak = max(peak, kilobytes * 1024)
      }
      usleep(2_000)
    }
    process.waitUntilExit()
    return peak
  }

  /// Makes a store at `store` with one batch, then starts a `jsonledger stress` process
  /// applying `batches` more (without flushing), and returns it running.
  public static func startWriter(store: String, batches: Int) throws -> Process {
    _ = try run(["stress", store, "--batches", "1", "--objects", "40"])
    let writer = Process()
    writer.executableURL = executable
    writer.arguments = ["stress", store, "--batches", "\(batches)", "--objects", "40", "--durability", "noSync"]
    writer.standardOutput = FileHandle.nullDevice
    try writer.run()
    return writer
  }
}

/// The whole of a pipe, read to its end on a thread of its own.
private final class PipeReader: @unchecked Sendable {
  // Unchecked: `data` is written once, by the reading thread, before it signals `done`, and
  // read only after `wait` has seen that signal.
  private var data = Data()
  private let done = DispatchSemaphore(value: 0)

  init(_ handle: FileHandle) {
    Thread { [self] in
      data = handle.readDataToEndOfFile()
      done.signal()
    }.start()
  }

  /// The pipe's bytes, once it is closed.
  func wait() -> Data {
    done.wait()
    return data
  }
}
