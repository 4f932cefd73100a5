import Foundation
import Hummingbird
import JSONLedger
import Prometheus

/// The ledger's own figures in a Prometheus registry: its head and store size (read when
/// `/metrics` is asked for) and the batches the routes applied.
struct LedgerMetrics: Sendable {
  let registry: PrometheusCollectorRegistry
  let head: Gauge
  let storeBytes: Gauge
  let applied: Counter

  init(registry: PrometheusCollectorRegistry) {
    self.registry = registry
    head = registry.makeGauge(name: "jsonledger_head", help: "The batch id at the head of the log.")
    storeBytes = registry.makeGauge(name: "jsonledger_store_bytes", help: "The size of the store's data file.")
    applied = registry.makeCounter(
      name: "jsonledger_batches_applied_total", help: "Batches applied through this server (imports, reverts, rewinds)."
    )
  }
}

extension LedgerRoutes {
  func addMetricsRoute<Routes: RouterMethods>(to router: Routes, _ metrics: LedgerMetrics) {
    router.get("metrics") { request, context in
      try await reading(request, context) { _ in
        metrics.head.set(Double(try ledger.head))
        let size = (try? FileManager.default.attributesOfItem(atPath: ledger.path + "/data.mdb")[.size] as? Int) ?? 0
        metrics.storeBytes.set(Double(size))
        return Response(
          status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
          body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
      }
    }
  }
}
