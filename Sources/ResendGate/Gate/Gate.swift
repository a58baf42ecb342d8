import Foundation
import GateEventLoop
import RedisClient

/// The resend gate for async Swift callers: may a verification code be sent to a number
/// now? Each call runs on the gate's own loop thread and Redis connection, where calls from
/// many tasks pipeline.
public final class Gate: Sendable {
    private let loop: EventLoop
    private nonisolated(unsafe) let worker: GateWorker
    public let configuration: GateConfiguration

    /// Starts the loop thread and connects to Redis; calls made meanwhile wait for it (at
    /// most the connect timeout). `logger` hears of the connection, never a phone number.
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

    /// Waits for the loop's thread to finish (unless this runs on it): a process that exits
    /// at once must not race its clean-up of OpenSSL's per-thread state, which OpenSSL's
    /// exit handler frees too (a double free, seen under AddressSanitizer).
    deinit {
        nonisolated(unsafe) let worker = self.worker
        loop.execute { worker.close() }
        loop.stop()
        if !loop.inLoop { loop.waitUntilStopped() }
    }

    /// Reserves a send to `phone` for a configured `purpose` if every rule of its policy
    /// allows: allowed starts the cooldown; denied says which limit and for how long, and
    /// consumes nothing. `clientIP` feeds the per-IP limits; `idempotencyKey` makes a retry
    /// get the first answer, scoped to `caller` so callers cannot replay each other's.
    /// `region` reads a nationally written `phone` (``requestRegion(_:)``).
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

    /// Ends the cooldown and refunds its send (the SMS provider failed), at most `maxRefunds`
    /// times per window; returns whether a cooldown was running. Throws `refund_limit` past
    /// the limit and `forbidden` when the policy allows none; then nothing changes.
    @discardableResult
    public func release(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name
    ) async throws(GateError) -> Bool {
        let (number, purpose) = try parse(phone, region, purpose)
        return try await onLoop { worker, done in worker.release(number, purpose: purpose, completion: done) }
    }

    /// Reports the outcome of a code the back end checked: `verified` clears the wrong
    /// checks (and, with the pumping guard, counts a conversion and trusts the number);
    /// `failed` counts one (`no_code_sent` when none was sent), and at `maxFailedChecks`
    /// locks the code (`code_locked`) or, scope `number`, the number (`locked`).
    public func verify(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name, outcome: VerificationOutcome
    ) async throws(GateError) -> VerificationResult {
        let (number, purpose) = try parse(phone, region, purpose)
        return try await onLoop { worker, done in worker.verify(number, purpose: purpose, outcome: outcome, completion: done) }
    }

    /// Checks a typed code against the number's live issued code (`Policy.codes`): valid
    /// once; a wrong one throws `wrong_code`, the last one locks as `verify` does;
    /// `code_expired`, `code_used` or `code_voided` when no live code is there.
    public func check(
        phone: String, region: String? = nil, purpose: String = Purpose.default.name, code: String
    ) async throws(GateError) -> CodeCheck {
        let (number, purpose) = try parse(phone, region, purpose)
        return try await onLoop { worker, done in worker.check(number, purpose: purpose, code: code, completion: done) }
    }

    /// The prefixes the SMS-pumping guard blocks now (at most `GateWorker.blockedPrefixCapacity`).
    public func blockedPrefixes() async throws(GateError) -> [PrefixFigures] {
        try await onLoop { worker, done in worker.blockedPrefixes(completion: done) }
    }

    /// The time left of the cooldown `token` names; nil once it ended or was released.
    public func countdown(_ token: CountdownToken) async throws(GateError) -> CountdownReading? {
        try await onLoop { worker, done in worker.countdown(token, completion: done) }
    }

    /// Canonicalises a number as this gate does; a national spelling is read in `region`,
    /// else in the default region.
    public func canonical(_ phone: String, region: String? = nil) throws(GateError) -> PhoneNumber {
        let chosen = try region.map { (code: String) throws(GateError) in try Self.requestRegion(code) }
        do {
            return try PhoneNumber(parsing: phone, defaultRegion: chosen ?? configuration.defaultRegion)
        } catch {
            throw .invalidPhone(error)
        }
    }

    /// A request's region (a country picker's), upper-cased; `invalid_field` unless two
    /// letters naming a region with numbers. It only reads a number without a country code:
    /// it never relaxes `allowedRegions`, which judge the number.
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
