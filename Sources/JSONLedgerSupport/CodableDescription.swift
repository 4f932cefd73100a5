/// Readable text for Foundation's decoding errors: the coding path and what was wrong.
public enum CodableDescription {
  public static func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
      let text = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
      return text.isEmpty ? "(top level)" : String(text.drop(while: { $0 == "." }))
    }
    switch error {
    case .keyNotFound(let key, let context): return "\(path(context)): no value for \"\(key.stringValue)\""
    case .typeMismatch(let type, let context): return "\(path(context)): expected \(type) (\(context.debugDescription))"
    case .valueNotFound(let type, let context): return "\(path(context)): expected \(type), found null"
    case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
    @unknown default: return "\(error)"
    }
  }
}
