import Countdown
import Foundation

/// When and how an answer arrived: the instant on the client's monotonic clock, the
/// device's wall clock then, and the round trip it took.
public struct ServerReceipt: Hashable, Sendable {
    /// The monotonic instant the answer arrived (of the client's ``CountdownClock``).
    public var arrivedAt: CountdownInstant
    /// The device's wall clock when it arrived (possibly wrong: only its offset to the
    /// server's clock is used).
    public var deviceTime: Date
    /// From sending the request to the answer's arrival.
    public var roundTrip: Duration

    /// Makes a receipt.
    public init(arrivedAt: CountdownInstant, deviceTime: Date, roundTrip: Duration) {
        self.arrivedAt = arrivedAt
        self.deviceTime = deviceTime
        self.roundTrip = roundTrip
    }
}

/// A cooldown as the server counts it, held on the device without trusting the device's
/// wall clock.
///
/// In this process it is anchored to the monotonic clock: it ends at ``deadline``, the
/// answer's arrival plus `retry_after_ms` minus half the round trip (the server measured
/// the time left somewhere between sending and arrival; counting the answer's way back as
/// already spent never shows more time than remains, and is at most half a round trip
/// early). Across a relaunch it is carried as ``SavedCountdown``: the server's `resend_at`
/// and `server_time`, and the device's clock at that server time, so the device clock's
/// offset cancels out.
public struct ServerCountdown: Hashable, Sendable {
    /// When it ends, on the client's monotonic clock.
    public var deadline: CountdownInstant
    /// When it ends, on the server's clock.
    public var resendAt: Date
    /// The server's clock when it answered.
    public var serverTime: Date
    /// The device's wall clock at that same moment (the answer's arrival less half the round trip).
    public var deviceTimeAtServerTime: Date

    /// Anchors an answer's `retry_after_ms` to its arrival.
    public init(remainingMilliseconds: Int64, resendAt: Date, serverTime: Date, receipt: ServerReceipt) {
        let halfTrip = max(.zero, receipt.roundTrip / 2)
        self.deadline = receipt.arrivedAt.advanced(by: .milliseconds(remainingMilliseconds) - halfTrip)
        self.resendAt = resendAt
        self.serverTime = serverTime
        self.deviceTimeAtServerTime = receipt.deviceTime.addingTimeInterval(-(halfTrip / .seconds(1)))
    }

    /// Time left at `now` on the same monotonic clock (negative once over).
    public func remaining(at now: CountdownInstant) -> Duration {
        now.duration(to: deadline)
    }

    /// The saved form, keyed by the countdown token that follows it (if any).
    public func saved(token: String?) -> SavedCountdown {
        SavedCountdown(token: token, resendAt: resendAt, serverTime: serverTime,
                       deviceTimeAtServerTime: deviceTimeAtServerTime)
    }
}

/// What an app saves so a countdown survives a relaunch (it is `Codable`): the server's
/// `resend_at` and `server_time`, and the device's wall clock at that server time.
///
/// On restore the time left is `resend_at − (device now + (server_time − device time then))`:
/// a device clock that is minutes off, at the answer and at the restore alike, changes
/// nothing. A clock changed between the two moves it by that change; an app corrects it by
/// asking the server again (``ResendGateClient/countdown(token:)``, done by
/// ``ResendButtonModel/refresh()``).
public struct SavedCountdown: Hashable, Sendable, Codable {
    /// The countdown token, to ask the server again.
    public var token: String?
    /// When the cooldown ends, on the server's clock.
    public var resendAt: Date
    /// The server's clock when it answered.
    public var serverTime: Date
    /// The device's wall clock at that moment.
    public var deviceTimeAtServerTime: Date

    /// Makes a saved countdown.
    public init(token: String?, resendAt: Date, serverTime: Date, deviceTimeAtServerTime: Date) {
        self.token = token
        self.resendAt = resendAt
        self.serverTime = serverTime
        self.deviceTimeAtServerTime = deviceTimeAtServerTime
    }

    /// Time left when the device's wall clock reads `deviceNow` (negative once over).
    public func remaining(deviceNow: Date) -> Duration {
        let serverNow = deviceNow.addingTimeInterval(serverTime.timeIntervalSince(deviceTimeAtServerTime))
        let seconds = resendAt.timeIntervalSince(serverNow)
        return .nanoseconds(Int64(max(-9e18, min(9e18, (seconds * 1e9).rounded()))))
    }

    /// Carries the countdown on in this process: anchored to `clock`'s monotonic time now.
    public func restored(on clock: any CountdownClock) -> ServerCountdown {
        let now = clock.now, deviceNow = clock.wallNow
        let remaining = remaining(deviceNow: deviceNow)
        var countdown = ServerCountdown(
            remainingMilliseconds: 0, resendAt: resendAt, serverTime: serverTime,
            receipt: ServerReceipt(arrivedAt: now, deviceTime: deviceNow, roundTrip: .zero))
        countdown.deadline = now.advanced(by: remaining)
        countdown.deviceTimeAtServerTime = deviceTimeAtServerTime
        return countdown
    }
}
