/// What the SMS-pumping guard knows of one destination prefix for one purpose, in its window.
public struct PrefixFigures: Sendable, Equatable {
    public let purpose: Purpose
    public let prefix: PrefixKey
    /// True while the guard refuses the prefix's sends (`suspected_pumping`).
    public let blocked: Bool
    /// Allowed sends counted in the window.
    public let sends: Int
    /// `verified` outcomes counted in the window.
    public let verifications: Int
    /// Until the prefix is free again if nothing new arrives; 0 when it is not blocked.
    public let retryAfterMilliseconds: Int64
    /// When the guard found it blocked, in ms since 1970 (Redis's clock); nil when not blocked.
    public let blockedSinceMilliseconds: Int64?
    /// Redis's clock when it was read, in ms since 1970.
    public let serverTimeMilliseconds: Int64

    public init(
        purpose: Purpose, prefix: PrefixKey, blocked: Bool, sends: Int, verifications: Int, retryAfterMilliseconds: Int64,
        blockedSinceMilliseconds: Int64?, serverTimeMilliseconds: Int64
    ) {
        self.purpose = purpose
        self.prefix = prefix
        self.blocked = blocked
        self.sends = sends
        self.verifications = verifications
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.blockedSinceMilliseconds = blockedSinceMilliseconds
        self.serverTimeMilliseconds = serverTimeMilliseconds
    }

    /// Verified outcomes per send in the window; nil without sends.
    public var conversion: Double? { sends == 0 ? nil : Double(verifications) / Double(sends) }
    /// Whole seconds until the prefix is free again, rounded up.
    public var retryAfter: Int64 { Decision.wholeSeconds(retryAfterMilliseconds) }
}
