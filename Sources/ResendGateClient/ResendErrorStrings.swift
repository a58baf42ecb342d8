/// The sentences an app shows for a ``ResendGateError``, by what the user can do about it;
/// ``message(for:strings:)`` is the mapping from every code (docs/clients.md lists it).
public struct ResendErrorStrings: Sendable {
    /// No network on the device.
    public var offline: String
    /// No answer from the server (it may be down, or the connection dropped).
    public var unreachable: String
    /// The service is busy or briefly down; with the wait when one was given ("42 seconds").
    public var busy: @Sendable (_ wait: String?) -> String
    /// The phone number cannot be read.
    public var invalidPhone: String
    /// Codes are not sent to this number (its region or line type).
    public var notAllowed: String
    /// A wrong code, with the tries left when known.
    public var wrongCode: @Sendable (_ attemptsLeft: Int?) -> String
    /// The code had too many wrong tries: a new one is needed (with the wait before it may be sent).
    public var codeLocked: @Sendable (_ wait: String?) -> String
    /// The number is locked by wrong codes for a while.
    public var numberLocked: @Sendable (_ wait: String?) -> String
    /// The code expired, or none was sent.
    public var expired: String
    /// The code was already used.
    public var used: String
    /// The code was voided (its send was refunded).
    public var voided: String
    /// The user's session (the back end's token) is not accepted.
    public var signInAgain: String
    /// The back end does not allow this.
    public var forbidden: String
    /// Anything else: a bug or a misconfiguration the user cannot fix.
    public var generic: String

    /// English.
    public static let english = ResendErrorStrings(
        offline: "You're offline. Check your connection and try again.",
        unreachable: "Couldn't reach the server. Try again.",
        busy: { wait in wait.map { "The service is busy. Try again in \($0)." } ?? "The service is busy. Try again shortly." },
        invalidPhone: "This phone number isn't valid.",
        notAllowed: "Codes can't be sent to this number.",
        wrongCode: { left in
            switch left {
            case nil: "Wrong code."
            case 0?: "Wrong code. No tries left: request a new code."
            case 1?: "Wrong code. 1 try left."
            case let left?: "Wrong code. \(left) tries left."
            }
        },
        codeLocked: { wait in
            "Too many wrong codes. Request a new code\(wait.map { " in \($0)" } ?? "")."
        },
        numberLocked: { wait in "Too many wrong codes. Try again \(wait.map { "in \($0)" } ?? "later")." },
        expired: "This code has expired. Request a new one.",
        used: "This code was already used. Request a new one.",
        voided: "This code is no longer valid. Request a new one.",
        signInAgain: "Your session has expired. Sign in again.",
        forbidden: "This isn't allowed.",
        generic: "Something went wrong. Try again later.")

    /// Simplified Chinese.
    public static let chinese = ResendErrorStrings(
        offline: "网络不可用，请检查网络后重试。",
        unreachable: "无法连接服务器，请重试。",
        busy: { wait in wait.map { "服务繁忙，请\($0)后重试。" } ?? "服务繁忙，请稍后重试。" },
        invalidPhone: "手机号码无效。",
        notAllowed: "无法向此号码发送验证码。",
        wrongCode: { left in
            switch left {
            case nil: "验证码错误。"
            case 0?: "验证码错误，请重新获取验证码。"
            case let left?: "验证码错误，还可尝试\(left)次。"
            }
        },
        codeLocked: { wait in "错误次数过多，请\(wait.map { "\($0)后" } ?? "")重新获取验证码。" },
        numberLocked: { wait in "错误次数过多，请\(wait.map { "\($0)后" } ?? "稍后")再试。" },
        expired: "验证码已过期，请重新获取。",
        used: "验证码已使用，请重新获取。",
        voided: "验证码已失效，请重新获取。",
        signInAgain: "登录已过期，请重新登录。",
        forbidden: "无权执行此操作。",
        generic: "出现问题，请稍后重试。")

    /// The sentence for `error`, its wait read by `strings` ("42 seconds", "42秒").
    public func message(for error: ResendGateError, strings: ResendButtonStrings) -> String {
        let wait = error.retryAfter.map { duration -> String in
            let seconds = Int64((duration / .seconds(1)).rounded(.up))
            return strings.spokenDuration(seconds)
        }
        typealias E = ResendGateError
        let text: String
        switch error.code {
        case _ where error.isOffline: text = offline
        case E.transport: text = unreachable
        case E.rateLimited, E.storeUnavailable, E.storeEvictsKeys: text = busy(wait)
        case E.invalidPhone, E.missingField: text = invalidPhone
        case E.regionNotAllowed, E.numberTypeNotAllowed: text = notAllowed
        case E.wrongCode: text = wrongCode(error.attemptsLeft)
        case E.codeLocked: text = codeLocked(wait)
        case E.locked: text = numberLocked(wait)
        case E.codeExpired, E.noCodeSent: text = expired
        case E.codeUsed: text = used
        case E.codeVoided: text = voided
        case E.unauthorized, E.authentication: text = signInAgain
        case E.forbidden: text = forbidden
        case E.httpError where (error.status ?? 0) >= 500: text = busy(wait)
        default: text = generic  // the request's own faults, refunds, tokens, cancelled: nothing the user can fix
        }
        return strings.digits(text)
    }
}
