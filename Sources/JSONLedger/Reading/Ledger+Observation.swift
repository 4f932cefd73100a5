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
    let local = changes
    return AsyncThrowingStream { continuation in
      let task = Task {
        // Local batches wake the loop at once; the sleep catches other processes' batches.
        let wake = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let relay = Task {
          for await _ in local { wake.continuation.yield() }
        }
        defer { relay.cancel() }
        var wakeUps = wake.stream.makeAsyncIterator()
        var lastHead: UInt64?
        var lastValue: Value?
        do {
          while !Task.isCancelled {
            let head = try self.head
            if head != lastHead {
              lastHead = head
              let now = try await self.read(value)
              if now != lastValue {
                lastValue = now
                continuation.yield(now)
              }
            }
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
