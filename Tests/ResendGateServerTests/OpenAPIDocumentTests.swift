import Foundation
import ResendGateTestSupport
@testable import ResendGateServer
import ResendGate
import Testing

/// `deploy/openapi.yaml` is the API's description: the server serves the same bytes,
/// and every documented route answers as documented, with every documented status.
@Suite("OpenAPI document", .ownThread)
struct OpenAPIDocumentTests {
    /// `deploy/openapi.yaml`, the file the server embeds (Content/EmbeddedFiles.txt).
    static func deployFile() throws -> String { try packageFile("deploy/openapi.yaml") }

    /// A file of the repository, by its path from the package root (found from this file's path).
    static func packageFile(_ path: String, filePath: String = #filePath) throws -> String {
        let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A documented operation: its responses, each with its media types and headers.
    struct Operation: Hashable, CustomStringConvertible {
        let method: String
        let path: String
        var description: String { "\(method) \(path)" }
    }

    struct DocumentedResponse {
        let mediaTypes: [String]
        let headers: [String]
    }

    static func operations(_ document: YAMLOutline) throws -> [Operation: [Int: DocumentedResponse]] {
        let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        var result: [Operation: [Int: DocumentedResponse]] = [:]
        for path in try #require(document["paths"]).children {
            for operation in path.children where methods.contains(operation.key) {
                var responses: [Int: DocumentedResponse] = [:]
                for response in try #require(operation["responses"], "\(path.key) \(operation.key)").children {
                    var node = response
                    if let reference = response["$ref"]?.value {
                        node = try #require(document.node(at: String(reference.dropFirst(2))), "\(reference)")
                    }
                    let status = try #require(Int(response.key), "status \(response.key)")
                    responses[status] = DocumentedResponse(
                        mediaTypes: node["content"]?.children.map(\.key) ?? [], headers: node["headers"]?.children.map(\.key) ?? [])
                }
                result[Operation(method: operation.key.uppercased(), path: path.key)] = responses
            }
        }
        return result
    }

    /// Where two texts first differ, by line, for a readable failure.
    static func firstDifference(_ served: String, _ file: String) -> String {
        let a = served.split(separator: "\n", omittingEmptySubsequences: false)
        let b = file.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(a.count, b.count) {
            let left = index < a.count ? String(a[index]) : "<end>"
            let right = index < b.count ? String(b[index]) : "<end>"
            if left != right { return "line \(index + 1): served \"\(left)\", file \"\(right)\"" }
        }
        return "none"
    }

    @Test func everyReferenceResolvesAndEveryErrorCodeIsListed() throws {
        let document = try YAMLOutline(parsing: try Self.deployFile())
        #expect(document["openapi"]?.value?.hasPrefix("3.") == true)
        let references = document.references
        #expect(references.count > 10)
        for reference in references {
            #expect(reference.hasPrefix("#/") && document.node(at: String(reference.dropFirst(2))) != nil, "\(reference)")
        }
        let codes = try #require(document.node(at: "components/schemas/Error/properties/error/properties/code/enum"))
        #expect(Set(codes.children.compactMap(\.value)) == [
            "invalid_json", "invalid_phone", "invalid_purpose", "missing_field", "invalid_field", "bad_request",
            "unauthorized", "not_found", "method_not_allowed", "body_too_large", "unsupported_media_type",
            "header_too_large", "store_unavailable", "region_not_allowed", "number_type_not_allowed",
            "idempotency_key_reused", "misdirected_request", "forbidden", "refund_limit", "locked", "no_code_sent",
            "code_locked", "wrong_code", "code_expired", "code_used", "code_voided", "codes_not_issued", "codes_issued",
            "store_evicts_keys",
        ])
        #expect(document.node(at: "components/securitySchemes/bearer/scheme")?.value == "bearer")
        let tooMany = try #require(try Self.operations(document)[Operation(method: "POST", path: "/v1/sends")]?[429])
        #expect(Set(tooMany.headers) == ["Retry-After", "RateLimit", "RateLimit-Policy"])
        let refundLimit = try #require(try Self.operations(document)[Operation(method: "DELETE", path: "/v1/cooldowns/{phone}")]?[429])
        #expect(Set(refundLimit.headers) == ["Retry-After", "RateLimit", "RateLimit-Policy"])
    }

    /// The router's table (`Route.table`) is the API's routes, each with its scope decision:
    /// docs/API.md's routes table (method, path, scope or none) row for row, HEAD included;
    /// this document's operations (HEAD aside), open exactly where it says `security: []`.
    /// A keyed row names one scope, so no row can let any valid key through.
    @Test func theRouteTableIsTheDocumentedRoutesWithTheirScopes() throws {
        let document = try YAMLOutline(parsing: try Self.deployFile())
        var routed: [String: String] = [:]  // "GET /v1/prefixes" -> "read", or "none"
        for route in Route.table {
            let path = route.path.replacingOccurrences(of: "?}", with: "}")
            let scope: String
            switch route.access {
            case .open: scope = "none"
            case .key(let scopes): scope = try #require(APIScopes.names.first { $0.scope == scopes }, "\(path): \(scopes)").name
            }
            for method in route.methods {
                #expect(routed.updateValue(scope, forKey: "\(method.rawValue) \(path)") == nil, "\(method) \(path): two rows")
            }
        }
        var listed: [String: String] = [:]
        let api = try Self.packageFile("docs/API.md").split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(api.firstIndex { $0.hasPrefix("| method | path | scope |") })
        for line in api[(header + 2)...].prefix(while: { $0.hasPrefix("|") }) {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let path = try #require(cells[1].firstMatch(of: /`([^`?]+)/)?.output.1, "\(line)")
            for method in cells[0].matches(of: /`([A-Z]+)`/) {
                listed["\(method.output.1) \(path)"] = cells[2].replacingOccurrences(of: "`", with: "")
            }
        }
        #expect(routed == listed, "Route.table and docs/API.md's routes table differ")
        let documented = try Self.operations(document).keys.map { "\($0.method) \($0.path)" }
        #expect(Set(routed.keys.filter { !$0.hasPrefix("HEAD ") }) == Set(documented), "Route.table and deploy/openapi.yaml differ")
        for (route, scope) in routed where !route.hasPrefix("HEAD ") {
            let parts = route.split(separator: " ")
            let operation = document["paths"]?[String(parts[1])]?[parts[0].lowercased()]
            #expect((operation?["security"]?.value == "[]") == (scope == "none"), "\(route): scope \(scope)")
        }
    }

    /// A key that may only send, and a bare key (send and read), next to the probes'
    /// own key, which has every scope.
    static let sendOnlyKey = "openapi-send-only-key-0123"
    static let bareKey = "openapi-bare-key-0123456789"

    /// One request against a documented operation; `frozen` ones run while Redis is paused.
    struct Probe {
        let operation: Operation
        let method: String
        let target: String
        var headers: [(String, String)] = []
        var body: String?
        var withKey = true
        var frozen = false
        /// Another key than the probes' own (which has every scope).
        var apiKey: String?
        /// Sent with this Host to a gate without API keys (421 misdirected_request).
        var host: String?
    }

    static let probes: [Probe] = {
        let sends = Operation(method: "POST", path: "/v1/sends")
        let peek = Operation(method: "GET", path: "/v1/cooldowns/{phone}")
        let release = Operation(method: "DELETE", path: "/v1/cooldowns/{phone}")
        let json = [("Content-Type", "application/json")]
        let phone = #"{"phone": "+8613800138000", "purpose": "login"}"#
        var probes = [
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: phone),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: phone),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: "{"),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: phone, withKey: false),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json,
                  body: #"{"phone": "+8613800138001", "x": "\#(String(repeating: "x", count: 20 * 1024))"}"#),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: [("Content-Type", "text/plain")], body: phone),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: [], body: phone),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json + [("Origin", "http://attacker.example")], body: phone),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: #"{"phone": "+44 909 879 0000"}"#),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json + [("Idempotency-Key", "k1")], body: phone),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json + [("Idempotency-Key", "k1")],
                  body: #"{"phone": "+8613800138002"}"#),
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: phone, frozen: true),
            // A short cooldown, so that its event stream ends within the test.
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json,
                  body: #"{"phone": "+8613800138003", "purpose": "short"}"#),
        ]
        let countdown = Operation(method: "GET", path: "/v1/countdowns/{token}")
        let events = Operation(method: "GET", path: "/v1/countdowns/{token}/events")
        for (operation, suffix) in [(countdown, ""), (events, "/events")] {
            probes += [
                Probe(operation: operation, method: "GET", target: "/v1/countdowns/{token}" + suffix, withKey: false),
                Probe(operation: operation, method: "GET", target: "/v1/countdowns/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" + suffix, withKey: false),
                // A real token while Redis is frozen (an unknown one is 404 without Redis).
                Probe(operation: operation, method: "GET", target: "/v1/countdowns/{token}" + suffix,
                      withKey: false, frozen: true),
            ]
        }
        for (operation, method) in [(peek, "GET"), (release, "DELETE")] {
            probes += [
                Probe(operation: operation, method: method, target: "/v1/cooldowns/%2B8613800138000?purpose=login"),
                Probe(operation: operation, method: method, target: "/v1/cooldowns/13800138000?purpose=Login"),
                Probe(operation: operation, method: method, target: "/v1/cooldowns/%2B8613800138000", withKey: false),
                Probe(operation: operation, method: method, target: "/v1/cooldowns/%2B8613800138000", frozen: true),
            ]
        }
        probes += [
            // Keys without the route's scope.
            Probe(operation: peek, method: "GET", target: "/v1/cooldowns/%2B8613800138000", apiKey: sendOnlyKey),
            Probe(operation: release, method: "DELETE", target: "/v1/cooldowns/%2B8613800138000?purpose=login", apiKey: bareKey),
            // The release above refunded login's one refund: a new send's refund is refused.
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: phone),
            Probe(operation: release, method: "DELETE", target: "/v1/cooldowns/%2B8613800138000?purpose=login"),
        ]
        probes.append(Probe(operation: release, method: "DELETE", target: "/v1/cooldowns/%2B8613800138000",
                            headers: [("Origin", "http://attacker.example")]))
        // Verifications: a wrong code for a number sent none (409 no_code_sent); after a send,
        // four wrong codes answered, the fifth locks the code (409 code_locked); a purpose
        // that locks the number (429 locked); bad bodies, keys and pages; Redis frozen.
        let verify = Operation(method: "POST", path: "/v1/verifications")
        let wrong = #"{"phone": "+8613800138009", "outcome": "failed"}"#
        probes.append(Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json, body: wrong))
        probes.append(Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: #"{"phone": "+8613800138009"}"#))
        probes += (0..<5).map { _ in Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json, body: wrong) }
        probes += [
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json,
                  body: #"{"phone": "+8613800138008", "purpose": "locking"}"#),
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json,
                  body: #"{"phone": "+8613800138008", "purpose": "locking", "outcome": "failed"}"#),
        ]
        probes += [
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json, body: #"{"phone": "+8613800138009"}"#),
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json, body: wrong, withKey: false),
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json, body: wrong, apiKey: sendOnlyKey),
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json,
                  body: #"{"phone": "+8613800138008", "x": "\#(String(repeating: "x", count: 20 * 1024))"}"#),
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: [("Content-Type", "text/plain")], body: wrong),
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json,
                  body: #"{"phone": "+8613800138007", "outcome": "failed"}"#, frozen: true),
        ]
        // Checks of issued codes: a purpose without them (409 codes_not_issued), a number sent
        // none (410 code_expired), the right code ({code}, from the last send's answer) once
        // and again (200, 409 code_used), wrong codes (7 digits, never a 6-digit code: 422
        // wrong_code, then 409 code_locked; a purpose that locks the number: 429 locked), a
        // refunded code (410 code_voided); an outcome report for such a purpose (409
        // codes_issued); bad bodies, keys and pages; Redis frozen.
        let checks = Operation(method: "POST", path: "/v1/checks")
        func check(_ phone: String, _ code: String, purpose: String = "coded") -> String {
            #"{"phone": "\#(phone)", "purpose": "\#(purpose)", "code": "\#(code)"}"#
        }
        func send(_ phone: String, purpose: String = "coded") -> Probe {
            Probe(operation: sends, method: "POST", target: "/v1/sends", headers: json, body: #"{"phone": "\#(phone)", "purpose": "\#(purpose)"}"#)
        }
        probes += [
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138010", "123456", purpose: "default")),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138010", "123456")),
            send("+8613800138010"),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138010", "{code}")),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138010", "{code}")),
            send("+8613800138011"),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138011", "0000000")),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138011", "0000000")),
            send("+8613800138012", purpose: "codedlock"),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json,
                  body: check("+8613800138012", "0000000", purpose: "codedlock")),
            send("+8613800138013"),
            Probe(operation: release, method: "DELETE", target: "/v1/cooldowns/%2B8613800138013?purpose=coded"),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138013", "0000000")),
            Probe(operation: verify, method: "POST", target: "/v1/verifications", headers: json,
                  body: #"{"phone": "+8613800138013", "purpose": "coded", "outcome": "verified"}"#),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: "{"),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138013", "1234"), withKey: false),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138013", "1234"), apiKey: sendOnlyKey),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json,
                  body: #"{"phone": "+8613800138013", "x": "\#(String(repeating: "x", count: 20 * 1024))"}"#),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: [("Content-Type", "text/plain")], body: check("+8613800138013", "1234")),
            Probe(operation: checks, method: "POST", target: "/v1/checks", headers: json, body: check("+8613800138014", "1234"), frozen: true),
        ]
        // The blocked prefixes: the list, a state it does not list, keys, Redis frozen.
        let prefixes = Operation(method: "GET", path: "/v1/prefixes")
        probes += [
            Probe(operation: prefixes, method: "GET", target: "/v1/prefixes?state=blocked"),
            Probe(operation: prefixes, method: "GET", target: "/v1/prefixes?state=active"),
            Probe(operation: prefixes, method: "GET", target: "/v1/prefixes", withKey: false),
            Probe(operation: prefixes, method: "GET", target: "/v1/prefixes", apiKey: sendOnlyKey),
            Probe(operation: prefixes, method: "GET", target: "/v1/prefixes?state=blocked", frozen: true),
        ]
        for path in ["/healthz", "/readyz", "/metrics", "/", "/openapi.yaml"] {
            probes.append(Probe(operation: Operation(method: "GET", path: path), method: "GET", target: path, withKey: false))
        }
        probes.append(Probe(operation: Operation(method: "GET", path: "/readyz"), method: "GET", target: "/readyz", withKey: false, frozen: true))
        // DNS rebinding: every operation, on a keyless gate, addressed to another host.
        for operation in Set(probes.map(\.operation)) {
            let target = operation.path.replacingOccurrences(of: "{phone}", with: "%2B8613800138000")
            let post = operation.method == "POST"
            probes.append(Probe(operation: operation, method: operation.method, target: target, headers: post ? json : [],
                                body: post ? phone : nil, withKey: false, host: "attacker.example"))
        }
        return probes
    }()

    @Test func everyDocumentedOperationAnswersWithEveryDocumentedStatusAndNothingElse() throws {
        let file = try Self.deployFile()
        let documented = try Self.operations(try YAMLOutline(parsing: file))
        #expect(Set(Self.probes.map(\.operation)) == Set(documented.keys), "a documented route has no probe, or the reverse")
        var seen: [Operation: Set<Int>] = [:]
        func check(_ probe: Probe, _ response: RawHTTPResponse) {
            let context = "\(probe.method) \(probe.target.prefix(80)) -> \(response.status)"
            seen[probe.operation, default: []].insert(response.status)
            guard let expected = documented[probe.operation]?[response.status] else {
                Issue.record("undocumented status: \(context)")
                return
            }
            let contentType = response.header("Content-Type")
            if expected.mediaTypes.isEmpty {
                #expect(response.body.isEmpty, "\(context)")
            } else {
                #expect(expected.mediaTypes.contains { contentType == $0 || contentType?.hasPrefix($0 + ";") == true },
                        "\(context): Content-Type \(contentType ?? "none") is not one of \(expected.mediaTypes)")
            }
            for header in expected.headers {
                #expect(response.header(header) != nil, "\(context): no \(header)")
            }
            if probe.target == "/openapi.yaml" && response.status == 200 {
                #expect(response.body == Array(file.utf8),
                        "served /openapi.yaml differs: \(Self.firstDifference(response.text, file))")
            }
        }
        let policies = PolicySet(purposes: [
            "short": Policy(ladder: [.milliseconds(1500)]), "locking": Policy(maxFailedChecks: 1, lockoutScope: .number),
            "coded": Policy(maxFailedChecks: 2, codes: IssuedCodes()),
            "codedlock": Policy(maxFailedChecks: 1, lockoutScope: .number, codes: IssuedCodes()),
        ])
        let keys = ["\(RunningGate.apiKey) send,read,release,verify", "\(Self.sendOnlyKey) send", Self.bareKey]
        try withRunningGate(apiKeys: keys, redisTimeout: .milliseconds(300), policies: policies, codeSecret: "the probes' code secret") { gate in
            var token = "", code = ""
            for frozen in [false, true] {
                if frozen { gate.redis.pause() }
                for probe in Self.probes where probe.frozen == frozen && probe.host == nil {
                    let client = gate.client(apiKey: probe.withKey ? probe.apiKey ?? RunningGate.apiKey : nil)
                    let target = probe.target.replacingOccurrences(of: "{token}", with: token)
                    let body = probe.body.map { Array($0.replacingOccurrences(of: "{code}", with: code).utf8) }
                    let response = try client.request(probe.method, target, headers: probe.headers, body: body)
                    let answer = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
                    if let issued = answer?["countdown_token"] as? String { token = issued }
                    if let issued = answer?["code"] as? String { code = issued }
                    check(probe, response)
                }
            }
        }
        // Probes with their own Host go to a gate without API keys, where Host is checked.
        try withRunningGate { gate in
            for probe in Self.probes {
                guard let host = probe.host else { continue }
                let target = probe.target.replacingOccurrences(of: "{token}", with: "AAAAAAAAAAAAAAAAAAAAAA")
                var head = "\(probe.method) \(target) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
                for (name, value) in probe.headers { head += "\(name): \(value)\r\n" }
                if let body = probe.body { head += "Content-Length: \(body.utf8.count)\r\n" }
                let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
                try connection.write(head + "\r\n" + (probe.body ?? ""))
                check(probe, try connection.readResponse())
            }
        }
        for (operation, responses) in documented {
            #expect(seen[operation] == Set(responses.keys), "\(operation): documented \(responses.keys.sorted()), seen \(seen[operation]?.sorted() ?? [])")
        }
    }
}
