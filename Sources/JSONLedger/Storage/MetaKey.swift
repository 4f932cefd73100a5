/// Keys of the `meta` database.
enum MetaKey {
  static let format = Array("format".utf8)
  static let model = Array("model".utf8)
  static let head = Array("head".utf8)
  static let nextObjectID = Array("nextObjectID".utf8)
}
