import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Finds the challenge methods an app's session delegate implements (optional methods on
/// Apple platforms; on swift-corelibs-foundation every delegate has them, by default
/// implementations, so a task delegate's task method and any delegate's session method count).
enum ChallengeForwarding {
    typealias Completion = @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    typealias SessionMethod = (URLSession, URLAuthenticationChallenge, @escaping Completion) -> Void
    typealias TaskMethod = (URLSession, URLSessionTask, URLAuthenticationChallenge, @escaping Completion) -> Void

    /// The delegate's `urlSession(_:didReceive:completionHandler:)`, if it has one.
    static func sessionMethod(of delegate: (any URLSessionDelegate)?) -> SessionMethod? {
        guard let delegate else { return nil }
        #if canImport(FoundationNetworking)
        return { delegate.urlSession($0, didReceive: $1, completionHandler: $2) }
        #else
        guard let method = delegate.urlSession(_:didReceive:completionHandler:) else { return nil }
        return { method($0, $1, $2) }
        #endif
    }

    /// The delegate's `urlSession(_:task:didReceive:completionHandler:)`, if it has one.
    static func taskMethod(of delegate: (any URLSessionDelegate)?) -> TaskMethod? {
        guard let delegate = delegate as? any URLSessionTaskDelegate else { return nil }
        #if canImport(FoundationNetworking)
        return { delegate.urlSession($0, task: $1, didReceive: $2, completionHandler: $3) }
        #else
        guard let method = delegate.urlSession(_:task:didReceive:completionHandler:) else { return nil }
        return { method($0, $1, $2, $3) }
        #endif
    }

    /// Challenges about the connection rather than one request, which Apple's `URLSession`
    /// gives to the session-level method when a delegate has only that one.
    static func isSessionWide(_ challenge: URLAuthenticationChallenge) -> Bool {
        [serverTrust, clientCertificate, NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate]
            .contains(challenge.protectionSpace.authenticationMethod)
    }

    #if canImport(FoundationNetworking)
    // Marked unavailable by swift-corelibs-foundation (no Security framework): Apple's values.
    static let serverTrust = "NSURLAuthenticationMethodServerTrust"
    static let clientCertificate = "NSURLAuthenticationMethodClientCertificate"
    #else
    static let serverTrust = NSURLAuthenticationMethodServerTrust
    static let clientCertificate = NSURLAuthenticationMethodClientCertificate
    #endif
}
