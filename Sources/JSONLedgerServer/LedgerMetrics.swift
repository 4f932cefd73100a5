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
  let cspReports: Counter

  init(registry: PrometheusCollectorRegistry) {
    self.registry = registry
    // Named namespace_metric_unit: jsonledger_head, jsonledger_store_bytes,
    // jsonledger_batches_applied_total, jsonledger_csp_reports_total.
    head = registry.makeGauge(
      descriptor: MetricNameDescriptor(
        namespace: "jsonledger", metricName: "head", unitName: "", helpText: "The batch id at the head of the log."))
    storeBytes = registry.makeGauge(
      descriptor: MetricNameDescriptor(
        namespace: "jsonledger", metricName: "store", unitName: "bytes", helpText: "The size of the store's data file.")
    )
    applied = registry.makeCounter(
      descriptor: MetricNameDescriptor(
        namespace: "jsonledger", metricName: "batches_applied", unitName: "total",
        helpText: "Batches applied through this server (imports, reverts, rewinds)."))
    cspReports = registry.makeCounter(
      descriptor: MetricNameDescriptor(
        namespace: "jsonledger", metricName: "csp_reports", unitName: "total",
        helpText: "Reports of something the console's Content-Security-Policy blocked."))
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
