/// The OpenAPI document served at `/openapi.yaml`: a copy of `deploy/openapi.yaml`,
/// byte for byte (`OpenAPIDocumentTests` fails when the two differ). Edit the YAML
/// file, then run `deploy/sync-openapi`.
enum OpenAPIDocument {
    static let yaml = #"""
        openapi: 3.0.3
        info:
          title: resendgate
          version: "1"
          description: >-
            A resend gate for SMS verification codes: one cooldown per purpose and
            canonical E.164 phone number, decided atomically in Redis. Every JSON body is
            sent as "application/json; charset=utf-8". On any route, an unknown path gets
            404 not_found (so does a known one with extra segments, such as
            /v1/cooldowns/{phone}/x or /healthz/x), a method the path does not accept gets
            405 method_not_allowed with an Allow header, and request headers over 8 KiB
            get 431 header_too_large. HEAD is accepted wherever GET is. When the server
            runs without API keys (loopback only), no Authorization header is needed, and
            every route answers 421 misdirected_request unless Host is localhost,
            127.0.0.1 or [::1] (any port): a web page cannot reach it through DNS
            rebinding. With or without keys, a request other than GET or HEAD whose
            Origin header is not one of the server's --allow-origins (by default its own
            origins) is 403 forbidden: a web page cannot write to the gate; requests
            without Origin (curl, servers) are not concerned. With keys, each keyed route needs a scope of the key:
            send (POST /v1/sends), read (GET /v1/cooldowns/{phone}) or release (DELETE
            /v1/cooldowns/{phone}); a bare key has send and read. A valid key without
            the scope gets 403 forbidden. retry_after, in every answer, is the real
            wait: the longest of every limit that binds the next send (the cooldown and
            max_sends; on POST with client_ip also the IP's cap), 0 only when a send
            would be allowed now.
        servers:
          - url: http://127.0.0.1:8080
        security:
          - bearer: []
        paths:
          /v1/sends:
            post:
              operationId: reserveSend
              summary: Reserve a send if every rule of the purpose's policy allows it.
              description: >-
                One atomic Redis round trip checks the cooldown, the escalation ladder,
                the number's and the client IP's caps, and commits all or nothing.
                Allowed: the cooldown starts now and the answer is 200, its retry_after
                the wait before the next send (the ladder step, or until the oldest send
                leaves the window when this one filled max_sends, or until the client
                IP's oldest send leaves its window when this one filled the IP's cap).
                Denied: 429 naming the limit that ends last, with the time left. Every spelling of a number
                is the same number; a national number uses the server's default region.
                The body must be sent with Content-Type application/json.
              parameters:
                - name: Idempotency-Key
                  in: header
                  required: false
                  description: >-
                    A retry with the same key and the same request within 24 h gets the
                    first answer again (with Idempotent-Replayed true) and consumes
                    nothing; the same key with another request is 422.
                  schema:
                    type: string
                    pattern: '^[!-~]{1,255}$'
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      $ref: '#/components/schemas/SendRequest'
              responses:
                '200':
                  description: Allowed; the number's cooldown now runs.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Decision'
                '400':
                  $ref: '#/components/responses/BadRequest'
                '401':
                  $ref: '#/components/responses/Unauthorized'
                '403':
                  description: >-
                    The policy refuses the number itself: its region
                    (region_not_allowed) or its line type, such as premium rate
                    (number_type_not_allowed); or the API key lacks the send scope, or
                    the request comes from a web page whose Origin is not allowed
                    (forbidden).
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'
                '413':
                  description: The body is over 16 KiB (body_too_large).
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'
                '415':
                  description: >-
                    The Content-Type is missing or is not application/json (any
                    parameters, such as charset, and any case are accepted; +json types
                    are not): unsupported_media_type.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'
                '421':
                  $ref: '#/components/responses/Misdirected'
                '422':
                  description: The Idempotency-Key was used with another request (idempotency_key_reused).
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'
                '429':
                  description: Denied by a limit (reason cooldown, max_sends or ip_limit); nothing was consumed.
                  headers:
                    Retry-After:
                      description: The body's retry_after, in whole seconds.
                      schema:
                        type: integer
                        minimum: 1
                    RateLimit:
                      description: IETF RateLimit header, e.g. "cooldown";r=0;t=42 (t is retry_after).
                      schema:
                        type: string
                    RateLimit-Policy:
                      description: IETF RateLimit-Policy header, e.g. "cooldown";q=1 or "max_sends";q=5.
                      schema:
                        type: string
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Decision'
                '503':
                  $ref: '#/components/responses/StoreUnavailable'
          /v1/cooldowns/{phone}:
            parameters:
              - $ref: '#/components/parameters/Phone'
              - $ref: '#/components/parameters/Purpose'
            get:
              operationId: peekCooldown
              summary: A number's cooldown, without consuming anything.
              description: >-
                The cooldown runs as long as the number's own limits refuse the next
                send: its ladder step, or until the oldest send leaves the window once
                max_sends is reached. The per-IP cap belongs to the client, not the
                number, and is not shown here.
              responses:
                '200':
                  description: The cooldown; active is false and resend_at null when none runs.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/CooldownStatus'
                '400':
                  $ref: '#/components/responses/BadRequest'
                '401':
                  $ref: '#/components/responses/Unauthorized'
                '403':
                  $ref: '#/components/responses/Forbidden'
                '421':
                  $ref: '#/components/responses/Misdirected'
                '503':
                  $ref: '#/components/responses/StoreUnavailable'
            delete:
              operationId: releaseCooldown
              summary: Refund a send - end the number's cooldown, so it may be sent to again at once.
              description: >-
                For when the SMS provider failed. Needs the release scope. The refunded
                send leaves the window (the ladder step and the count go back by one),
                its Idempotency-Key record is voided (a retry with that key is decided
                afresh), and the refund is recorded: at most max_refunds refunds
                (default 1) per number and purpose in the policy's window, so refunds
                reset the ladder and max_sends at most that many times. The per-IP
                count is never refunded.
              responses:
                '204':
                  description: Refunded, or no cooldown ran (then nothing is consumed).
                '400':
                  $ref: '#/components/responses/BadRequest'
                '401':
                  $ref: '#/components/responses/Unauthorized'
                '403':
                  description: >-
                    The API key lacks the release scope, the purpose's policy allows
                    no refunds (max_refunds 0), or the request comes from a web page
                    whose Origin is not allowed (forbidden); nothing changed.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'
                '429':
                  description: >-
                    The number had its max_refunds refunds in the window (refund_limit);
                    nothing changed and the cooldown keeps running. The error object
                    carries retry_after and retry_after_ms: when the oldest refund
                    leaves the window.
                  headers:
                    Retry-After:
                      description: The error's retry_after, in whole seconds.
                      schema:
                        type: integer
                        minimum: 1
                    RateLimit:
                      description: IETF RateLimit header, "refund_limit";r=0;t=N.
                      schema:
                        type: string
                    RateLimit-Policy:
                      description: IETF RateLimit-Policy header, "refund_limit";q=N (N is max_refunds).
                      schema:
                        type: string
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'
                '421':
                  $ref: '#/components/responses/Misdirected'
                '503':
                  $ref: '#/components/responses/StoreUnavailable'
          /v1/countdowns/{token}:
            parameters:
              - $ref: '#/components/parameters/CountdownToken'
            get:
              operationId: readCountdown
              summary: The time left of the cooldown that returned this token.
              description: >-
                Needs no API key: a thin client re-renders "Resend in 42s" after a
                reload. The token reveals nothing about the number; it counts as long as
                the number's cooldown, which lasts until the number's own limits
                (cooldown, max_sends) allow the next send. Once that ends, the send is
                refunded, a later send replaced the cooldown, or the deployment's token
                secret was rotated, it is 404; a malformed, forged or altered token is
                404 without Redis being asked.
              security: []
              responses:
                '200':
                  description: The cooldown still runs.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Countdown'
                '404':
                  $ref: '#/components/responses/NotFound'
                '421':
                  $ref: '#/components/responses/Misdirected'
                '503':
                  $ref: '#/components/responses/StoreUnavailable'
          /v1/countdowns/{token}/events:
            parameters:
              - $ref: '#/components/parameters/CountdownToken'
            get:
              operationId: streamCountdown
              summary: The same as server-sent events.
              description: |-
                "event: tick" with data {"retry_after": N, "retry_after_ms": M} at once
                and each time the whole-second value changes, a ": heartbeat" comment
                every 15 s, then "event: done" with data {"retry_after": 0,
                "retry_after_ms": 0} when the cooldown runs out, and the connection
                closes. A cooldown released (refunded, on any gate of the same Redis)
                ends its open streams within a second with "event: done" and data
                {"retry_after": 0, "retry_after_ms": 0, "reason": "released"}; so does
                one found gone from Redis when a gate's pub/sub subscription comes back
                after an outage. A tick or heartbeat is dropped while the client has
                more than 4 KiB of the stream unread (each tick carries the whole
                state), and a client that reads nothing for the connection timeout is
                disconnected.

                When the gate shuts down (SIGTERM or SIGINT), every open stream gets
                instead this last event, byte for byte, and the connection closes:

                    retry: 1000
                    event: shutdown
                    data: {}

                (followed by an empty line, as every event). The gate accepts no new
                connection by then: a client should reconnect after "retry"
                milliseconds, to the same URL (another gate behind the load balancer
                will answer it), and go on counting down from its first tick.
              security: []
              responses:
                '200':
                  description: The event stream.
                  content:
                    text/event-stream:
                      schema:
                        type: string
                '404':
                  $ref: '#/components/responses/NotFound'
                '421':
                  $ref: '#/components/responses/Misdirected'
                '503':
                  $ref: '#/components/responses/StoreUnavailable'
          /healthz:
            get:
              operationId: health
              summary: The process is up.
              security: []
              responses:
                '200':
                  description: Up.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Status'
                '421':
                  $ref: '#/components/responses/Misdirected'
          /readyz:
            get:
              operationId: readiness
              summary: Redis answers a PING within the timeout and every worker is connected.
              security: []
              responses:
                '200':
                  description: Ready.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Status'
                '421':
                  $ref: '#/components/responses/Misdirected'
                '503':
                  $ref: '#/components/responses/StoreUnavailable'
          /metrics:
            get:
              operationId: metrics
              summary: Prometheus text format.
              description: >-
                Decisions by outcome and reason, requests by status class, requests in
                flight, open and evicted connections, a request latency histogram, and
                Redis health, errors and reconnects.
              security: []
              responses:
                '200':
                  description: The metrics.
                  content:
                    text/plain; version=0.0.4:
                      schema:
                        type: string
                '421':
                  $ref: '#/components/responses/Misdirected'
          /:
            get:
              operationId: demoPage
              summary: The demo page.
              security: []
              responses:
                '200':
                  description: An HTML page.
                  content:
                    text/html:
                      schema:
                        type: string
                '421':
                  $ref: '#/components/responses/Misdirected'
          /openapi.yaml:
            get:
              operationId: openAPIDocument
              summary: This document.
              security: []
              responses:
                '200':
                  description: The OpenAPI document.
                  content:
                    application/yaml:
                      schema:
                        type: string
                '421':
                  $ref: '#/components/responses/Misdirected'
        components:
          securitySchemes:
            bearer:
              type: http
              scheme: bearer
              description: >-
                One of the server's API keys, as Authorization Bearer KEY. A key line
                in --api-keys-file may name its scopes (KEY send,read,release); a bare
                key has send and read.
          parameters:
            CountdownToken:
              name: token
              in: path
              required: true
              description: >-
                The countdown_token of a POST /v1/sends answer: 44 to 128 characters of
                base64url (A-Z a-z 0-9 - _), no padding. It is sealed with AES-256-GCM
                under the deployment's token secret (12-byte random nonce, which the
                cooldown's Redis key also holds, then the encrypted purpose and the
                number's key text, then a 16-byte tag), so it holds no readable number
                and cannot be forged or altered.
              schema:
                type: string
                pattern: '^[A-Za-z0-9_-]{44,128}$'
              example: yzYt0BYlh5CdsSM9XQyZ1ynq3SxOR1iGMHc0tnXJsDW4kiRkqD_9GE3jn1qnGxRR0PS5JQ
            Phone:
              name: phone
              in: path
              required: true
              description: >-
                The phone number, percent-encoded (%2B8613800138000), as one path segment
                (an unencoded / makes another path: 404); a national number uses the
                server's default region. Spelled as in a send's phone: text around the
                number is refused (invalid_phone).
              schema:
                type: string
              example: '%2B8613800138000'
            Purpose:
              name: purpose
              in: query
              required: false
              schema:
                $ref: '#/components/schemas/Purpose'
          schemas:
            Purpose:
              type: string
              pattern: '^[a-z0-9_-]{1,32}$'
              default: default
              example: login
            SendRequest:
              type: object
              required:
                - phone
              properties:
                phone:
                  type: string
                  description: >-
                    One number, in any spelling: digits of any script, one leading plus,
                    spaces and the separators - . / ( ) [ ] ~ (and their full-width forms),
                    after an optional tel:. A national number uses the default region. Text
                    around the number (a label, an extension, trailing punctuation, as in
                    "Tel.: +447911123456!!!") is refused with invalid_phone, as is text over
                    64 bytes. Every spelling of one number is one cooldown.
                  example: '+86 138 0013 8000'
                purpose:
                  $ref: '#/components/schemas/Purpose'
                client_ip:
                  type: string
                  description: The end user's IPv4 or IPv6 address (validated).
                  example: 203.0.113.7
            Decision:
              type: object
              required:
                - allowed
                - phone
                - purpose
                - retry_after
                - retry_after_ms
                - resend_at
                - server_time
                - next_retry_after
                - sends_left
              properties:
                allowed:
                  type: boolean
                reason:
                  type: string
                  description: >-
                    Why the send was denied (only when allowed is false): the limit
                    that ends last when several refuse.
                  enum:
                    - cooldown
                    - max_sends
                    - ip_limit
                phone:
                  type: string
                  description: The canonical E.164 number.
                  example: '+8613800138000'
                purpose:
                  $ref: '#/components/schemas/Purpose'
                retry_after:
                  type: integer
                  format: int64
                  description: >-
                    Whole seconds until a send may be allowed, rounded up: the longest of
                    every limit that binds the next send (cooldown, max_sends, and with
                    client_ip the IP's cap); when allowed, the wait this send started.
                  example: 60
                retry_after_ms:
                  type: integer
                  format: int64
                  description: The same in milliseconds, from Redis's PTTL and TIME.
                  example: 60000
                resend_at:
                  type: string
                  format: date-time
                  description: RFC 3339 UTC with milliseconds.
                  example: '2025-01-01T00:01:00.000Z'
                server_time:
                  type: string
                  format: date-time
                  description: >-
                    RFC 3339 UTC with milliseconds, for correcting the client's clock
                    skew: Redis's clock, except for a policy of one cooldown that counts
                    nothing, decided without a script, where it is the gate's clock (it
                    only stamps the answer; the cooldown's length is Redis's PTTL).
                  example: '2025-01-01T00:00:00.000Z'
                next_retry_after:
                  type: integer
                  format: int64
                  description: The cooldown, in seconds, that the next allowed send would start.
                  example: 120
                sends_left:
                  type: integer
                  nullable: true
                  description: Sends still allowed in the window; null when the policy sets no cap.
                  example: 4
                countdown_token:
                  type: string
                  description: >-
                    The unguessable handle of the cooldown this answer started (or, on
                    a cooldown or max_sends denial, the one running), for GET
                    /v1/countdowns/{token}. Sealed, not stored: it needs no Redis key
                    of its own (see the token parameter).
                  example: yzYt0BYlh5CdsSM9XQyZ1ynq3SxOR1iGMHc0tnXJsDW4kiRkqD_9GE3jn1qnGxRR0PS5JQ
            Countdown:
              type: object
              required:
                - active
                - retry_after
                - retry_after_ms
                - resend_at
                - server_time
              properties:
                active:
                  type: boolean
                retry_after:
                  type: integer
                  format: int64
                retry_after_ms:
                  type: integer
                  format: int64
                resend_at:
                  type: string
                  format: date-time
                server_time:
                  type: string
                  format: date-time
            CooldownStatus:
              type: object
              required:
                - phone
                - purpose
                - active
                - retry_after
                - retry_after_ms
                - resend_at
                - server_time
              properties:
                phone:
                  type: string
                  example: '+8613800138000'
                purpose:
                  $ref: '#/components/schemas/Purpose'
                active:
                  type: boolean
                retry_after:
                  type: integer
                  format: int64
                  description: Whole seconds left, rounded up; 0 when no cooldown runs.
                retry_after_ms:
                  type: integer
                  format: int64
                resend_at:
                  type: string
                  format: date-time
                  nullable: true
                  description: RFC 3339 UTC with milliseconds; null when no cooldown runs.
                server_time:
                  type: string
                  format: date-time
            Status:
              type: object
              required:
                - status
              properties:
                status:
                  type: string
                  enum:
                    - ok
                    - ready
            Error:
              type: object
              required:
                - error
              properties:
                error:
                  type: object
                  required:
                    - code
                    - message
                  properties:
                    code:
                      type: string
                      enum:
                        - invalid_json
                        - invalid_phone
                        - invalid_purpose
                        - missing_field
                        - invalid_field
                        - bad_request
                        - region_not_allowed
                        - number_type_not_allowed
                        - idempotency_key_reused
                        - refund_limit
                        - unauthorized
                        - forbidden
                        - not_found
                        - method_not_allowed
                        - body_too_large
                        - unsupported_media_type
                        - misdirected_request
                        - header_too_large
                        - store_unavailable
                    message:
                      type: string
                      description: For people; may change.
                    retry_after:
                      type: integer
                      format: int64
                      description: With refund_limit only - whole seconds until a refund is allowed again.
                    retry_after_ms:
                      type: integer
                      format: int64
                      description: The same in milliseconds.
          responses:
            NotFound:
              description: Unknown, expired, released or malformed token (not_found).
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Error'
            BadRequest:
              description: >-
                invalid_json, invalid_phone, invalid_purpose, missing_field or
                invalid_field; bad_request for ambiguous framing (Content-Length with
                Transfer-Encoding).
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Error'
            Misdirected:
              description: >-
                The server has no API keys and listens on loopback, and the Host header
                is not localhost, 127.0.0.1 or [::1] with an optional port
                (misdirected_request): DNS rebinding.
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Error'
            ForbiddenOrigin:
              description: >-
                The Origin header names a web page that is not in --allow-origins
                (forbidden); refused on every method but GET and HEAD.
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Error'
            Unauthorized:
              description: API keys are configured and the request has none or a wrong one (unauthorized).
              headers:
                WWW-Authenticate:
                  schema:
                    type: string
                  example: Bearer realm="resendgate"
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Error'
            Forbidden:
              description: The API key lacks the scope this route needs (forbidden).
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Error'
            StoreUnavailable:
              description: >-
                Redis is unreachable or did not answer within the timeout
                (store_unavailable); never an allowed send.
              content:
                application/json:
                  schema:
                    $ref: '#/components/schemas/Error'

        """#
}
