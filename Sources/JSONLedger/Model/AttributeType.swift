/// The type of an attribute, as the model file names it.
public enum AttributeType: String, Sendable, Hashable, CaseIterable {
  case string, int16, int32, int64, double, float, decimal, bool, date, uuid, url, binary
  /// Any JSON value (arrays and objects kept as they are).
  case json

  /// Whether values of this type are whole numbers.
  public var isInteger: Bool { self == .int16 || self == .int32 || self == .int64 }
}
