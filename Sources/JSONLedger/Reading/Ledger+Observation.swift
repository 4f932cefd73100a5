extension Ledger {
  /// The object of `entity` with `key`, now and again after every batch that changes it
  /// (nil while it does not exist), whether this process or another one applied the batch.
  ///
  /// Batches of this `Ledger` are seen at once; those of other processes within `interval`
  /// (LMDB has no notification across processes, so the head is looked at that often).
  /// The sequence ends when the task iterating it is cancelled, or with the error of a read.
  ///
  /// ```swift
  /// for try await issue in ledger.observe("Issue", key: 1347) { render(issue) }
  /// ```
  public func observe(
    _ entity: String, key: some IdentityKey, every interval: Duration = .milliseconds(250)
  ) -> AsyncThrowingStream<ObjectSnapshot?, any Error> {
    let key = key.identityJSON
    return observe(every: interval) { view in try view.object(entity, key: key) }
  }

  /// A query's first page, now and again after every batch that changes it, from this
  /// process or another (see `observe(_:key:every:)`).
  public func observe(_ query: Query, every interval: Duration = .milliseconds(250)) -> AsyncThrowingStream<
    [ObjectSnapshot], any Error
  > {
    observe(every: interval) { view in try view.objects(query).objects }
  }

  /// Yields `value` of the current view at first and whenever it differs after a new head.
  private func observe<Value: Equatable & Sendable>(
    every interval: Duration, _ value: @escaping @Sendable (borrowing View) throws -> Value
  ) -> AsyncThrowingStream<Value, any Error> {
    // The state: the head and the value last seen.
    polling(every: interval, from: (UInt64?.none, Value?.none)) { last, continuation in
      let head = try self.head
      guard head != last.0 else { return false }
      last.0 = head
      let now = try await self.read(value)
      if now != last.1 {
        last.1 = now
        continuation.yield(now)
      }
      return false
    }
  }

  /// Every batch applied after `batchID` (nil: after the head when iteration starts), in order,
  /// whether this process or another one applied it: what a feed of changes (an HTTP
  /// server's `/v1/changes`) sends. Batches of this `Ledger` are seen at once, those of other
  /// processes within `interval`. The sequence ends when the task iterating it is cancelled,
  /// or with the error of a read (a batch that compact archived meanwhile, among others).
  public func batches(after batchID: UInt64? = nil, every interval: Duration = .milliseconds(250))
    -> AsyncThrowingStream<LogEntry, any Error>
  {
    // The state: the last batch sent.
    polling(every: interval, from: batchID) { sent, continuation in
      let head = try self.head
      let after = sent ?? head
      sent = after
      guard head > after else { return false }
      // Oldest first, at most 1,000 a read: a long way behind is caught up in steps.
      let entries = try await self.log(limit: Int(min(head - after, 1000)), before: min(head, after + 1000) + 1)
      for entry in entries.reversed() where entry.batchID > after {
        continuation.yield(entry)
        sent = entry.batchID
      }
      return true
    }
  }

  /// A stream fed by `step`, run at once and again after each batch of this `Ledger`, or after
  /// `interval` (LMDB has no notification across processes, so that often is how long a batch
  /// of another process can go unseen), with a state it keeps from one run to the next; a step
  /// that returns true runs again at once. Ends when the task iterating it is cancelled, or
  /// with the error a step throws.
  private func polling<Element: Sendable, State: Sendable>(
    every interval: Duration, from initial: State,
    _ step: @escaping @Sendable (inout State, AsyncThrowingStream<Element, any Error>.Continuation) async throws -> Bool
  ) -> AsyncThrowingStream<Element, any Error> {
    let local = changes
    return AsyncThrowingStream { continuation in
      let task = Task {
        let wake = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let relay = Task {
          for await _ in local { wake.continuation.yield() }
        }
        defer { relay.cancel() }
        var wakeUps = wake.stream.makeAsyncIterator()
        var state = initial
        do {
          while !Task.isCancelled {
            if try await step(&state, continuation) { continue }
            let sleeper = Task {
              try? await Task.sleep(for: interval)
              wake.continuation.yield()
            }
            _ = await wakeUps.next()
            sleeper.cancel()
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
