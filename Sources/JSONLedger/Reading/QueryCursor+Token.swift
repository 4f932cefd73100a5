import Foundation

extension QueryCursor {
  /// The cursor as text, to hand to a client that asks for the next page later (an HTTP API's
  /// `after=`): URL-safe base64 of the store's own encoding of the key, the sort values and
  /// the position. It is opaque: only ``init(token:)`` reads it.
  public var token: String {
    var writer = BinaryWriter()
    writer.write(Self.tokenVersion)
    writer.write(varint: objectID)
    writer.write(key.entity)
    writer.write(varint: UInt64(key.identity.count))
    for value in key.identity { writer.write(value) }
    writer.write(varint: UInt64(sortValues.count))
    for value in sortValues { writer.write(optional: value) }
    return Data(writer.bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// The cursor a ``token`` names; a text that is not one is an error (``LedgerError/Code/invalidQuery``).
  public init(token: String) throws(LedgerError) {
    var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    let invalid = LedgerError(.invalidQuery, "\"\(token.prefix(40))\" is not a cursor this store gave")
    guard token.count <= 4096, let data = Data(base64Encoded: base64) else { throw invalid }
    var reader = BinaryReader([UInt8](data))
    do {
      guard try reader.readByte() == Self.tokenVersion else { throw invalid }
      let objectID = try reader.readVarint()
      let entity = try reader.readString()
      let count = try reader.readVarint()
      guard count <= 64 else { throw invalid }
      var identity: [AttributeValue] = []
      for _ in 0..<count {
        guard let value = try reader.readValue() else { throw invalid }
        identity.append(value)
      }
      let sortCount = try reader.readVarint()
      guard sortCount <= 64 else { throw invalid }
      var sortValues: [AttributeValue?] = []
      for _ in 0..<sortCount { sortValues.append(try reader.readValue()) }
      guard reader.isAtEnd else { throw invalid }
      self.init(key: ObjectKey(entity: entity, identity: identity), sortValues: sortValues, objectID: objectID)
    } catch let error as LedgerError {
      throw error
    } catch {
      throw invalid
    }
  }

  private static let tokenVersion: UInt8 = 1
}
