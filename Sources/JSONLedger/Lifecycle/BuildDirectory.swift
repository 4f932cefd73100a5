import Foundation

/// Where `upgrade` and `restoreLog` build a new store before it takes its place: the
/// directory `<target>.<suffix>` (`S.upgrading`, `S.restoring`), holding a marker file that
/// says this library made it and how far it got, and the store being built, `store/`. The
/// store is moved to its place by one rename, so a crash leaves the target as it was or
/// whole; a directory of that name that the library did not make is never removed (an empty
/// one, or one holding only the marker's temporary file, is what a build cut short at its
/// start leaves, and is taken again).
struct BuildDirectory {
  /// The directory.
  let path: String
  static let markerName = "jsonledger-build"

  /// How far a build got: the marker file's text.
  enum State: String {
    /// The store is being built: a later run starts it again.
    case building
    /// The store is whole and synced: only the renames are left.
    case complete
  }

  /// The store inside.
  var storePath: String { path + "/store" }
  private var markerPath: String { path + "/" + Self.markerName }

  /// The build directory for `target` (a normalised path) with `suffix`.
  init(for target: String, suffix: String) { path = target + "." + suffix }

  /// What an earlier run left here: nil when nothing is there; a directory this library did
  /// not make is an error naming it.
  func state() throws -> State? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    // Cut short between `mkdir` and the marker's rename, a build leaves the directory empty or
    // holding only the marker's temporary file (`jsonledger-build.new`; earlier versions wrote
    // it through Foundation, whose atomic write names its own temporary file after it, as
    // `.jsonledger-build.new.XXXXXX`): nothing of anyone else's, so it is taken again.
    if (status.st_mode & S_IFMT) == S_IFDIR, !FileManager.default.fileExists(atPath: markerPath),
      let entries = try? FileManager.default.contentsOfDirectory(atPath: path),
      entries.allSatisfy({ $0.hasPrefix(Self.markerName + ".new") || $0.hasPrefix("." + Self.markerName + ".new") })
    {
      return .building
    }
    guard (status.st_mode & S_IFMT) == S_IFDIR,
      let text = try? String(contentsOfFile: markerPath, encoding: .utf8),
      let state = State(rawValue: text.trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      throw LedgerError.destinationExists(
        "\(path) exists and was not made by JSONLedger: it is left alone; move it away to go on", path: path)
    }
    return state
  }

  /// Makes the directory anew, removing what an earlier run of this library left there.
  func make() throws {
    if try state() != nil { try remove() }
    guard mkdir(path, 0o700) == 0 else {
      throw LedgerError.fileSystem("cannot create \(path): \(SystemError.reason(errno))", path: path)
    }
    try mark(.building)
  }

  /// Records how far the build got, durably.
  func mark(_ state: State) throws {
    // Written by hand: the only file a kill can leave behind is `jsonledger-build.new`.
    let temporary = markerPath + ".new"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw LedgerError.fileSystem("cannot write \(temporary): \(SystemError.reason(errno))", path: temporary)
    }
    let bytes = Array((state.rawValue + "\n").utf8)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    let failure = written == bytes.count ? nil : errno
    fsync(descriptor)
    close(descriptor)
    if let failure {
      throw LedgerError.fileSystem("cannot write \(temporary): \(SystemError.reason(failure))", path: temporary)
    }
    guard rename(temporary, markerPath) == 0 else {
      throw LedgerError.fileSystem("cannot write \(markerPath): \(SystemError.reason(errno))", path: markerPath)
    }
    Self.syncDirectory(path)
  }

  /// Moves the built store to `target`, which must not exist (or be an empty directory),
  /// then removes this directory.
  func install(at target: String) throws {
    guard rename(storePath, target) == 0 else {
      throw LedgerError.fileSystem("cannot move \(storePath) to \(target): \(SystemError.reason(errno))", path: target)
    }
    Self.syncDirectory(Self.parent(of: target))
    try? remove()
  }

  /// Removes the directory and what it holds; only ever one this library made. The marker
  /// goes last: a removal cut short leaves a directory still marked as this library's (or an
  /// empty one), which the next run takes again.
  func remove() throws {
    do {
      let entries = try FileManager.default.contentsOfDirectory(atPath: path)
      for entry in entries where entry != Self.markerName {
        try FileManager.default.removeItem(atPath: path + "/" + entry)
      }
      if entries.contains(Self.markerName) { try FileManager.default.removeItem(atPath: markerPath) }
      try FileManager.default.removeItem(atPath: path)
    } catch {
      throw LedgerError.fileSystem("cannot remove \(path): \(SystemError.describe(error))", path: path)
    }
  }

  /// Flushes a directory's entries (a rename in it) to disk.
  static func syncDirectory(_ path: String) {
    let descriptor = open(path, O_RDONLY | O_DIRECTORY)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    close(descriptor)
  }

  static func parent(of path: String) -> String {
    let parent = (path as NSString).deletingLastPathComponent
    return parent.isEmpty ? "." : parent
  }

  /// `path` as one spelling of the directory: absolute, without `.`, `..` or a trailing
  /// slash, so that `S/`, `./S` and `.` (inside S) name the same store and the names built
  /// beside it (`S.upgrading`) land beside it, not inside.
  static func normalized(_ path: String) -> String {
    let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    var components: [Substring] = []
    for component in absolute.split(separator: "/") {
      switch component {
      case ".": continue
      case "..": if !components.isEmpty { components.removeLast() }
      default: components.append(component)
      }
    }
    return "/" + components.joined(separator: "/")
  }
}
