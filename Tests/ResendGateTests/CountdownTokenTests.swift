import Testing
@testable import ResendGate

@Suite("Countdown tokens: sealed with AES-256-GCM, strictly validated")
struct CountdownTokenTests {
    static let secret = Array("a deployment's token secret".utf8)
    static let hmacNumber = String(repeating: "0123456789abcdef", count: 4)

    /// 1 000 nonces span three refills of the source's 4 KiB block: none repeats, and
    /// the bytes of a refill are new ones (a block reused as is would repeat them all).
    @Test func aNonceSourceNeverRepeatsAcrossRefills() {
        let source = CountdownTokenSource()
        let nonces = (0..<1_000).map { _ in source.next().text }
        #expect(Set(nonces).count == 1_000)
        #expect(nonces.allSatisfy { $0.utf8.count == 16 && CooldownNonce(text: Substring($0))?.text == $0 })
        #expect(!nonces.contains("AAAAAAAAAAAAAAAA"))
    }

    @Test(arguments: ["+8613800138000", hmacNumber])
    func aSealedTokenOpensToWhatItNames(number: String) throws {
        let cipher = CountdownTokenCipher(secret: Self.secret)
        let nonce = CountdownTokenSource().next()
        let purpose = try Purpose("login")
        let token = cipher.seal(purpose: purpose, number: number, nonce: nonce)
        #expect(CountdownToken(validating: token.text) == token)
        #expect(CountdownToken.lengths.contains(token.text.utf8.count))
        let contents = try #require(cipher.open(token))
        #expect(contents.purpose == purpose && contents.number == number && contents.cooldownValue == nonce.text)
        // Another gate of the deployment (another cipher, the same secret) opens it too.
        #expect(CountdownTokenCipher(secret: Self.secret).open(token) == contents)
        // Nothing of the number shows, in any form.
        #expect(!token.text.contains("8613800138000") && !token.text.contains("login"))
    }

    /// A number's HMAC key text (64 hex digits) is sealed as its 32 bytes, not 64 characters.
    @Test func anHMACNumberIsSealedAsItsBytes() throws {
        let cipher = CountdownTokenCipher(secret: Self.secret)
        let token = cipher.seal(purpose: try Purpose("login"), number: Self.hmacNumber, nonce: CountdownTokenSource().next())
        // Nonce 12, version 1, length 1, "login" 5, form 1, number 32, tag 16: 68 bytes, 91 characters.
        #expect(token.text.utf8.count == 91)
        #expect(cipher.open(token)?.number == Self.hmacNumber)
    }

    @Test func theLongestTokenFitsTheBound() throws {
        let cipher = CountdownTokenCipher(secret: Self.secret)
        let purpose = try Purpose(String(repeating: "p", count: 32))
        let token = cipher.seal(purpose: purpose, number: "+" + String(repeating: "9", count: 31), nonce: CountdownTokenSource().next())
        #expect(CountdownToken.lengths.contains(token.text.utf8.count))
        #expect(cipher.open(token)?.purpose == purpose)
    }

    /// Every single-bit change anywhere in the token is refused.
    @Test func anyAlteredByteIsRefused() throws {
        let cipher = CountdownTokenCipher(secret: Self.secret)
        let token = cipher.seal(purpose: .default, number: "+8613800138000", nonce: CountdownTokenSource().next())
        let bytes = try #require(CountdownToken.bytes(base64URL: Substring(token.text)))
        for index in bytes.indices {
            for bit in 0..<8 {
                var altered = bytes
                altered[index] ^= 1 << bit
                let text = CountdownToken.base64URL(altered)
                #expect(cipher.open(try #require(CountdownToken(validating: text))) == nil, "byte \(index) bit \(bit)")
            }
        }
        // Cut short or lengthened.
        for text in [String(token.text.dropLast(4)), token.text + "AAAA"] {
            if let shaped = CountdownToken(validating: text) { #expect(cipher.open(shaped) == nil) }
        }
    }

    /// A token of another secret, and every outstanding token after a rotation, is refused.
    @Test func anotherSecretOrARotationRefusesTheToken() {
        let old = CountdownTokenCipher(secret: Self.secret)
        let token = old.seal(purpose: .default, number: "+8613800138000", nonce: CountdownTokenSource().next())
        let rotated = CountdownTokenCipher(secret: Array("the next token secret, rotated".utf8))
        #expect(rotated.open(token) == nil)
        #expect(old.open(token) != nil)
        // A forged token: random bytes of a token's length.
        let forged = CountdownToken.base64URL((0..<51).map { _ in UInt8.random(in: 0...255) })
        #expect(old.open(CountdownToken(validating: forged)!) == nil)
    }

    @Test func base64URLRoundTripsAndRefusesOtherText() {
        #expect(CountdownToken.base64URL([0xFB, 0xFF]) == "-_8")
        #expect(CountdownToken.base64URL(Array("hello".utf8)) == "aGVsbG8")
        #expect(CountdownToken.bytes(base64URL: "aGVsbG8") == Array("hello".utf8))
        #expect(CountdownToken.bytes(base64URL: "-_8") == [0xFB, 0xFF])
        #expect(CountdownToken.bytes(base64URL: "-_9") == nil)  // non-zero trailing bits
        #expect(CountdownToken.bytes(base64URL: "aGVsb") == nil)  // 1 mod 4
        #expect(CountdownToken.bytes(base64URL: "aGV=") == nil)
    }

    @Test(arguments: ["", "abc", String(repeating: "A", count: 43), String(repeating: "A", count: 129),
                      String(repeating: "A", count: 43) + "=", String(repeating: "A", count: 43) + "+",
                      String(repeating: "A", count: 43) + "/", String(repeating: "A", count: 43) + " ",
                      String(repeating: "A", count: 43) + "é"])
    func refusesAnythingButTheTokenShape(text: String) {
        #expect(CountdownToken(validating: text) == nil)
    }
}
