import HTTPTypes
import Hummingbird
import JSONLedger

extension LedgerRoutes {
  func addWriteRoutes<Routes: RouterMethods>(to router: Routes) {
    let v1 = router.group("v1")
    // A batch: a document keyed by collection, or with `entity=` an array of one entity's
    // objects. `Idempotency-Key` makes a retry answer the first batch; `Expected-Head` fails
    // with 409 unless the log's head is that batch.
    v1.post("batches") { request, context in
      try await writing(request, context) { values in
        let expectedHead = try request.headers[Self.expectedHead].map { try values.batchID($0, name: "Expected-Head") }
        let (buffer, reservation) = try await collectBody(of: request)
        // The body's bytes count against `maxBodyBytesInFlight` until the batch is applied.
        defer { reservation.release() }
        let body = Array(buffer: buffer)
        // Staged as text: an object the store already holds from the same text is not parsed.
        var batch = ledger.makeBatch()
        // `itemsAt`: the items inside an envelope (`results` of `{count, next, results}`).
        let options = StagingOptions(itemsAt: values.query("itemsAt"))
        if let entity = values.query("entity") {
          try batch.stage(json: body, as: entity, options: options)
        } else {
          try batch.stageDocument(json: body, options: options)
        }
        let (message, author, source) = (values.query("message"), values.query("author"), values.query("source"))
        let idempotencyKey = request.headers[Self.idempotencyKey]
        let staged = batch
        let summary = try await writes.apply(
          staged, message: message, author: author, source: source, idempotencyKey: idempotencyKey,
          expectedHead: expectedHead)
        if !summary.wasAlreadyApplied, summary.wroteRecord { metrics?.applied.increment() }
        return JSONResponse.make(
          BatchSummary.jsonValue(of: [summary]),
          status: summary.wasAlreadyApplied || !summary.wroteRecord ? .ok : .created)
      }
    }
    // What a revert would do, written nowhere: the console shows it before the revert.
    v1.get("batches/:batch/revert-plan") { request, context in
      try await reading(request, context) { values in
        let batch = try values.batchID(try values.path("batch"), name: "batch")
        let mode = try values.revertMode()
        let plan = try await ledger.revertPlan(batch, force: mode == .force, keepingLaterChanges: mode == .keepLater)
        return JSONResponse.make(try plan.jsonValue(in: ledger))
      }
    }
    v1.post("batches/:batch/revert") { request, context in
      try await writing(request, context) { values in
        let batch = try values.batchID(try values.path("batch"), name: "batch")
        let mode = try values.revertMode()
        let (message, author) = (values.query("message"), values.query("author"))
        let result = try await writes.write("a revert") { ledger in
          try ledger.revert(
            batch, force: mode == .force, keepingLaterChanges: mode == .keepLater, message: message, author: author)
        }
        metrics?.applied.increment()
        return JSONResponse.make(result.jsonValue(dateFormat: ledger.model.dateFormat), status: .created)
      }
    }
    v1.post("rewind") { request, context in
      try await writing(request, context) { values in
        guard let text = values.query("to") else { throw APIFailure.badRequest("a rewind needs to (a batch id)") }
        let target = try values.batchID(text, name: "to")
        let (message, author) = (values.query("message"), values.query("author"))
        let summary = try await writes.write("a rewind") { ledger in
          try ledger.rewind(to: target, message: message, author: author)
        }
        metrics?.applied.increment()
        return JSONResponse.make(BatchSummary.jsonValue(of: [summary]), status: .created)
      }
    }
  }

  /// The request's body, whole: at most `maxBodyBytes` (413, said on the `Content-Length`
  /// header when it gives one, before a byte of the body is read), within `bodyTimeout` (408),
  /// and while the bodies all requests hold stay within `maxBodyBytesInFlight` (503 with
  /// `Retry-After`). The reservation holds the body's bytes until released.
  func collectBody(of request: Request) async throws -> (ByteBuffer, BodyBudget.Reservation) {
    let limit = options.maxBodyBytes
    let declared = try request.headers[.contentLength].map { text in
      guard let length = Int(text), length >= 0 else {
        throw APIFailure.badRequest("Content-Length must be a number of bytes, not \"\(text.prefix(40))\"")
      }
      return length
    }
    if let declared, declared > limit { throw APIFailure.bodyTooLarge(limit: limit) }
    let reservation = bodies.reservation()
    do {
      // A body of a known length reserves it whole at once; one sent in chunks, as it arrives.
      if let declared { try reservation.grow(by: declared) }
      let body = request.body
      let timeout = options.bodyTimeout
      let collected = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
        group.addTask {
          var collected = ByteBuffer()
          for try await chunk in body {
            guard collected.readableBytes + chunk.readableBytes <= limit else {
              throw APIFailure.bodyTooLarge(limit: limit)
            }
            if declared == nil { try reservation.grow(by: chunk.readableBytes) }
            var chunk = chunk
            collected.writeBuffer(&chunk)
          }
          return collected
        }
        group.addTask {
          try await Task.sleep(for: timeout)
          return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let collected = first else {
          throw APIFailure(
            status: .requestTimeout, code: "requestTimeout",
            message: "the request body did not arrive within \(timeout)")
        }
        return collected
      }
      return (collected, reservation)
    } catch {
      reservation.release()
      throw error
    }
  }

  static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
  static let expectedHead = HTTPField.Name("Expected-Head")!
}

/// What a revert does with later changes to the same fields: `mode=refuse` (the default),
/// `force` (override them) or `keepLater` (revert only what no later batch changed).
enum RevertMode: String {
  case refuse, force, keepLater
}

extension RequestValues {
  func revertMode() throws -> RevertMode {
    guard let text = query("mode") else { return .refuse }
    guard let mode = RevertMode(rawValue: text) else {
      throw APIFailure.badRequest("mode must be refuse, force or keepLater, not \"\(text.prefix(80))\"")
    }
    return mode
  }
}

extension RevertPlan {
  /// The plan as JSON: refused or not, why, and the changes a revert would write.
  func jsonValue(in ledger: Ledger) throws -> JSONValue {
    let dateFormat = ledger.model.dateFormat
    return [
      "batch": .number(JSONNumber(batchID)), "refused": .bool(isRefused),
      "alreadyRevertedBy": alreadyRevertedBy.map { .number(JSONNumber($0)) } ?? .null,
      "conflicts": .array(conflicts.map { $0.jsonValue(dateFormat: dateFormat) }),
      "changes": .array(try changes.map { try ledger.changeJSON($0.withoutHiddenLinks) }),
    ]
  }
}
