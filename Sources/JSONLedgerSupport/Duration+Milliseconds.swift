extension Duration {
  /// The whole milliseconds, as the ledger's log lines give durations.
  public var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
