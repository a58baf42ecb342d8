/// `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml` and the demo page.
extension Worker {
    func handleOperational(_ exchange: Exchange) {
        switch exchange.path {
        case "/healthz":
            respond(exchange, status: 200) { $0.beginObject(); $0.field("status", "ok"); $0.endObject() }
        case "/readyz":
            if shared.redisReady {
                respond(exchange, status: 200) { $0.beginObject(); $0.field("status", "ready"); $0.endObject() }
            } else {
                respond(exchange, error: APIError("store_unavailable", "Redis is not reachable from every worker"))
            }
        case "/metrics":
            respond(exchange, status: 200, body: Array(shared.prometheusText().utf8),
                    contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "/openapi.yaml":
            respond(exchange, status: 200, body: Array(OpenAPIDocument.yaml.utf8), contentType: "application/yaml; charset=utf-8")
        default:
            respond(exchange, status: 200, body: Array(DemoPage.html.utf8), contentType: "text/html; charset=utf-8")
        }
    }
}
