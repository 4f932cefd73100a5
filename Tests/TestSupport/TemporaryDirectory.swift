import Foundation

/// A fresh directory under the system's temporary folder, removed when the test ends: the one
/// scratch folder of every test target.
public final class TemporaryDirectory: Sendable {
  /// The directory.
  public let path: String

  public init() throws {
    path =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("jsonledger-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  /// A path inside the directory that does not exist yet, for a store.
  public var storePath: String { path + "/store" }

  /// Writes `text` to a file named `name` inside the directory and returns its path.
  public func write(_ name: String, _ text: String) throws -> String {
    let file = path + "/" + name
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    return file
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}
