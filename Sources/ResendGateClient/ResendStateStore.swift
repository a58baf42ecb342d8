import Countdown
import Foundation

/// Where a ``ResendButtonModel`` keeps its countdown across launches: `UserDefaults`, or
/// anything that stores data by key (a keychain wrapper, an in-memory store in tests).
public protocol ResendStateStore: AnyObject {
    /// The data saved under `key`, if any.
    func savedData(forKey key: String) -> Data?
    /// Saves `data` under `key`; nil removes it.
    func save(_ data: Data?, forKey key: String)
}

extension UserDefaults: ResendStateStore {
    /// `data(forKey:)`.
    public func savedData(forKey key: String) -> Data? {
        data(forKey: key)
    }

    /// `set(_:forKey:)`, or `removeObject(forKey:)` for nil.
    public func save(_ data: Data?, forKey key: String) {
        if let data { set(data, forKey: key) } else { removeObject(forKey: key) }
    }
}

/// The words of a resend button: the countdown's from ``Countdown/CountdownStrings``
/// ("Resend in 42s"), and the button's own.
public struct ResendButtonStrings: Sendable {
    /// Before any code was sent: "Send code".
    public var send: String
    /// While the request is under way: "Sending…".
    public var sending: String
    /// Once a resend may go ahead: "Resend".
    public var resend: String
    /// The countdown's words ("Resend in 42s", "42秒后重新发送").
    public var countdown: CountdownStrings

    /// Makes a set of strings.
    public init(send: String, sending: String, resend: String, countdown: CountdownStrings) {
        self.send = send
        self.sending = sending
        self.resend = resend
        self.countdown = countdown
    }

    /// English.
    public static let english = ResendButtonStrings(send: "Send code", sending: "Sending…", resend: "Resend",
                                                    countdown: .english)
    /// Simplified Chinese.
    public static let chinese = ResendButtonStrings(send: "获取验证码", sending: "发送中…", resend: "重新发送",
                                                    countdown: .chinese)
}
