import Testing
@testable import ResendGate

@Suite("CountdownToken: 128 random bits, base64url, strictly validated")
struct CountdownTokenTests {
    @Test func randomTokensAre22URLSafeCharactersAndDistinct() {
        let tokens = (0..<1_000).map { _ in CountdownToken.random().text }
        #expect(Set(tokens).count == 1_000)
        for token in tokens {
            #expect(token.utf8.count == 22)
            #expect(CountdownToken(validating: token)?.text == token)
        }
    }

    @Test func base64URLUsesTheURLSafeAlphabetWithoutPadding() {
        #expect(CountdownToken.base64URL([0xFB, 0xFF]) == "-_8")
        #expect(CountdownToken.base64URL(Array("hello".utf8)) == "aGVsbG8")
        #expect(CountdownToken.base64URL([UInt8](repeating: 0, count: 16)) == "AAAAAAAAAAAAAAAAAAAAAA")
    }

    @Test(arguments: ["", "abc", "AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAA=",
                      "AAAAAAAAAAAAAAAAAAAAA+", "AAAAAAAAAAAAAAAAAAAAA/", "AAAAAAAAAAAAAAAAAAAA A", "AAAAAAAAAAAAAAAAAAAAAé"])
    func refusesAnythingButTheTokenShape(text: String) {
        #expect(CountdownToken(validating: text) == nil)
    }

    @Test func keyPutsTheTokenInItsOwnHashTag() {
        let token = CountdownToken(validating: "abcdefghijklmnopqrstu_")!
        #expect(token.key(prefix: "rg") == "rg:countdown:{abcdefghijklmnopqrstu_}")
    }
}
