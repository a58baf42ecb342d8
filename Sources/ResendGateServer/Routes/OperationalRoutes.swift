/// `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml` and the demo page.
extension Worker {
    func handleOperational(_ exchange: Exchange) {
        switch exchange.path {
        case "/healthz":
            respond(exchange, status: 200) { $0.beginObject(); $0.field("status", "ok"); $0.endObject() }
        case "/readyz":
            readiness(exchange)
        case "/metrics":
            respond(exchange, status: 200, body: Array(shared.prometheusText().utf8),
                    contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "/openapi.yaml":
            respond(exchange, status: 200, body: EmbeddedFiles.openAPIDocument, contentType: "application/yaml; charset=utf-8")
        default:
            respond(exchange, status: 200, body: EmbeddedFiles.demoPage, contentType: "text/html; charset=utf-8")
        }
    }

    /// Ready when every worker's connection is up and Redis answers a `PING` on this
    /// worker's connection within the command timeout (every master, on a cluster). The flags alone are not enough:
    /// they change only when a command fails, so a Redis that froze while no traffic
    /// came would stay "ready" for ever.
    /// A Redis that may evict keys makes it 503 `store_evicts_keys`, saying which policy
    /// (unless `--allow-evicting-redis`).
    private func readiness(_ exchange: Exchange) {
        let unavailable = APIError.storeUnavailable("Redis is not reachable from every worker")
        guard shared.redisReady else { return respond(exchange, error: unavailable) }
        if let refusal = shared.evictionRefusal { return respond(exchange, error: .storeEvictsKeys(refusal)) }
        gate.store.ping { [unowned self] answered in
            if let refusal = self.shared.evictionRefusal {
                self.respond(exchange, error: .storeEvictsKeys(refusal))
            } else if answered, self.shared.redisReady {
                self.respond(exchange, status: 200) { $0.beginObject(); $0.field("status", "ready"); $0.endObject() }
            } else {
                self.respond(exchange, error: unavailable)
            }
        }
    }
}
