import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One page as the server answered it.
struct FetchedPage {
  /// The URL the page came from, after redirects.
  let url: URL
  let headers: HTTPHeaders
  let body: [UInt8]
  /// Whether the server answered 304: the page is as the validators sent say (the caller's
  /// copy), and `body` is empty.
  var notModified = false
  /// Tries of this page after one failed.
  var retries = 0
}

/// Fetches pages with a plan's headers, retrying what passes (a lost connection, 429, 502,
/// 503, 504) with growing waits or the server's `Retry-After`, within the run's deadline.
struct PageFetcher: Sendable {
  let client: HTTPClient
  let headers: [PullHeader]
  let policy: RetryPolicy
  let deadline: ContinuousClock.Instant
  /// The largest page taken, in bytes.
  let maxPageBytes: Int

  init(client: HTTPClient, plan: PullPlan, deadline: ContinuousClock.Instant, maxPageBytes: Int = 256 << 20) {
    self.client = client
    headers = plan.headers
    policy = plan.retries
    self.deadline = deadline
    self.maxPageBytes = maxPageBytes
  }

  /// The page at `url`, or the error of its last try. `validators`: the `If-None-Match` /
  /// `If-Modified-Since` headers of a copy kept from a run before (a 304 then answers it).
  /// The plan's headers go only to `origin`'s scheme, host and port: a next page or a
  /// redirect elsewhere is asked for without them (a token is not handed to another site).
  func fetch(_ url: URL, validators: [(String, String)] = [], origin: URL) async throws -> FetchedPage {
    let shown = RedactedURL.text(url)
    var attempt = 1
    while true {
      let failure: PullError
      var serverWait: Duration?
      do {
        var page = try await fetchOnce(url, shown: shown, validators: validators, origin: origin)
        page.retries = attempt - 1
        return page
      } catch let error as RetryablePage {
        failure = error.failure
        serverWait = error.retryAfter
      } catch let error as PullError {
        throw error
      } catch let error as HTTPClientError where Self.isPermanent(error) {
        throw PullError(.invalidURL, "cannot request \(shown): \(error)", url: shown)
      } catch let error where TLSFailure.reason(error) != nil {
        throw PullError(
          .tls, "the TLS handshake with \(url.host ?? shown) failed: \(TLSFailure.reason(error) ?? "")", url: shown)
      } catch is CancellationError {
        throw CancellationError()
      } catch let error as HTTPClientError where error == .deadlineExceeded {
        throw timedOut(shown)
      } catch {
        failure = PullError(.unreachable, "cannot reach \(shown): \(Self.describe(error))", url: shown)
        if ContinuousClock.now >= deadline { throw failure.afterTries(attempt) }
      }
      guard attempt < policy.attempts else { throw failure.afterTries(attempt) }
      let wait = serverWait ?? backoff(after: attempt)
      guard wait <= policy.longestWait else {
        throw PullError(
          failure.code, "\(failure.message); the server asks to wait \(wait), longer than \(policy.longestWait)",
          url: shown, status: failure.status)
      }
      // No time left for another try: the failure is what to say, not the clock.
      guard ContinuousClock.now + wait < deadline else { throw failure.afterTries(attempt) }
      try await Task.sleep(for: wait)
      attempt += 1
    }
  }

