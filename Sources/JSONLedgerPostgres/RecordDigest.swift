import Crypto
import Foundation

/// Lower-case hexadecimal text of bytes (checksums in messages).
enum Hex {
  static func string(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }
}

/// SHA-256 of a record's bytes: the link of the remote log's chain.
enum RecordDigest {
  /// The digest before batch 1: 32 zero bytes.
  static let genesis = [UInt8](repeating: 0, count: 32)

  static func of(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
}

enum Insecure_MD5 {
  static func digest(_ bytes: [UInt8]) -> [UInt8] { Array(Insecure.MD5.hash(data: bytes)) }
}
