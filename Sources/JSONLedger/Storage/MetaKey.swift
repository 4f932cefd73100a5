/// Keys of the `meta` database.
enum MetaKey {
  static let format = Array("format".utf8)
  static let model = Array("model".utf8)
  static let head = Array("head".utf8)
  /// The first batch the log holds (absent: 1); set by `compact`, whose checkpoint it is.
  static let horizon = Array("horizon".utf8)
  /// The next unused sequence number of object ids (`ObjectIDs`).
  static let nextObjectSequence = Array("nextObjectSequence".utf8)
}
