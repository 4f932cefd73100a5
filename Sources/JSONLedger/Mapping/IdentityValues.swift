extension Array where Element == AttributeValue {
  /// The values of an identity of `count` attributes, each `value(position)`; nil when one
  /// is missing. One value, the usual identity, is allocated by an array literal at its size:
  /// `reserveCapacity` on an empty array takes the array's general path for growing, about
  /// 160 instructions more for each object a batch maps.
  static func identity(count: Int, _ value: (Int) -> AttributeValue?) -> [AttributeValue]? {
    if count == 1 {
      guard let only = value(0) else { return nil }
      return [only]
    }
    var values: [AttributeValue] = []
    values.reserveCapacity(count)
    for position in 0..<count {
      guard let next = value(position) else { return nil }
      values.append(next)
    }
    return values
  }
}
