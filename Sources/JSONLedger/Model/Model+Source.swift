import Foundation

extension Model {
  /// Loads a model from a path: a JSON model file, or an Xcode Core Data model (an
  /// `.xcdatamodeld` folder, an `.xcdatamodel` folder, or its `contents` XML).
  public init(contentsOf path: String) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw ModelError(source: path, problems: [.init(place: ModelError.filePlace, reason: "not found")])
    }
    let lowered = path.lowercased()
    if isDirectory.boolValue || lowered.hasSuffix(".xcdatamodeld") || lowered.hasSuffix(".xcdatamodel")
      || (path as NSString).lastPathComponent == "contents" || lowered.hasSuffix(".xml")
    {
      try self.init(coreDataModelAt: path)
    } else {
      try self.init(jsonFile: path)
    }
  }
}
