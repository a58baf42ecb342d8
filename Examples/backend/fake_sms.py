"""A fake SMS provider for the sample back end: it prints each message instead of sending it.

A real provider (Twilio, Vonage, Alibaba Cloud SMS, ...) takes the number and the text and
either accepts them or fails. This one prints `SMS to +8613800138000: 123456 is your
sign-in code` on standard output (and appends it to `log_path`, when given), and fails for
the numbers in `failing`, so the guide can show what a back end does when a text is not
sent: it gives the send back to the gate (a refund).
"""

import sys


class SMSFailed(Exception):
    """The provider did not accept the message: nothing reached the phone."""


class FakeSMS:
    def __init__(self, failing=(), log_path=None):
        self.failing = set(failing)
        self.log_path = log_path

    def send(self, phone, text):
        if phone in self.failing:
            line = f"SMS to {phone} FAILED (the fake provider was told to fail for this number)"
            self._print(line)
            raise SMSFailed(f"the provider refused {phone}")
        self._print(f"SMS to {phone}: {text}")

    def _print(self, line):
        print(line, flush=True)
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(line + "\n")


if __name__ == "__main__":  # python3 fake_sms.py +8613800138000 "123456 is your code"
    FakeSMS().send(sys.argv[1], sys.argv[2])
