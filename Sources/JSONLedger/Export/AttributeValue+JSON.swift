extension AttributeValue {
  /// The value as export writes it: numbers as numbers, dates in `dateFormat` (UTC), binary as
  /// base64, UUIDs and URLs as strings. No value transformer is applied.
  ///
  /// ```swift
  /// let json = snapshot["released"]?.jsonValue(dateFormat: .iso8601)  // "1981-11-13T00:00:00Z"
  /// ```
  public func jsonValue(dateFormat: DateFormat) -> JSONValue {
    Exporter.json(self, dateFormat: dateFormat)
  }
}
