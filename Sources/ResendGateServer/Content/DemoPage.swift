/// The page at `GET /`: a phone field and a Send button that turns into "Resend in 42s".
///
/// A thin client of the API, with no build step and no external assets (it works
/// offline): after a send it keeps the `countdown_token` in localStorage, asks
/// `GET /v1/countdowns/{token}` on reload and renders the server's SSE ticks, never a
/// timer of its own. English and Chinese (from `navigator.language`, or the toggle).
/// It needs a server without API keys (which listens on loopback only).
enum DemoPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>resendgate</title>
        <style>
          :root { color-scheme: light dark; --accent: #2f6fdf; }
          body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", sans-serif;
                 max-width: 28rem; margin: 3rem auto; padding: 0 1rem; }
          h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
          p.lead { margin: 0 0 1.5rem; opacity: .75; }
          label { display: block; font-weight: 600; margin-bottom: .35rem; }
          .row { display: flex; gap: .5rem; }
          input { flex: 1; min-width: 0; font: inherit; padding: .55rem .7rem; border: 1px solid #8a8f98; border-radius: .4rem; }
          button { font: inherit; padding: .55rem 1rem; border-radius: .4rem; border: 1px solid var(--accent);
                   background: var(--accent); color: #fff; cursor: pointer; white-space: nowrap; min-width: 9.5rem; }
          button:disabled { background: transparent; color: inherit; border-color: #8a8f98; cursor: not-allowed; opacity: .8; }
          input:focus-visible, button:focus-visible { outline: 3px solid #f0b429; outline-offset: 2px; }
          #status { min-height: 1.5rem; margin-top: 1rem; }
          #status.error { color: #c62828; }
          .lang { margin-top: 2rem; font-size: .9rem; }
          .lang button { min-width: 0; padding: .2rem .6rem; background: transparent; color: inherit; border-color: #8a8f98; }
          .lang button[aria-pressed="true"] { border-color: var(--accent); font-weight: 600; }
        </style>
        </head>
        <body>
        <main>
          <h1 data-text="title">Verification code</h1>
          <p class="lead" data-text="lead">We send a code by SMS. You can ask for another one when the countdown ends.</p>
          <form id="form" novalidate>
            <label for="phone" data-text="phoneLabel">Phone number</label>
            <div class="row">
              <input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel" placeholder="+86 138 0013 8000" required>
              <button id="send" type="submit" data-text="send">Send code</button>
            </div>
          </form>
          <p id="status" role="status" aria-live="polite"></p>
          <div class="lang" role="group" aria-label="Language / 语言">
            <button type="button" data-lang="en" aria-pressed="false">English</button>
            <button type="button" data-lang="zh" aria-pressed="false">中文</button>
          </div>
        </main>
        <script>
        "use strict";
        (function () {
          var TEXT = {
            en: {
              title: "Verification code",
              lead: "We send a code by SMS. You can ask for another one when the countdown ends.",
              phoneLabel: "Phone number", send: "Send code", resendNow: "Resend code", sending: "Sending…",
              resendIn: function (s) { return "Resend in " + s + "s"; },
              sent: function (s) { return "Code sent. You can ask for another one in " + s + " seconds."; },
              waiting: function (s) { return "A code was sent recently. You can ask for another one in " + s + " seconds."; },
              ready: "You can ask for a new code now.",
              invalidPhone: "That is not a phone number we can send to. Check it, and include the country code, for example +86 138 0013 8000.",
              badRequest: "The request was not accepted: ",
              limited: function (reason, s) {
                return (reason === "cooldown" ? "A code was sent to this number a moment ago" : "Too many codes for this number (" + reason + ")") +
                  ". Try again in " + s + " seconds.";
              },
              unavailable: "The service cannot send codes right now. Please try again in a moment.",
              unauthorized: "This server needs an API key, so this page cannot send codes. Run the server without API keys to use it.",
              otherAddress: "This server does not accept codes from a page at this address. Open the page at the server's own address, or add this one to --allow-origins.",
              offline: "The server cannot be reached. Check your connection and try again.",
              unexpected: "Something went wrong (HTTP "
            },
            zh: {
              title: "验证码",
              lead: "我们会通过短信发送验证码。倒计时结束后可以重新获取。",
              phoneLabel: "手机号码", send: "发送验证码", resendNow: "重新发送", sending: "正在发送…",
              resendIn: function (s) { return s + "秒后重新发送"; },
              sent: function (s) { return "验证码已发送。" + s + "秒后可以重新获取。"; },
              waiting: function (s) { return "验证码刚刚发送过。" + s + "秒后可以重新获取。"; },
              ready: "现在可以重新获取验证码。",
              invalidPhone: "这个号码无法接收短信。请检查号码，并加上国家代码，例如 +86 138 0013 8000。",
              badRequest: "请求未被接受：",
              limited: function (reason, s) {
                return (reason === "cooldown" ? "刚刚已向这个号码发送过验证码" : "这个号码的验证码请求过于频繁（" + reason + "）") + "。请在" + s + "秒后再试。";
              },
              unavailable: "服务暂时无法发送验证码，请稍后再试。",
              unauthorized: "此服务器需要 API 密钥，本页面无法发送验证码。请在不设 API 密钥的情况下运行服务器。",
              otherAddress: "此服务器不接受来自这个地址的页面的请求。请用服务器自己的地址打开本页面，或把这个地址加入 --allow-origins。",
              offline: "无法连接服务器。请检查网络后重试。",
              unexpected: "出现问题（HTTP "
            }
          };
          var STORE = "resendgate.countdown", LANG = "resendgate.lang";
          var form = document.getElementById("form"), phone = document.getElementById("phone");
          var button = document.getElementById("send"), status = document.getElementById("status");
          var lang = storedLang() || ((navigator.language || "en").toLowerCase().indexOf("zh") === 0 ? "zh" : "en");
          var seconds = 0, stream = null, busy = false, lastStatus = null;

          function storedLang() { try { return localStorage.getItem(LANG); } catch (e) { return null; } }
          function t() { return TEXT[lang]; }
          function load() { try { return JSON.parse(localStorage.getItem(STORE) || "null"); } catch (e) { return null; } }
          function save(token) { try { localStorage.setItem(STORE, JSON.stringify({ token: token })); } catch (e) {} }
          function forget() { try { localStorage.removeItem(STORE); } catch (e) {} }

          // The live region speaks only on changes of state, never on every tick.
          function say(message, isError) {
            lastStatus = message;
            status.className = isError ? "error" : "";
            status.textContent = typeof message === "function" ? message(t()) : message;
          }

          function render() {
            document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
            document.querySelectorAll("[data-text]").forEach(function (node) {
              if (node !== button) node.textContent = t()[node.getAttribute("data-text")];
            });
            document.querySelectorAll("[data-lang]").forEach(function (node) {
              node.setAttribute("aria-pressed", String(node.getAttribute("data-lang") === lang));
            });
            if (seconds > 0) { button.disabled = true; button.textContent = t().resendIn(seconds); }
            else { button.disabled = busy; button.textContent = busy ? t().sending : (load() === null && !button.dataset.sent ? t().send : t().resendNow); }
            if (typeof lastStatus === "function") say(lastStatus, status.className === "error");
          }

          // Every displayed value comes from the server: the reply, the token's JSON, SSE ticks.
          function show(value) { seconds = value; render(); }

          function finish() {
            if (stream) { stream.close(); stream = null; }
            forget();
            var wasCounting = seconds > 0;
            seconds = 0; button.dataset.sent = "1"; render();
            if (wasCounting) say(function (x) { return x.ready; });
          }

          function follow(token) {
            if (stream) stream.close();
            stream = new EventSource("/v1/countdowns/" + encodeURIComponent(token) + "/events");
            stream.addEventListener("tick", function (event) { show(JSON.parse(event.data).retry_after); });
            stream.addEventListener("done", finish);
            stream.onerror = function () {
              // Closed for good (the token is gone: 404): ask once more, then give up.
              if (stream && stream.readyState === EventSource.CLOSED) { stream = null; setTimeout(function () { resume(token, false); }, 1000); }
            };
          }

          // After a reload: where does the countdown stand? Then follow its ticks.
          function resume(token, announce) {
            fetch("/v1/countdowns/" + encodeURIComponent(token), { cache: "no-store" }).then(function (response) {
              if (response.status === 404) { finish(); return; }
              if (!response.ok) { setTimeout(function () { resume(token, announce); }, 3000); return; }
              return response.json().then(function (body) {
                show(body.retry_after);
                if (announce) say(function (x) { return x.waiting(body.retry_after); });
                follow(token);
              });
            }).catch(function () { setTimeout(function () { resume(token, announce); }, 3000); });
          }

          form.addEventListener("submit", function (event) {
            event.preventDefault();
            if (seconds > 0 || busy) return;
            var number = phone.value.trim();
            if (!number) { say(function (x) { return x.invalidPhone; }, true); phone.focus(); return; }
            busy = true; render();
            fetch("/v1/sends", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phone: number }) })
              .then(function (response) {
                return response.json().catch(function () { return {}; }).then(function (body) { answer(response.status, body); });
              })
              .catch(function () { say(function (x) { return x.offline; }, true); })
              .then(function () { busy = false; render(); });
          });

          function answer(code, body) {
            var wait = body.retry_after;
            if ((code === 200 || code === 429) && body.countdown_token) { save(body.countdown_token); follow(body.countdown_token); }
            if (code === 200) { show(wait); say(function (x) { return x.sent(wait); }); return; }
            if (code === 429) { show(wait); say(function (x) { return x.limited(body.reason, wait); }, true); return; }
            var error = body.error || {};
            if (code === 400 && error.code === "invalid_phone") say(function (x) { return x.invalidPhone; }, true);
            else if (code === 400) say(function (x) { return x.badRequest + (error.message || error.code || ""); }, true);
            else if (code === 401) say(function (x) { return x.unauthorized; }, true);
            else if ((code === 403 && error.code === "forbidden") || code === 421) say(function (x) { return x.otherAddress; }, true);
            else if (code === 503) say(function (x) { return x.unavailable; }, true);
            else say(function (x) { return x.unexpected + code + ")" + (error.message ? ": " + error.message : ""); }, true);
            if (code === 400) phone.focus();
          }

          document.querySelectorAll("[data-lang]").forEach(function (node) {
            node.addEventListener("click", function () {
              lang = node.getAttribute("data-lang");
              try { localStorage.setItem(LANG, lang); } catch (e) {}
              render();
            });
          });

          render();
          var saved = load();
          if (saved && saved.token) resume(saved.token, true);
        })();
        </script>
        </body>
        </html>
        """#
}
