public import Testing

extension Tag {
  /// A check `RELIABILITY.md` lists: its doc comment says what it checks (`- Reliability:`) and
  /// at what size (`- Size:`), and `Tools/reliability/generate` writes the table from them.
  @Tag public static var reliability: Self
}
