import Foundation
import GateEventLoop
import RedisClient

/// The resend gate for async Swift callers: decides whether a verification code may
/// be sent to a number now, with Redis as the only state.
///
/// Each call is one atomic script call on the gate's own event loop thread and
/// Redis connection; calls from many tasks pipeline on that connection.
public final class Gate: Sendable {
    private let loop: EventLoop
    private nonisolated(unsafe) let worker: GateWorker
    public let configuration: GateConfiguration

    /// Starts the gate's loop thread and begins connecting to Redis; calls made
    /// before the connection is up wait for it (at most the connect timeout). `logger`
    /// hears of reconnects, master switches, slot re-maps and script reloads, on the
    /// gate's loop thread; it is never given a phone number.
    public init(configuration: GateConfiguration, logger: GateLogger = .off) {
        self.configuration = configuration
        loop = EventLoop.startThread(name: "resendgate-redis")
        let made = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var worker: GateWorker?
        loop.execute { [loop] in
            worker = GateWorker(loop: loop, configuration: configuration, logger: logger)
            made.signal()
        }
        made.wait()
        self.worker = worker!
    }

    /// Closes the worker and waits for the loop's thread to finish (unless this runs on it):
    /// a process that exits right after releasing its gate must not race that thread's
    /// clean-up (`EventLoop.run` frees OpenSSL's per-thread state, which OpenSSL's own
    /// clean-up at exit frees too: a double free, seen under AddressSanitizer).
    deinit {
        nonisolated(unsafe) let worker = self.worker
        loop.execute { worker.close() }
        loop.stop()
        if !loop.inLoop { loop.waitUntilStopped() }
    }

    /// Reserves a send to `phone` for `purpose` (one of the configured purposes, else
    /// `invalid_purpose`) if every rule of its policy allows:
    /// allowed starts the cooldown, denied says which limit and how long is left.
    /// A denial never consumes anything. `clientIP` feeds the per-IP limit;
    /// `idempotencyKey` makes a retry return the first answer without consuming; keys are
    /// scoped to `caller` (``SendRequest/caller``), so callers cannot replay each other's.
    ///
    /// `region` reads a nationally written `phone` in that region instead of the default
    /// one (a country picker); see ``requestRegion(_:)``.
    public func reserve(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name, clientIP: String? = nil,
        idempotencyKey: String? = nil, caller: String = ""
    ) async throws(GateError) -> Decision {
        let (number, purpose) = try parse(phone, region, purpose)
        let request = try SendRequest(
            phone: number, purpose: purpose, caller: caller, clientIP: clientIP, idempotencyKey: idempotencyKey)
        return try await onLoop { worker, done in worker.reserve(request, completion: done) }
    }

    /// Reads the cooldown of `phone` for `purpose`; never consumes.
    public func peek(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name
    ) async throws(GateError) -> CooldownStatus {
        let (number, purpose) = try parse(phone, region, purpose)
        return try await onLoop { worker, done in worker.peek(number, purpose: purpose, completion: done) }
    }

    /// Ends the cooldown and refunds its send (the SMS provider failed), so a code may be
    /// sent again at once; at most the policy's `maxRefunds` times per window. Returns
    /// whether a cooldown was running (none: nothing is consumed). Throws `refund_limit`
    /// past the limit and `forbidden` when the policy allows no refunds; then nothing changes.
    @discardableResult
    public func release(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name
    ) async throws(GateError) -> Bool {
        let (number, purpose) = try parse(phone, region, purpose)
        return try await onLoop { worker, done in worker.release(number, purpose: purpose, completion: done) }
    }

    /// Reports the outcome of a code the back end checked for `phone`: `verified` clears its
    /// wrong checks, `failed` counts one against the number's last code (the result says how
    /// many are left; no code sent: `no_code_sent`) and at the policy's `maxFailedChecks`
    /// locks the code (`code_locked`) or, with `lockoutScope` `number`, the number
    /// (`locked`). With
    /// the pumping guard on, `verified` also counts toward the conversion of the number's
    /// destination prefix and marks the number trusted for `trustedFor`.
    public func verify(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name, outcome: VerificationOutcome
    ) async throws(GateError) -> VerificationResult {
        let (number, purpose) = try parse(phone, region, purpose)
        return try await onLoop { worker, done in worker.verify(number, purpose: purpose, outcome: outcome, completion: done) }
    }

    /// Checks a code the user typed against the number's live issued code (a purpose with
    /// `Policy.codes`): the right one is valid once; a wrong one throws `wrong_code` with
    /// the checks left, and the last one locks the code (`code_locked`) or, scope `number`,
    /// the number (`locked`); `code_expired`, `code_used`, `code_voided` when no live code
    /// is there to check. Counted by the lockout and the pumping guard, no report needed.
    public func check(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name, code: String
    ) async throws(GateError) -> CodeCheck {
        let (number, purpose) = try parse(phone, region, purpose)
        return try await onLoop { worker, done in worker.check(number, purpose: purpose, code: code, completion: done) }
    }

    /// The destination prefixes the SMS-pumping guard blocks now, with their figures
    /// (at most `GateWorker.blockedPrefixCapacity`).
    public func blockedPrefixes() async throws(GateError) -> [PrefixFigures] {
        try await onLoop { worker, done in worker.blockedPrefixes(completion: done) }
    }

    /// The remaining time of the cooldown that returned `token`; nil when the token is
    /// unknown, expired or released. Reveals nothing about the number.
    public func countdown(_ token: CountdownToken) async throws(GateError) -> CountdownReading? {
        try await onLoop { worker, done in worker.countdown(token, completion: done) }
    }

    /// Canonicalises a number as this gate does (for keys, logs and display); a national
    /// spelling is read in `region` when given, else in the default region.
    public func canonical(_ phone: String, region: String? = nil) throws(GateError) -> PhoneNumber {
        let chosen = try region.map { (code: String) throws(GateError) in try Self.requestRegion(code) }
        do {
            return try PhoneNumber(parsing: phone, defaultRegion: chosen ?? configuration.defaultRegion)
        } catch {
            throw .invalidPhone(error)
        }
    }

    /// A request's region (the country a user picked beside a nationally written number),
    /// as its upper-case ISO 3166 alpha-2 code; `invalid_field` unless it is two letters
    /// naming a region libphonenumber has numbers for. Only changes how a number without a
    /// country code is read: it never relaxes `allowedRegions`, which judge the number.
    public static func requestRegion(_ code: String) throws(GateError) -> String {
        let upper = String(decoding: code.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
        guard upper.utf8.count == 2, upper.utf8.allSatisfy({ (0x41...0x5A).contains($0) }), PhoneNumber.isKnownRegion(upper) else {
            throw .invalidField("region must be the ISO 3166 alpha-2 code of a region with phone numbers, such as GB")
        }
        return upper
    }

    private func parse(_ phone: String, _ region: String?, _ purpose: String) throws(GateError) -> (PhoneNumber, Purpose) {
        (try canonical(phone, region: region), try configuration.policies.purpose(named: purpose))
    }

    private func onLoop<T: Sendable>(
        _ body: @escaping @Sendable (GateWorker, @escaping (Result<T, GateError>) -> Void) -> Void
    ) async throws(GateError) -> T {
        nonisolated(unsafe) let worker = self.worker
        let result: Result<T, GateError> = await withUnsafeContinuation { continuation in
            loop.execute {
                body(worker) { continuation.resume(returning: $0) }
            }
        }
        return try result.get()
    }
}
