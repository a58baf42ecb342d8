#!/usr/bin/env python3
"""The demo page in a real browser: headless Chromium driven over the DevTools protocol.

Starts its own redis-server and `resendgate serve` on free loopback ports, then:
loads the page, types a number, presses Send, sees a disabled "Resend in 5Xs" that
counts down from the server's ticks, reloads and still sees it, switches to Chinese,
checks the plain-words errors, and that a page of another origin (a no-cors Blob, a form
type) or on a DNS-rebound name (Chromium maps rebind.test to 127.0.0.1) reserves
nothing. Saves PNG screenshots. Standard library only (the
websocket client is the few lines below). Exit 0 passed, 1 failed, 77 skipped.
"""
import argparse, base64, json, os, re, shutil, signal, socket, struct, subprocess, sys, tempfile, time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from free_port import free_port  # deploy/free_port.py


def wait_for(what, check, timeout=10.0, interval=0.1):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


class WebSocket:
    """A minimal RFC 6455 client: text frames, masked as a client must."""

    def __init__(self, url):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"websocket upgrade refused: {head!r}")
        self.buffer = b""

    def send(self, text):
        data = text.encode()
        header = bytearray([0x81])
        if len(data) < 126:
            header.append(0x80 | len(data))
        elif len(data) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(data))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(data))
        mask = os.urandom(4)
        self.sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("websocket closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def receive(self):
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode in (0x1, 0x0, 0x2):
                message += payload
                if first & 0x80:
                    return message.decode()
            elif opcode == 0x8:
                raise RuntimeError("websocket closed by the browser")


class Page:
    """One tab, spoken to over the DevTools protocol."""

    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def eval(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page error in {expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def state(self):
        return self.eval("""({button: document.getElementById('send').textContent,
                              disabled: document.getElementById('send').disabled,
                              status: document.getElementById('status').textContent,
                              statusClass: document.getElementById('status').className,
                              lang: document.documentElement.lang,
                              label: document.querySelector('label[for=phone]').textContent})""")

    def load(self, url):
        self.call("Page.navigate", url=url)
        wait_for("the page to load", lambda: self.eval("document.readyState") == "complete")

    def type_and_send(self, number):
        self.eval("var f = document.getElementById('phone'); f.value = ''; f.focus(); true")
        self.call("Input.insertText", text=number)
        self.eval("document.getElementById('send').click(); true")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        print(f"    screenshot: {path}")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True, help="the built resendgate executable")
    parser.add_argument("--out", default=None, help="folder for screenshots (default: a temp folder)")
    args = parser.parse_args()

    chromium = find_chromium()
    if chromium is None:
        print("SKIPPED: browser test NOT RUN — no chromium on PATH (apt-get install -y chromium failed or was not run)")
        return 77
    out = args.out or tempfile.mkdtemp(prefix="resendgate-browser-")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="resendgate-browser-work-")
    processes = []

    def start(command, **kwargs):
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
        processes.append(process)
        return process

    def read_until(process, pattern, timeout=20):
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            m = re.search(pattern, line)
            if m:
                return m
        raise AssertionError(f"no line matching {pattern!r}:\n{''.join(seen)}")

    try:
        redis_port = free_port()
        start(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", work])
        wait_for("redis", lambda: _accepting(redis_port))
        server = start([args.binary, "serve", "--port", "0", "--workers", "2", "--redis", f"redis://127.0.0.1:{redis_port}/0",
                        "--cooldown", "60s", "--log-level", "warning"], env={k: v for k, v in os.environ.items()
                                                                             if not k.startswith("RESENDGATE_")})
        port = int(read_until(server, r"listening on http://127\.0\.0\.1:(\d+)").group(1))
        base = f"http://127.0.0.1:{port}/"

        devtools = free_port()
        browser = start([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                         "--no-default-browser-check", f"--remote-debugging-port={devtools}",
                         f"--user-data-dir={work}/profile", "--window-size=720,560", "--lang=en-US",
                         # DNS rebinding, simulated: this name resolves to the gate's loopback address.
                         "--host-resolver-rules=MAP rebind.test 127.0.0.1",
                         "--accept-lang=en-US", "about:blank"])
        targets = wait_for("the DevTools endpoint", lambda: _json(f"http://127.0.0.1:{devtools}/json/list"), timeout=30)
        page_target = next(t for t in targets if t.get("type") == "page")
        page = Page(page_target["webSocketDebuggerUrl"])
        page.call("Page.enable")
        page.call("Runtime.enable")

        print("==> the page loads with a labelled field and a Send button")
        page.load(base)
        s = page.state()
        assert s["label"] == "Phone number" and s["button"] == "Send code" and not s["disabled"], s
        assert page.eval("document.getElementById('status').getAttribute('aria-live')") == "polite"
        assert page.eval("[...document.querySelectorAll('script[src],link[href],img[src]')].length") == 0, "external assets"

        print("==> a number that is not one gets plain words")
        page.type_and_send("12345")
        s = wait_for("the invalid-phone message", lambda: (lambda s: s if "not a phone number" in s["status"] else None)(page.state()))
        assert s["statusClass"] == "error" and not s["disabled"], s
        page.screenshot(f"{out}/1-invalid-phone.png")

        print("==> sending disables the button: Resend in 5Xs, counting down from the server's ticks")
        page.type_and_send("+86 138 0013 8000")
        s = wait_for("Resend in 5Xs", lambda: (lambda s: s if re.fullmatch(r"Resend in 5\ds|Resend in 60s", s["button"]) and s["disabled"] else None)(page.state()))
        first = int(re.search(r"\d+", s["button"]).group())
        assert "Code sent" in s["status"], s
        announcement = s["status"]
        page.screenshot(f"{out}/2-counting.png")
        s = wait_for("the countdown to move", lambda: (lambda s: s if int(re.search(r"\d+", s["button"]).group()) <= first - 2 else None)(page.state()), timeout=5)
        assert s["disabled"] and s["status"] == announcement, f"the live region must not change with every tick: {s}"
        assert page.eval("localStorage.getItem('resendgate.countdown') !== null")

        print("==> after a reload the countdown is still there")
        page.call("Page.reload", ignoreCache=True)
        time.sleep(0.3)
        wait_for("the reloaded page", lambda: page.eval("document.readyState") == "complete")
        s = wait_for("Resend in 5Xs after reload", lambda: (lambda s: s if re.fullmatch(r"Resend in 5\ds", s["button"]) and s["disabled"] else None)(page.state()))
        assert "can ask for another one in" in s["status"], s
        page.screenshot(f"{out}/3-after-reload.png")

        print("==> Chinese: 5X秒后重新发送")
        page.eval("document.querySelector('[data-lang=zh]').click(); true")
        s = wait_for("the Chinese countdown", lambda: (lambda s: s if re.fullmatch(r"5\d秒后重新发送", s["button"]) else None)(page.state()))
        assert s["lang"] == "zh-CN" and s["label"] == "手机号码" and s["disabled"], s
        page.screenshot(f"{out}/4-chinese.png")

        print("==> a second send for the same number in another tab is refused with the reason, and counts down too")
        page.eval("localStorage.clear(); true")
        page.load(base)
        page.type_and_send("+86-138-0013-8000")
        s = wait_for("the 429 message", lambda: (lambda s: s if "sent to this number a moment ago. Try again in" in s["status"] else None)(page.state()))
        assert re.fullmatch(r"Resend in 5\ds", s["button"]) and s["disabled"] and s["statusClass"] == "error", s
        page.screenshot(f"{out}/5-denied.png")

        print("==> a page of another origin cannot send, not even with no-cors and a Blob (403, nothing reserved)")
        other_port = free_port()
        start([sys.executable, "-m", "http.server", str(other_port), "--bind", "127.0.0.1", "--directory", work])
        wait_for("the other origin's server", lambda: _accepting(other_port))
        page.load(f"http://127.0.0.1:{other_port}/")
        for number, init in [("+8613800138055", "{method: 'POST', mode: 'no-cors', body: new Blob([body])}"),
                             ("+8613800138056", "{method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: body}"),
                             ("+8613800138057", "{method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: body}")]:
            kind = page.eval(f"""(function () {{ var body = JSON.stringify({{phone: '{number}'}});
                                   return fetch('{base}v1/sends', {init}).then(function (r) {{ return r.type; }}); }})()""")
            assert kind == "opaque", kind
            peek = _json(f"{base}v1/cooldowns/{number.replace('+', '%2B')}")
            assert peek and peek["active"] is False, f"a cross-origin send was reserved: {number} {peek}"
        # The same from the gate's own page is allowed: the refusal above is the Origin's.
        page.load(base)
        status = page.eval(f"""fetch('/v1/sends', {{method: 'POST', headers: {{'Content-Type': 'application/json'}},
                                 body: JSON.stringify({{phone: '+8613800138058'}})}}).then(function (r) {{ return r.status; }})""")
        assert status == 200, status

        print("==> DNS rebinding: a page on a name pointed at 127.0.0.1 gets 421, and cannot send")
        page.load(f"http://rebind.test:{port}/")
        text = page.eval("document.body.innerText")
        assert "misdirected_request" in text, text
        status = page.eval("""fetch('/v1/sends', {method: 'POST', headers: {'Content-Type': 'application/json'},
                              body: JSON.stringify({phone: '+8613800138059'})}).then(function (r) { return r.status; })""")
        assert status == 421, status
        peek = _json(f"{base}v1/cooldowns/%2B8613800138059")
        assert peek and peek["active"] is False, peek
        page.screenshot(f"{out}/6-rebinding.png")
        page.load(base)  # back on the gate's origin, whose storage the next step clears

        print("==> with Redis gone, a send says the service cannot send codes right now (503)")
        processes[0].terminate()
        processes[0].wait(timeout=5)
        page.eval("localStorage.clear(); true")
        page.load(base)
        page.type_and_send("+8613800138001")
        s = wait_for("the 503 message", lambda: (lambda s: s if "cannot send codes right now" in s["status"] else None)(page.state()))
        assert not s["disabled"] and s["button"] == "Send code", s
        page.screenshot(f"{out}/7-unavailable.png")

        print("PASSED: browser test of the demo page")
        return 0
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(work, ignore_errors=True)


def _accepting(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _json(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return json.loads(response.read())
    except OSError:
        return None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as error:
        print(f"FAILED: {error}")
        sys.exit(1)
