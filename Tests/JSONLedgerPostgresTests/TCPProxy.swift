import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of a PostgreSQL server, for faults a real network has:
/// it passes bytes both ways; or, told to, lets a `COMMIT` through and drops the connection
/// before the server's answer reaches the client (the commit is made, its acknowledgement
/// lost); or stalls, swallowing every byte both ways while the connections stay open (a
/// black hole: a call waits for an answer that never comes). One thread accepts; two threads
/// pump each connection.
final class TCPProxy: Sendable {
  enum Mode: Sendable {
    /// Bytes pass both ways.
    case pass
    /// After a client sends COMMIT, the server's next bytes are dropped with the connection.
    case loseCommitAcknowledgement
    /// Bytes are read and thrown away, both ways; connections stay open. A connection that
    /// lost bytes so is of no use afterwards: only new ones work once bytes pass again.
    case stall
  }

  /// What a pump does with the bytes it read.
  private enum Verdict {
    case forward, swallow, cut
  }

  let port: Int
  private let listener: Int32
  private let upstreamPort: Int
  private let state = Mutex<(mode: Mode, dropped: Int, closed: Bool)>((.pass, 0, false))

  init(to upstreamPort: Int) throws {
    self.upstreamPort = upstreamPort
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    listener = fd
    guard fd >= 0 else { throw ClusterFailure("the proxy has no socket") }
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = Self.loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 64) == 0 else { throw ClusterFailure("the proxy cannot listen") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
    Thread.detachNewThread { [self] in
      while true {
        let client = accept(fd, nil, nil)
        if client < 0 { return }
        self.serve(client)
      }
    }
  }

  deinit { close() }

  /// How the proxy treats the connections' bytes from now on.
  func set(_ mode: Mode) { state.withLock { $0.mode = mode } }

  /// The connections dropped so far.
  var dropped: Int { state.withLock { $0.dropped } }

  /// Stops accepting (the connections open stay until either side closes them).
  func close() {
    let wasClosed = state.withLock { state in
      defer { state.closed = true }
      return state.closed
    }
    if !wasClosed {
      shutdown(listener, Int32(SHUT_RDWR))
      Glibc.close(listener)
    }
  }

  var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
  }

  private func serve(_ client: Int32) {
    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = Self.loopback(port: upstreamPort)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard server >= 0, connected == 0 else {
      Glibc.close(client)
      if server >= 0 { Glibc.close(server) }
      return
    }
    // Set by the client's pump when COMMIT passes in the fault's mode; read by the server's.
    let commitSent = Atomic<Bool>(false)
    Thread.detachNewThread { [self] in
      pump(from: client, to: server) { bytes in
        switch self.state.withLock({ $0.mode }) {
        case .stall: return .swallow
        case .loseCommitAcknowledgement where bytes.firstRange(of: Array("COMMIT".utf8)) != nil:
          commitSent.store(true, ordering: .sequentiallyConsistent)
        case .pass, .loseCommitAcknowledgement: break
        }
        return .forward
      }
    }
    Thread.detachNewThread { [self] in
      pump(from: server, to: client) { _ in
        if case .stall = self.state.withLock({ $0.mode }) { return .swallow }
        guard commitSent.load(ordering: .sequentiallyConsistent) else { return .forward }
        self.state.withLock { $0.dropped += 1 }
        return .cut
      }
    }
  }

  /// Copies bytes from `source` to `destination` as `verdict` says; when it cuts, at an end or
  /// an error, both sockets are shut down (not closed: the other pump may still be in a call
  /// on them; a test's proxy leaves its few descriptors to the process's end).
  private func pump(from source: Int32, to destination: Int32, verdict: ([UInt8]) -> Verdict) {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
      guard count > 0 else { break }
      let bytes = Array(buffer[0..<count])
      switch verdict(bytes) {
      case .forward: break
      case .swallow: continue
      case .cut:
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
        return
      }
      var sent = 0
      while sent < count {
        // `send` with MSG_NOSIGNAL: a peer that has gone is an error here, where `write` would
        // raise SIGPIPE and end the whole test process.
        let written = bytes.withUnsafeBytes {
          send(destination, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
        }
        if written <= 0 { break }
        sent += written
      }
      if sent < count { break }
    }
    shutdown(source, Int32(SHUT_RDWR))
    shutdown(destination, Int32(SHUT_RDWR))
  }
}
