import Foundation
import ResendGate

/// `POST /v1/sends`: reserve a send if the number's cooldown allows it.
enum SendsRoute {
    static func post(_ c: Exchange) {
        guard let (phone, purpose, clientIP) = c.numberBody({ fields throws(APIError) in try fields.string("client_ip") }),
              let send = c.decoded({ () throws(APIError) in
                  try APIError.answering { () throws(GateError) in
                      try SendRequest(phone: phone, purpose: purpose, caller: c.caller, clientIP: clientIP,
                                      idempotencyKey: c.request.header("Idempotency-Key"))
                  }
              }) else { return }
        // An issued code goes to back ends only: a request with an `Origin` is a web page's,
        // and its user must get the code by SMS, never from the answer.
        let showsCode = c.request.withHeader("Origin", { _ in true }) != true
        let policies = c.gate.configuration.policies
        c.gate.reserve(send) { result in
            switch result {
            case .success(let decision):
                if !decision.replayed { c.worker.metrics.record(decision) }
                var headers = decision.allowed ? [] : rateLimitHeaders(decision, policy: policies.policy(for: decision.purpose))
                if decision.replayed { headers.append(("Idempotent-Replayed", "true")) }
                if decision.issuedCode != nil { headers.append(("Cache-Control", "no-store")) }
                c.respond(status: APIError.status(of: decision.reason), headers: headers) { decision.writeJSON(to: &$0, showingCode: showsCode) }
            // Never for a purpose that issues codes: an unrecorded send has no code to send.
            case .failure(let error) where error.kind == .storeUnavailable && c.worker.configuration.onStoreFailure == .open
                && policies.policy(for: send.purpose).codes == nil:
                allowUnrecorded(c, send)
            case .failure(let error):
                switch error.kind {
                case .regionNotAllowed: c.worker.metrics.add(.deniedRegion)
                case .numberTypeNotAllowed: c.worker.metrics.add(.deniedNumberType)
                default: break
                }
                c.respond(APIError(error))
            }
        }
    }

    /// `--on-store-failure open`: allowed unrecorded (no cooldown, no cap), as the body
    /// (`"store": "unavailable"`) and a header say; `retry_after` is the policy's cooldown,
    /// for display only (the gate's clock, not Redis's).
    private static func allowUnrecorded(_ c: Exchange, _ send: SendRequest) {
        c.worker.metrics.add(.allowedUnrecorded)
        let cooldown = c.gate.configuration.policies.policy(for: send.purpose).ladder[0]
        let milliseconds = Int64(cooldown / .milliseconds(1))
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        c.respond(status: 200, headers: [("X-Resendgate-Store", "unavailable")]) { json in
            json.beginObject()
            json.field("allowed", true)
            json.field("phone", send.phone.e164)
            json.field("purpose", send.purpose.name)
            WaitEncoding.write(milliseconds, end: "resend_at", serverTime: now, to: &json)
            json.field("store", "unavailable")
            json.endObject()
        }
    }

    /// The refusal's headers: the limit that decided has none left, frees one in
    /// `retry_after`, and its quota is `DecisionReason.quota`.
    static func rateLimitHeaders(_ decision: Decision, policy: Policy) -> [(String, String)] {
        let reason = decision.reason ?? .cooldown
        let quota = reason.quota(policy: policy, budgetLimit: decision.budgetLimit, sendsInWindow: decision.sendsInWindow)
        return WaitEncoding.headers(decision.retryAfterMilliseconds, limit: reason.rawValue, quota: quota)
    }
}
