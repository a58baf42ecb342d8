import CCrypto
import GateRuntime

/// SHA-1 from libcrypto, only to name things the way Redis does (a script's `EVALSHA`
/// name, an idempotency key's slot in a key name): not for security.
package enum SHA1 {
    static let digestLength = 20

    /// The SHA-1 of `message` in lower-case hex (40 characters), as `SCRIPT LOAD` answers.
    package static func hexDigest(_ message: [UInt8]) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digestLength) { digest in
            let done = message.withUnsafeBytes { bytes in
                EVP_Digest(bytes.baseAddress, bytes.count, digest.baseAddress, nil, EVP_sha1(), nil)
            }
            // Only a libcrypto without SHA-1 or out of memory fails: nothing a caller could handle.
            precondition(done == 1, "libcrypto could not compute a SHA-1")
            return digest.lowercaseHex
        }
    }
}
