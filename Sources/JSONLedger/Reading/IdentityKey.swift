public import Foundation

/// A plain Swift value that names an object by its identity: a `String`, an integer, a
/// `Double`, a `UUID`, a `URL`, or a `JSONValue` (for a composite key, an array in identity
/// order or an object of the identity attributes). It is coerced to the identity's type like
/// a JSON key: `42` and `"42"` name the same object of an integer identity.
///
/// ```swift
/// let id: Int64 = 1347
/// let issue = try view.object("Issue", key: id)
/// ```
public protocol IdentityKey: Sendable {
  /// The key as the JSON value a payload would give.
  var identityJSON: JSONValue { get }
}

extension JSONValue: IdentityKey {
  public var identityJSON: JSONValue { self }
}

extension String: IdentityKey {
  public var identityJSON: JSONValue { .string(self) }
}

extension Substring: IdentityKey {
  public var identityJSON: JSONValue { .string(String(self)) }
}

extension Int: IdentityKey {
  public var identityJSON: JSONValue { .number(JSONNumber(self)) }
}

extension Int64: IdentityKey {
  public var identityJSON: JSONValue { .number(JSONNumber(self)) }
}

extension Int32: IdentityKey {
  public var identityJSON: JSONValue { .number(JSONNumber(Int64(self))) }
}

extension Int16: IdentityKey {
  public var identityJSON: JSONValue { .number(JSONNumber(Int64(self))) }
}

extension UInt32: IdentityKey {
  public var identityJSON: JSONValue { .number(JSONNumber(Int64(self))) }
}

extension Double: IdentityKey {
  public var identityJSON: JSONValue { .number(JSONNumber(self)) }
}

extension UUID: IdentityKey {
  public var identityJSON: JSONValue { .string(uuidString) }
}

extension URL: IdentityKey {
  public var identityJSON: JSONValue { .string(absoluteString) }
}
