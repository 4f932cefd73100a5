/// How deep objects may nest inside one another, in a payload and in a nested export: deeper
/// than this, a payload is an error and an export writes keys. It bounds every recursion a
/// payload can drive (mapping, resolving, exporting), well inside a thread's stack.
enum NestingLimit {
  static let objects = 100
}
