import LMDB

/// Keys of the `meta` database.
enum MetaKey {
  static let format = Array("format".utf8)
  /// The current version of the model, as model file JSON.
  static let model = Array("model".utf8)
  /// The current model's version (absent: 1) and numbering (absent: by position).
  static let modelVersion = Array("modelVersion".utf8)
  static let numbering = Array("numbering".utf8)
  /// An earlier version of the model, with its numbering (`ModelVersions`).
  static func model(version: UInt32) -> [UInt8] { Array("model.\(version)".utf8) }
  static let head = Array("head".utf8)
  /// The first batch the log holds (absent: 1); set by `compact`, whose checkpoint it is. (Its
  /// bytes keep the name the store format gave it first.)
  static let firstBatch = Array("horizon".utf8)
  /// Set on a replica: where its records come from and go to (`Ledger.replicaSource`).
  static let replicaOf = Array("replicaOf".utf8)
  /// On a replica whose log starts at a checkpoint: the remote's checksum of the record the
  /// checkpoint stands for, which the next record chains to (`Ledger.replicaStartDigest`).
  static let replicaStartDigest = Array("replicaStartDigest".utf8)
  /// The next unused sequence number of object ids (`ObjectIDs`).
  static let nextObjectSequence = Array("nextObjectSequence".utf8)
  /// The projections' digest, with the head and first batch it was taken at
  /// (`ProjectionDigest.Kept`); absent in a store no version that keeps it has written.
  static let projectionDigest = Array("projectionDigest".utf8)
}

extension Transaction {
  /// The number stored under `key` (most significant byte first), read in place: every view
  /// reads the head, the first batch and the model version, and a copy of each would allocate.
  func bigEndianNumber<Number: FixedWidthInteger & UnsignedInteger>(
    forKey key: [UInt8], in database: Database, as: Number.Type = Number.self
  ) throws -> Number? {
    try withValue(forKey: key, in: database) { (bytes: Span<UInt8>) in Number(bigEndianBytes: bytes) }
  }
}
