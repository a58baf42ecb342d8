import Foundation
import ResendGate

/// `POST /v1/sends`: reserve a send if the number's cooldown allows it.
extension Worker {
    /// `caller` scopes the request's `Idempotency-Key` (`SendRequest.caller`).
    func handleSend(_ exchange: Exchange, caller: String) {
        guard readJSONBody(exchange) else { return }
        let request = exchange.request
        let send: SendRequest
        do {
            send = try SendInput.decode(
                body: bodyBuffer, idempotencyKey: request.header("Idempotency-Key"), caller: caller, gate: gate)
        } catch {
            return respond(exchange, error: error)
        }
        // An issued code goes to back ends only: a request with an `Origin` is a web page's,
        // and its user must get the code by SMS, never from the answer.
        let showsCode = request.withHeader("Origin", { _ in true }) != true
        gate.reserve(send) { [unowned self] result in
            switch result {
            case .success(let decision):
                if !decision.replayed { self.metrics.record(decision) }
                var headers = decision.allowed
                    ? [] : Self.rateLimitHeaders(decision, policy: self.gate.configuration.policies.policy(for: decision.purpose))
                if decision.replayed { headers.append(("Idempotent-Replayed", "true")) }
                if decision.issuedCode != nil { headers.append(("Cache-Control", "no-store")) }
                self.respond(exchange, status: APIError.status(of: decision.reason), headers: headers) {
                    decision.writeJSON(to: &$0, showingCode: showsCode)
                }
            // Never for a purpose that issues codes: an unrecorded send has no code to send.
            case .failure(let error) where error.kind == .storeUnavailable && self.configuration.onStoreFailure == .open
                && self.gate.configuration.policies.policy(for: send.purpose).codes == nil:
                self.allowUnrecorded(exchange, send)
            case .failure(let error):
                switch error.kind {
                case .regionNotAllowed: self.metrics.add(.deniedRegion)
                case .numberTypeNotAllowed: self.metrics.add(.deniedNumberType)
                default: break
                }
                self.respond(exchange, error: APIError(error))
            }
        }
    }

    /// `--on-store-failure open`: Redis could not decide, so the send is allowed without
    /// being recorded, and the answer says so in its body (`"store": "unavailable"`) and a
    /// header. No cooldown starts and no cap counts it; `retry_after` is the cooldown the
    /// policy would have given, for the client's display only (the gate's clock, not Redis's).
    private func allowUnrecorded(_ exchange: Exchange, _ send: SendRequest) {
        metrics.add(.allowedUnrecorded)
        let cooldown = gate.configuration.policies.policy(for: send.purpose).ladder[0]
        let milliseconds = Int64(cooldown / .milliseconds(1))
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        respond(exchange, status: 200, headers: [("X-Resendgate-Store", "unavailable")]) { json in
            json.beginObject()
            json.field("allowed", true)
            json.field("phone", send.phone.e164)
            json.field("purpose", send.purpose.name)
            WaitEncoding.write(milliseconds, end: "resend_at", now: now, to: &json)
            json.key("server_time"); json.timestamp(millisecondsSince1970: now)
            json.field("store", "unavailable")
            json.endObject()
        }
    }

    /// Reads a POST's JSON body into `bodyBuffer`, or answers 415 (not sent as
    /// `application/json`) and returns false. A body over `maxBodyBytes` never gets here:
    /// the framing refuses it (413, `Worker.refused`) before it is read.
    func readJSONBody(_ exchange: Exchange) -> Bool {
        let request = exchange.request
        // No Content-Type is refused too: a page can POST a Blob without one (no-cors).
        guard request.withHeader("Content-Type", Self.isJSON) == true else {
            respond(exchange, error: .unsupportedMediaType("send the body as JSON with the header Content-Type: application/json"))
            return false
        }
        request.readBody(into: &bodyBuffer)
        return true
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`), in any case.
    /// Nothing else: not `+json` types, not a form type a page could send without CORS.
    /// Byte-level: this runs on every send, and Foundation's trimming is costly.
    static func isJSON(_ contentType: String) -> Bool {
        var contentType = contentType
        return contentType.withUTF8 { isJSON($0) }
    }

    /// The same over the header's bytes, as the connection holds them (no String made).
    static func isJSON(_ contentType: UnsafeBufferPointer<UInt8>) -> Bool {
        var mediaType = contentType.prefix { $0 != UInt8(ascii: ";") }
        while let first = mediaType.first, first == 0x20 || first == 0x09 { mediaType = mediaType.dropFirst() }
        while let last = mediaType.last, last == 0x20 || last == 0x09 { mediaType = mediaType.dropLast() }
        return mediaType.equalsIgnoringASCIICase("application/json".utf8)
    }

    /// `Retry-After` and the IETF `RateLimit` / `RateLimit-Policy` pair, matching the
    /// body: the limit that decided has no send left, and frees one in `retry_after`.
    /// `q` is that limit's quota (`DecisionReason.quota`): one send per cooldown, a cap, a budget.
    static func rateLimitHeaders(_ decision: Decision, policy: Policy) -> [(String, String)] {
        let reason = decision.reason ?? .cooldown
        let quota = reason.quota(policy: policy, budgetLimit: decision.budgetLimit, sendsInWindow: decision.sendsInWindow)
        return WaitEncoding.headers(decision.retryAfterMilliseconds, limit: reason.rawValue, quota: quota)
    }
}

/// The fields of a `POST /v1/sends` body, validated into a request.
enum SendInput {
    static func decode(body: [UInt8], idempotencyKey: String?, caller: String = "", gate: GateWorker) throws(APIError) -> SendRequest {
        let fields = try object(body)
        let phoneText = try string(fields, "phone", required: true)!
        let purposeText = try string(fields, "purpose", required: false) ?? Purpose.default.name
        let clientIP = try string(fields, "client_ip", required: false)
        let region = try string(fields, "region", required: false)
        do throws(GateError) {
            return try SendRequest(
                phone: try gate.phone(phoneText, region: region), purpose: try gate.purpose(purposeText), caller: caller,
                clientIP: clientIP, idempotencyKey: idempotencyKey)
        } catch {
            throw APIError(error)
        }
    }

    /// The body as a JSON object's members.
    static func object(_ body: [UInt8]) throws(APIError) -> JSONFields {
        do {
            return try JSONFields(parsing: body)
        } catch {
            switch error {
            case .notAnObject: throw APIError.invalidJSON("the body must be a JSON object")
            case .malformed(let reason): throw APIError.invalidJSON("the body is not valid JSON: \(reason)")
            }
        }
    }

    static func string(_ fields: JSONFields, _ name: String, required: Bool) throws(APIError) -> String? {
        let value: JSONFields.Value?
        do { value = try fields.value(name) } catch { throw APIError.invalidJSON("the member \"\(name)\" appears twice") }
        switch value {
        case .string(let text)?: return text
        case nil, .null?:
            if required { throw .missingField("the body needs \"\(name)\"") }
            return nil
        default: throw .invalidField("\"\(name)\" must be a string")
        }
    }
}
