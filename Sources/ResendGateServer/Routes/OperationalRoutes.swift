/// `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml` and the demo page (`/`).
enum OperationalRoutes {
    static func health(_ c: Exchange) {
        c.respond(status: 200) { $0.beginObject(); $0.field("status", "ok"); $0.endObject() }
    }

    static func metrics(_ c: Exchange) {
        let text = PrometheusText.render(c.worker.shared.workerMetrics, redis: c.worker.shared.redis)
        c.respond(status: 200, body: Array(text.utf8), contentType: "text/plain; version=0.0.4; charset=utf-8")
    }

    static func openAPIDocument(_ c: Exchange) {
        c.respond(status: 200, body: EmbeddedFiles.openAPIDocument, contentType: "application/yaml; charset=utf-8")
    }

    static func demoPage(_ c: Exchange) {
        c.respond(status: 200, body: EmbeddedFiles.demoPage, contentType: "text/html; charset=utf-8")
    }

    /// Ready when every worker's connection is up and Redis (every master) answers this
    /// worker's `PING` in time: the flags change only when a command fails, so a Redis that
    /// froze with no traffic would stay "ready" for ever. A Redis that may evict keys makes
    /// it 503 `store_evicts_keys` (unless `--allow-evicting-redis`).
    static func readiness(_ c: Exchange) {
        let shared = c.worker.shared!
        let unavailable = APIError.storeUnavailable("Redis is not reachable from every worker")
        guard shared.redisReady else { return c.respond(unavailable) }
        if let refusal = shared.evictionRefusal { return c.respond(.storeEvictsKeys(refusal)) }
        c.gate.store.ping { answered in
            if let refusal = shared.evictionRefusal {
                c.respond(.storeEvictsKeys(refusal))
            } else if answered, shared.redisReady {
                c.respond(status: 200) { $0.beginObject(); $0.field("status", "ready"); $0.endObject() }
            } else {
                c.respond(unavailable)
            }
        }
    }
}
