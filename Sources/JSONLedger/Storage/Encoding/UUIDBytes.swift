import Foundation

extension UUID {
  /// The sixteen bytes of the UUID, in order (as `uuid` holds them).
  var bytes: [UInt8] {
    let u = uuid
    return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
  }
}