  private func fetchOnce(
    _ url: URL, shown: String, validators: [(String, String)], origin: URL
  ) async throws -> FetchedPage {
    // Redirects are followed here (the client is made not to), so that each hop's headers
    // are chosen by its origin.
    var current = url
    for _ in 0...Self.redirects {
      var request = HTTPClientRequest(url: current.absoluteString)
      request.headers.add(name: "Accept", value: "application/json")
      request.headers.add(name: "User-Agent", value: "jsonledger-pull")
      if Self.sameOrigin(current, origin) {
        for header in headers { request.headers.replaceOrAdd(name: header.name, value: header.value) }
      }
      for (name, value) in validators { request.headers.replaceOrAdd(name: name, value: value) }
      let remaining = deadline - ContinuousClock.now
      guard remaining > .zero else { throw timedOut(shown) }
      // One try may take the rest of the run, but no more than `longestTry`: a connection that
      // cannot be made is tried again by the client until then.
      let response = try await client.execute(
        request, timeout: .nanoseconds(Self.nanoseconds(min(remaining, Self.longestTry))))
      let status = Int(response.status.code)
      if [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "Location") {
        guard let next = URL(string: location, relativeTo: current)?.absoluteURL,
          next.scheme == "http" || next.scheme == "https"
        else {
          throw PullError(
            .invalidURL, "\(shown) redirects to \(RedactedURL.text(location)), no http URL", url: shown, status: status)
        }
        current = next
        continue
      }
      switch status {
      case 200..<300:
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > maxPageBytes {
          throw PullError(.pageTooLarge, "the page \(shown) is \(length) bytes, over \(maxPageBytes)", url: shown)
        }
        let body: ByteBuffer
        do { body = try await response.body.collect(upTo: maxPageBytes) } catch is NIOTooManyBytesError {
          throw PullError(.pageTooLarge, "the page \(shown) is over \(maxPageBytes) bytes", url: shown)
        }
        return FetchedPage(url: current, headers: response.headers, body: Array(buffer: body))
      case 304 where !validators.isEmpty:
        return FetchedPage(url: current, headers: response.headers, body: [], notModified: true)
      case 429, 502, 503, 504:
        let failure = PullError(
          .httpStatus, "\(shown) answered \(status) \(response.status.reasonPhrase)", url: shown, status: status)
        throw RetryablePage(failure: failure, retryAfter: Self.retryAfter(response.headers))
      default:
        throw PullError(
          .httpStatus, "\(shown) answered \(status) \(response.status.reasonPhrase)", url: shown, status: status)
      }
    }
    throw PullError(.httpStatus, "\(shown) redirects more than \(Self.redirects) times", url: shown)
  }

  /// The redirects one page may take.
  static let redirects = 5

  /// Whether two URLs have one origin: scheme, host and port.
  static func sameOrigin(_ one: URL, _ other: URL) -> Bool {
    func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
    return one.scheme?.lowercased() == other.scheme?.lowercased() && one.host?.lowercased() == other.host?.lowercased()
      && port(one) == port(other)
  }

  private func timedOut(_ shown: String) -> PullError {
    PullError(.timedOut, "the pull ran out of time reading \(shown)", url: shown)
  }

  /// The wait before try `attempt + 1`: the first wait doubled per try, with up to half of it
  /// again at random, at most the longest wait.
  private func backoff(after attempt: Int) -> Duration {
    let base = policy.firstWait * (1 << min(attempt - 1, 20))
    let jittered = base + base * Double.random(in: 0..<0.5)
    return min(jittered, policy.longestWait)
  }

  /// `Retry-After` in seconds or as an HTTP date.
  static func retryAfter(_ headers: HTTPHeaders) -> Duration? {
    guard let value = headers.first(name: "Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
    if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
    let format = DateFormatter()
    format.locale = Locale(identifier: "en_US_POSIX")
    format.timeZone = TimeZone(identifier: "GMT")
    format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = format.date(from: value) else { return nil }
    return .seconds(max(0, Int(date.timeIntervalSinceNow.rounded(.up))))
  }

  /// Errors no retry mends: the URL itself is wrong.
  static func isPermanent(_ error: HTTPClientError) -> Bool {
    [HTTPClientError.invalidURL, .emptyHost, .emptyScheme, .redirectLimitReached, .redirectCycleDetected].contains(
      error)
      || "\(error)".contains("unsupportedScheme")
  }

  static let longestTry: Duration = .seconds(120)

  static func describe(_ error: any Error) -> String {
    if let error = error as? HTTPClientError { return "\(error)" }
    return String(describing: error)
  }

  static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds > Int64.max / 1_000_000_000 ? Int64.max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}

/// A try that failed for a reason that passes, with the server's `Retry-After`.
private struct RetryablePage: Error {
  let failure: PullError
  let retryAfter: Duration?
}

extension PullError {
  func afterTries(_ count: Int) -> PullError {
    count <= 1 ? self : PullError(code, "\(message) (\(count) tries)", url: url, status: status)
  }
}
