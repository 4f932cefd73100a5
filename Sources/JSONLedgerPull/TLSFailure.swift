import NIOSSL

/// What a TLS failure means, in words: the handshake fails the same way on every try, so a
/// pull says why at once instead of trying again.
enum TLSFailure {
  /// The reason `error` gives, or nil when it is no TLS failure.
  static func reason(_ error: any Error) -> String? {
    if let error = error as? NIOSSLExtraError {
      return error == .failedToValidateHostname
        ? "the server's certificate is for another name" : "\(error)"
    }
    guard let error = error as? NIOSSLError else { return nil }
    switch error {
    case .handshakeFailed(let failure):
      let text = "\(failure)"
      if text.contains("WRONG_VERSION_NUMBER") { return "the server does not answer in TLS (is the URL http?)" }
      if text.contains("CERTIFICATE_VERIFY_FAILED") { return "the server's certificate is not trusted" }
      return text
    default:
      return "\(error)"
    }
  }
}
