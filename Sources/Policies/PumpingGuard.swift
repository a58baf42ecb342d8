import Foundation
import GateRuntime

/// The SMS-pumping guard of one purpose: toll fraud requests codes for many numbers in
/// ranges a fraudster is paid for and never verifies one, so a destination prefix whose
/// sends stop converting into `verified` outcomes is refused (`suspected_pumping`).
///
/// A prefix is the calling code plus the first `prefixDigits` national digits
/// (`+447911` for `+447911123456`). It is blocked while it has at least `minSends`
/// allowed sends in `window` and its conversion (verified outcomes / sends, both in the
/// window) is below `minConversion`. Numbers that verified within `trustedFor` are never
/// refused by the guard.
///
/// Off unless `minSends` is set: conversion is only known when the back end reports
/// verifications (`POST /v1/verifications`); a gate that is never told would see every
/// busy prefix at 0 % and block it.
public struct PumpingGuard: Sendable, Equatable {
    /// Sends a prefix needs in `window` before its conversion is judged; nil: the guard is off.
    public var minSends: Int?
    /// The sliding window of a prefix's sends and verifications (to within a tenth of it:
    /// the counts are kept in ten buckets).
    public var window: Duration
    /// The lowest conversion (0 < c <= 1) a prefix with `minSends` may have before it is refused.
    public var minConversion: Double
    /// National digits after the calling code that make a prefix.
    public var prefixDigits: Int
    /// How long a `verified` outcome exempts its number from the guard.
    public var trustedFor: Duration

    /// An hour: an attack is a burst, and a blocked prefix is free again within it.
    public static let defaultWindow: Duration = .seconds(3600)
    /// 10 %: real users verify most codes (typically 60-90 %); a pumped range verifies none.
    public static let defaultMinConversion = 0.1
    /// Four national digits: a carrier's number block, narrow enough to spare the
    /// neighbouring ranges, wide enough to gather an attack's sends.
    public static let defaultPrefixDigits = 4
    /// Thirty days.
    public static let defaultTrustedFor: Duration = .seconds(30 * 86_400)
    /// How many buckets a window's counts are kept in.
    public static let buckets: Int64 = 10
    /// The range of `prefixDigits`.
    public static let prefixDigitsRange = 0...12

    /// The guard off (no `minSends`), with the default figures for when it is turned on.
    public init(
        minSends: Int? = nil, window: Duration = PumpingGuard.defaultWindow,
        minConversion: Double = PumpingGuard.defaultMinConversion, prefixDigits: Int = PumpingGuard.defaultPrefixDigits,
        trustedFor: Duration = PumpingGuard.defaultTrustedFor
    ) {
        self.minSends = minSends
        self.window = window
        self.minConversion = minConversion
        self.prefixDigits = prefixDigits
        self.trustedFor = trustedFor
    }

    /// Whether the guard judges this purpose's sends.
    public var isOn: Bool { minSends != nil }

    /// `minConversion` in parts per million, as the script compares it.
    public var minConversionPartsPerMillion: Int { Int((minConversion * 1_000_000).rounded()) }

    /// The length of one bucket of the window, in ms (a tenth of it, rounded up).
    public var bucketMilliseconds: Int64 {
        let window = self.window.wholeMilliseconds
        return (window + Self.buckets - 1) / Self.buckets
    }

    /// Refuses figures that cannot work, naming the field (`where` prefixes it).
    public func lint(where prefix: String = "") throws(ConfigurationError) {
        func fail(_ field: String, _ message: String) -> ConfigurationError {
            ConfigurationError(field: prefix + field, message: message)
        }
        if let minSends, minSends < 1 { throw fail("pumping-min-sends", "must be at least 1, got \(minSends)") }
        guard window >= .milliseconds(Self.buckets) else {
            throw fail("pumping-window", "must be at least \(Self.buckets) ms")
        }
        guard minConversion > 0, minConversion <= 1 else {
            throw fail("pumping-min-conversion", "must be above 0 and at most 1 (or 100%), got \(minConversion)")
        }
        guard Self.prefixDigitsRange.contains(prefixDigits) else {
            throw fail("prefix-digits", "must be \(Self.prefixDigitsRange.lowerBound) to \(Self.prefixDigitsRange.upperBound), got \(prefixDigits)")
        }
        guard trustedFor >= .milliseconds(1) else { throw fail("trusted-for", "must be at least 1 ms") }
        // The trusted mark also remembers when the number last counted toward its prefix:
        // a mark that ended before the window would let one number count again and again.
        guard isOn == false || trustedFor >= window else {
            throw fail("trusted-for", "must be at least the pumping window (\(window)), got \(trustedFor): a verified number counts once per window only while its mark lasts")
        }
    }

    /// Reads a conversion written as a fraction (`0.1`) or a percentage (`10%`).
    public static func parseConversion(_ text: String, field: String = "pumping-min-conversion") throws(ConfigurationError) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let isPercent = trimmed.hasSuffix("%")
        let digits = isPercent ? String(trimmed.dropLast()).trimmingCharacters(in: .whitespaces) : trimmed
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(digits) else {
            throw ConfigurationError(field: field, message: "\"\(text)\" is not a conversion (try 0.1 or 10%)")
        }
        let fraction = isPercent ? value / 100 : value
        guard fraction > 0, fraction <= 1 else {
            throw ConfigurationError(field: field, message: "\"\(text)\" must be above 0 and at most 1 (or 100%)")
        }
        return fraction
    }

    /// Writes a conversion as `parseConversion` reads it: `10%`, `12.5%`.
    public static func formatConversion(_ fraction: Double) -> String {
        let percent = fraction * 100
        return percent == percent.rounded() ? "\(Int(percent))%" : "\(percent)%"
    }
}
