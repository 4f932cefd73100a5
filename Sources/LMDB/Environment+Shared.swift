import Glibc
import Synchronization

extension Environment {
  /// The environment already open at `path` in this process, or a new one. LMDB must not
  /// open one environment twice in a process (its locks are per process): every open of a
  /// path goes through here and shares one `Environment`, which closes when the last user
  /// lets go of it. The first open's options hold for all that share it, except read-only
  /// and writable, which cannot share: asking for one while the process has the other open
  /// throws (`EBUSY`).
  public static func shared(path: String, options: Options = Options()) throws(LMDBError) -> Environment {
    let key = canonicalPath(path)
    return try openEnvironments.withLock { (open: inout [String: WeakEnvironment]) throws(LMDBError) -> Environment in
      if let existing = open[key]?.environment {
        // One environment per file in a process (LMDB's locks are the process's): a second
        // way of opening it cannot be given.
        guard existing.options.readOnly == options.readOnly else {
          throw LMDBError.openTheOtherWay(path: path, readOnly: existing.options.readOnly)
        }
        return existing
      }
      let environment = try Environment(path: path, options: options)
      open[key] = WeakEnvironment(environment: environment)
      open = open.filter { $0.value.environment != nil }
      return environment
    }
  }

  /// The path with symbolic links and `.`/`..` resolved, so that two spellings of one
  /// directory share one environment.
  private static func canonicalPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}

/// Environments open in this process, by canonical path, held weakly.
private let openEnvironments = Mutex<[String: WeakEnvironment]>([:])

private struct WeakEnvironment: Sendable {
  weak var environment: Environment?
}
