import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// A small HTTP API of the tests' own, served for real on a loopback port by Hummingbird:
/// each path answers what the test set for it, in turn (the last answer repeats), and every
/// request it took is kept, headers included.
final class TestAPI: Sendable {
  /// One answer: a status, headers and a body; `wait` first; `cut` sends part of the body
  /// and drops the connection.
  struct Answer: Sendable {
    var status: HTTPResponse.Status = .ok
    var headers: [String: String] = [:]
    var body: String = "[]"
    var wait: Duration = .zero
    var cut = false
  }

  struct Request: Sendable {
    let path: String
    let headers: [String: String]
  }

  private let answers = Mutex<[String: [Answer]]>([:])
  private let taken = Mutex<[Request]>([])

  /// Sets what `path` (with its query, as `/issues?page=2`) answers, in turn.
  func set(_ path: String, _ sequence: Answer...) { answers.withLock { $0[path] = sequence } }

  /// Sets a JSON body `path` answers from now on.
  func set(_ path: String, json: String, headers: [String: String] = [:]) {
    set(path, Answer(headers: headers, body: json))
  }

  var requests: [Request] { taken.withLock { $0 } }

  /// The requests being answered now, and the most there were at once.
  private let load = Mutex<(now: Int, most: Int)>((0, 0))
  var mostAtOnce: Int { load.withLock { $0.most } }

  private func next(for path: String) -> Answer {
    answers.withLock { answers in
      guard var list = answers[path], !list.isEmpty else {
        return Answer(status: .notFound, body: #"{"detail": "not found"}"#)
      }
      let answer = list.removeFirst()
      answers[path] = list.isEmpty ? [answer] : list
      return answer
    }
  }

  /// Runs `body` with the API served on a loopback port, and its base URL.
  func serve(_ body: @Sendable (String) async throws -> Void) async throws {
    let router = Router()
    router.get("**") { request, _ -> Response in
      let path = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
      var headers: [String: String] = [:]
      for field in request.headers { headers[field.name.canonicalName] = field.value }
      self.taken.withLock { $0.append(Request(path: path, headers: headers)) }
      let answer = self.next(for: path)
      self.load.withLock { load in
        load.now += 1
        load.most = max(load.most, load.now)
      }
      defer { self.load.withLock { $0.now -= 1 } }
      if answer.wait > .zero { try await Task.sleep(for: answer.wait) }
      // A conditional request for the ETag the answer has: 304, as a real API answers it.
      if let etag = answer.headers["ETag"], headers["if-none-match"] == etag {
        return Response(status: .notModified, headers: [HTTPField.Name("ETag")!: etag])
      }
      var fields = HTTPFields()
      fields[.contentType] = "application/json"
      for (name, value) in answer.headers { fields[HTTPField.Name(name)!] = value }
      if answer.cut {
        let half = String(answer.body.prefix(answer.body.count / 2))
        return Response(
          status: answer.status, headers: fields,
          body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: half))
            throw CancellationError()
          })
      }
      return Response(
        status: answer.status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: answer.body)))
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    try await app.test(.live) { client in
      guard let port = client.port else { throw CancellationError() }
      try await body("http://127.0.0.1:\(port)")
    }
  }
}
