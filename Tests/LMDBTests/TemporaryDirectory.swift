import Foundation

/// A fresh directory under the system's temporary folder, removed when the test ends.
final class TemporaryDirectory {
  let path: String

  init() throws {
    path = FileManager.default.temporaryDirectory
      .appendingPathComponent("lmdb-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}
