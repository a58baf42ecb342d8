#!/usr/bin/env python3
"""A sample back end for resendgate: what an app's server does between the app and the gate.

The gate decides whether a code may be sent now, makes the code (`--issue-codes`) and checks
it; it never sends an SMS and never talks to the app's users. This server holds the gate's
API keys, forwards the few routes an app needs (the same paths as the gate, so the Swift
kit's default routes work), texts each code through an SMS provider (here a fake one that
prints it), gives the send back to the gate when the provider fails, and turns the gate's
answers into answers for the app. Walked through in docs/guide.md.

usage: backend.py [--port 8000] [--gate http://127.0.0.1:8080] [--sms-log FILE] [--sms-fail +PHONE ...]
environment: GATE_API_KEY (a key with send, read, verify), GATE_RELEASE_KEY (one with release;
             default GATE_API_KEY); both unset for a gate without keys.

Python 3 standard library only: http.server and urllib. A sample, not a production server:
no sign-up, no rate limit of its own, sessions are random strings it does not keep.
"""

import argparse
import json
import os
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_sms import FakeSMS, SMSFailed  # noqa: E402

GATE = "http://127.0.0.1:8080"
API_KEY = os.environ.get("GATE_API_KEY")
RELEASE_KEY = os.environ.get("GATE_RELEASE_KEY") or API_KEY
SMS = FakeSMS()

# Headers of a gate's refusal that the app (and the kit) reads: the wait, and the IETF pair.
PASSED_HEADERS = ("Retry-After", "RateLimit-Policy", "RateLimit", "Idempotent-Replayed")

# What the user reads for each refusal of a typed code (POST /v1/checks).
CHECK_MESSAGES = {
    "wrong_code": "That code is not right.",
    "code_locked": "Too many wrong tries for this code. Ask for a new code.",
    "locked": "Too many wrong tries. Try again later.",
    "code_expired": "That code has expired. Ask for a new code.",
    "code_voided": "That code was never delivered. Ask for a new code.",
    "code_used": "That code was already used. Ask for a new code.",
}


class GateUnreachable(Exception):
    pass


