import Testing
@testable import ResendGate

@Suite("CountdownToken: 128 random bits, base64url, strictly validated")
struct CountdownTokenTests {
    /// Each worker loop has its own source: fresh sources (each with its own block from
    /// OpenSSL) never hand out the same token either.
    @Test func tokensOfSeparateSourcesAre22URLSafeCharactersAndDistinct() {
        let tokens = (0..<1_000).map { _ in CountdownTokenSource().next().text }
        #expect(Set(tokens).count == 1_000)
        for token in tokens {
            #expect(token.utf8.count == 22)
            #expect(CountdownToken(validating: token)?.text == token)
        }
    }

    /// 1 000 tokens span four refills of the source's 4 KiB block: none repeats, and
    /// the bytes of a refill are new ones (a block reused as is would repeat all 256).
    @Test func aTokenSourceNeverRepeatsAcrossRefills() {
        let source = CountdownTokenSource()
        let tokens = (0..<1_000).map { _ in source.next().text }
        #expect(Set(tokens).count == 1_000)
        #expect(tokens.allSatisfy { CountdownToken(validating: $0)?.text == $0 })
        #expect(!tokens.contains("AAAAAAAAAAAAAAAAAAAAAA"))
    }

    @Test func base64URLUsesTheURLSafeAlphabetWithoutPadding() {
        func base64URL(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { CountdownToken.base64URL($0) } }
        #expect(base64URL([0xFB, 0xFF]) == "-_8")
        #expect(base64URL(Array("hello".utf8)) == "aGVsbG8")
        #expect(base64URL([UInt8](repeating: 0, count: 16)) == "AAAAAAAAAAAAAAAAAAAAAA")
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
