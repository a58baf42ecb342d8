@testable import RedisClient
@testable import ResendGate
import Testing

/// `SHA1` (libcrypto's) names scripts as Redis does: FIPS 180 test vectors, and
/// messages around the 64-byte block and the 56-byte padding boundary (digests from
/// Python's hashlib).
@Suite("SHA-1")
struct SHA1Tests {
    @Test func matchesTheFIPS180TestVectors() {
        #expect(SHA1.hexDigest([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(SHA1.hexDigest(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.hexDigest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(SHA1.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
            == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func padsEveryLengthAroundABlockBoundary() {
        let expected = [
            55: "cef734ba81a024479e09eb5a75b6ddae62e6abf1", 56: "901305367c259952f4e7af8323f480d59f81335b",
            63: "0ddc4e0cccd9a12850deb5abb0853a4425559fec", 64: "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163",
            65: "78c741ddc482e4cdf8c474a0876347a0905b6233", 119: "4300320394f7ee239bcdce7d3b8bcee173a0cd5c",
            120: "ceb2821639c4b6dcb10bce0e522ca2e608ce056d",
        ]
        for (length, digest) in expected {
            #expect(SHA1.hexDigest([UInt8](repeating: UInt8(ascii: "x"), count: length)) == digest, "\(length) bytes")
        }
    }

    @Test func hashesUTF8AsBytes() {
        #expect(SHA1.hexDigest(Array("冷却 ⏱".utf8)) == "3f6a8b2dde15631b1128f58a1a6e3996a266d8c4")
        #expect(RedisScript("return 1").sha1 == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
    }
}