def call_gate(method, path, body=None, key=None, headers=None, timeout=5):
    """One request to the gate: (status, headers, body bytes), whatever the status."""
    request = urllib.request.Request(GATE + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:  # 4xx and 5xx: the gate's answer all the same
        return error.code, error.headers, error.read()
    except (urllib.error.URLError, OSError) as error:
        raise GateUnreachable(str(error))


def error_body(code, message, **more):
    return {"error": {"code": code, "message": message, **more}}


class Handler(BaseHTTPRequestHandler):
    server_version = "sample-backend"

    # --- the routes ------------------------------------------------------------------------

    def do_POST(self):
        routes = {"/v1/sends": self.send_code, "/v1/checks": self.check_code}
        route = routes.get(urllib.parse.urlsplit(self.path).path)
        if route is None:
            return self.answer(404, error_body("not_found", "no such route"))
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            return self.answer(400, error_body("invalid_json", "the body is not a JSON object"))
        # Here a real back end checks who the user is (a session, a captcha for sign-up).
        try:
            route(body)
        except GateUnreachable as error:
            self.log_message("the gate is unreachable: %s", error)
            self.answer(503, error_body("store_unavailable", "the code service is unreachable; try again"))

    def do_GET(self):
        parts = urllib.parse.urlsplit(self.path)
        try:
            if parts.path.startswith("/v1/cooldowns/"):  # a peek: is a countdown running?
                status, headers, data = call_gate("GET", self.path, key=API_KEY)
                return self.answer(status, data, headers)
            if parts.path.startswith("/v1/countdowns/"):  # the countdown token needs no key
                return self.stream(parts.path) if parts.path.endswith("/events") else self.answer(
                    *self.forward_countdown(parts.path))
        except GateUnreachable:
            return self.answer(503, error_body("store_unavailable", "the code service is unreachable; try again"))
        self.answer(404, error_body("not_found", "no such route"))

    def send_code(self, body):
        """POST /v1/sends: ask the gate, text the code only for a fresh allowed send."""
        phone, purpose = body.get("phone"), body.get("purpose") or "default"
        # The user's address, from the connection (behind a proxy: the proxy's header, never the app's).
        request = {"phone": phone, "purpose": purpose, "client_ip": self.client_address[0]}
        if body.get("region"):
            request["region"] = body["region"]
        extra = {}
        if self.headers.get("Idempotency-Key"):  # the app's retry of one tap: the same answer again
            extra["Idempotency-Key"] = self.headers["Idempotency-Key"]
        status, headers, data = call_gate("POST", "/v1/sends", request, key=API_KEY, headers=extra)
        if status != 200:
            # 429 (cooldown, max_sends, ip_limit, locked, budgets, suspected_pumping): the
            # decision and its Retry-After as they are, so the app shows "Resend in 42s";
            # 400/403/415 refusals and 503 store_unavailable as they are too.
            return self.answer(status, data, headers)
        decision = json.loads(data)
        code = decision.pop("code", None)  # the app never sees the code
        if headers.get("Idempotent-Replayed") == "true" or decision.get("test_number"):
            # A replay answers a send already texted; a test number gets no real SMS.
            return self.answer(200, decision, headers)
        if decision.get("store") == "unavailable":
            # Allowed unrecorded (a gate with --on-store-failure open while Redis is down): no
            # code exists that a check could accept, so nothing is texted.
            return self.answer(503, error_body("store_unavailable", "codes cannot be sent now; try again"))
        if code is None:  # a purpose whose codes the gate does not make: a set-up error
            self.log_message("the gate sent no code: start it with --issue-codes for %s", decision["purpose"])
            return self.answer(500, error_body("internal", "codes cannot be sent now"))
        try:
            SMS.send(decision["phone"], f"{code} is your sign-in code. It expires in "
                                        f"{decision['code_expires_in_ms'] // 60000} minutes.")
        except SMSFailed as failure:
            return self.refund(decision, failure)
        self.answer(200, decision, headers)

    def refund(self, decision, failure):
        """The provider failed: give the send back, so the user may ask again at once."""
        self.log_message("SMS failed (%s): refunding the send", failure)
        phone = urllib.parse.quote(decision["phone"], safe="")
        purpose = urllib.parse.quote(decision["purpose"], safe="")
        status, headers, data = call_gate("DELETE", f"/v1/cooldowns/{phone}?purpose={purpose}", key=RELEASE_KEY)
        if status == 204:  # refunded: the cooldown ended and the code is void
            return self.answer(502, error_body("sms_failed", "The text could not be sent. Try again.",
                                               retry_after=0, retry_after_ms=0))
        # 429 refund_limit (this number had its refunds) or locked: the cooldown this send
        # started keeps running, so the user waits for it as after a send.
        self.log_message("the refund was refused (%s): the cooldown keeps running", status)
        wait = decision["retry_after"]
        self.answer(502, error_body("sms_failed", "The text could not be sent. Try again later.",
                                    retry_after=wait, retry_after_ms=decision["retry_after_ms"]),
                    {"Retry-After": str(wait)})

    def check_code(self, body):
        """POST /v1/checks: the gate compares the typed code; the back end signs the user in."""
        request = {"phone": body.get("phone"), "purpose": body.get("purpose") or "default", "code": body.get("code")}
        if body.get("region"):
            request["region"] = body["region"]
        status, headers, data = call_gate("POST", "/v1/checks", request, key=API_KEY)
        answer = json.loads(data or b"{}")
        if status == 200 and answer.get("valid"):
            # Right, and valid only this once: here a real back end starts the user's session.
            answer["session"] = secrets.token_urlsafe(24)
            return self.answer(200, answer)
        error = answer.get("error", {})
        message = CHECK_MESSAGES.get(error.get("code"))
        if message is None:  # 400/401/403 and 503 store_unavailable: as the gate said them
            return self.answer(status, data, headers)
        if error.get("attempts_left") is not None:
            message += f" {error['attempts_left']} more {'try' if error['attempts_left'] == 1 else 'tries'}."
        self.answer(status, {"error": {**error, "message": message}}, headers)

    def forward_countdown(self, path):
        status, headers, data = call_gate("GET", path)
        return status, data, headers

    def stream(self, path):
        """GET /v1/countdowns/{token}/events: the event stream, byte for byte as it comes."""
        request = urllib.request.Request(GATE + path, headers={"Accept": "text/event-stream"})
        try:
            upstream = urllib.request.urlopen(request, timeout=60)  # longer than the 15 s heartbeat
        except urllib.error.HTTPError as error:  # 404: the countdown is over
            return self.answer(error.code, error.read(), error.headers)
        except (urllib.error.URLError, OSError) as error:
            raise GateUnreachable(str(error))
        with upstream:
            self.send_response(upstream.status)
            self.send_header("Content-Type", upstream.headers.get("Content-Type", "text/event-stream"))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Accel-Buffering", "no")  # tells a proxy in front not to buffer
            self.end_headers()  # no Content-Length: the body ends when the stream does
            self.close_connection = True
            try:
                while chunk := upstream.read1(4096):
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                pass  # the app went away, or the gate stopped: the app's client reconnects

    # --- plumbing ------------------------------------------------------------------------

    def answer(self, status, body, headers=None):
        data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name in PASSED_HEADERS:
            if headers is not None and headers.get(name) is not None:
                self.send_header(name, headers[name])
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):  # request lines on stderr; never a code or a body
        sys.stderr.write("backend: " + (format % args) + "\n")


def main():
    global GATE, SMS
    parser = argparse.ArgumentParser(description="A sample back end in front of resendgate.")
    parser.add_argument("--port", type=int, default=8000, help="where the app reaches it (0: a free port)")
    parser.add_argument("--gate", default=os.environ.get("GATE_URL", GATE), help="the gate's URL")
    parser.add_argument("--sms-log", help="also append each fake SMS to this file")
    parser.add_argument("--sms-fail", action="append", default=[], metavar="+PHONE",
                        help="the fake provider fails for this number (E.164; repeatable)")
    args = parser.parse_args()
    GATE = args.gate.rstrip("/")
    SMS = FakeSMS(failing=args.sms_fail, log_path=args.sms_log)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"backend: listening on http://127.0.0.1:{server.server_port} (gate {GATE})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
