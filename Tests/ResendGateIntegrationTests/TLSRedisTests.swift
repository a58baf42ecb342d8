import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// TLS to Redis (issue 34, finding 7): Debian 12's hiredis (0.14) has no TLS, so the gate
/// reaches a TLS Redis through a client-mode stunnel on loopback, the recipe of
/// docs/operations.md#tls-to-redis. This runs that recipe: a redis-server that speaks TLS
/// (certificates made by openssl here), stunnel in front of it, a gate on stunnel's port.
/// Without stunnel or openssl it fails, saying what to install; it never skips.
@Suite("TLS to Redis through stunnel", .ownThread)
struct TLSRedisTests {
    @Test func aSendThroughStunnelToATLSRedisIsAllowedThenRefused() async throws {
        let folder = try TLSFolder()
        defer { folder.remove() }
        let tlsPort = try LoopbackPort.free()
        let redis = try await startRedis(RedisServer.Options(extraConfiguration: [
            "tls-port \(tlsPort)", "tls-cert-file \(folder.path)/redis.crt", "tls-key-file \(folder.path)/redis.key",
            "tls-ca-cert-file \(folder.path)/ca.crt", "tls-auth-clients no",
        ]))
        defer { redis.stop() }
        let stunnel = try Stunnel(folder: folder, redisTLSPort: tlsPort)
        defer { stunnel.stop() }

        let gate = try makeGate(url: "redis://127.0.0.1:\(stunnel.port)/0")
        let first = try await gate.reserve(phone: number)
        #expect(first.allowed, "\(first)")
        let second = try await gate.reserve(phone: number)
        #expect(!second.allowed && second.reason == .cooldown, "\(second)")
        // The cooldown is in the TLS Redis, written over the TLS port.
        #expect(try redis.client().command("EXISTS", cooldownKey()).integer == 1)
        let clients = try redis.client().command("CLIENT", "LIST").string ?? ""
        #expect(clients.contains("laddr=127.0.0.1:\(tlsPort) "), "no client on the TLS port:\n\(clients)")
        #expect(stunnel.process.stderr.contains("connected remote server"), "\(stunnel.process.stderr)")
    }

    @Test func aRedissURLSaysToUseTheRecipe() {
        #expect {
            try RedisConfiguration(url: "rediss://default:secret@redis.example.com:6380/0")
        } throws: { error in
            let message = (error as? ConfigurationError)?.message ?? ""
            return message.contains("rediss:// (TLS) is not supported") && message.contains("docs/operations.md#tls-to-redis")
        }
    }
}

/// A temp folder with a CA and a certificate for 127.0.0.1 it signed, made by openssl.
struct TLSFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "resendgate-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let openssl = try locate("openssl", package: "openssl")
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: path + "/san.cnf", atomically: true, encoding: .utf8)
        func file(_ name: String) -> String { "\(path)/\(name)" }
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=resendgate test CA",
             "-keyout", file("ca.key"), "-out", file("ca.crt")],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", file("redis.key"), "-out", file("redis.csr")],
            ["x509", "-req", "-in", file("redis.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"),
             "-CAcreateserial", "-CAserial", file("ca.srl"), "-days", "1", "-extfile", file("san.cnf"), "-out", file("redis.crt")],
        ] {
            let result = try CommandRunner.run(openssl, arguments)
            guard result.status == .exited(0) else { throw TestSupportError.processFailed.with("openssl \(arguments[0]): \(result)") }
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// stunnel in client mode: plain TCP on a loopback port, TLS to Redis, the server's
/// certificate checked against the test's CA and the address 127.0.0.1 (the recipe's config).
struct Stunnel {
    let process: ServerProcess
    let port: Int

    init(folder: TLSFolder, redisTLSPort: Int) throws {
        let executable = try locate("stunnel4", or: "stunnel", package: "stunnel4")
        port = try LoopbackPort.free()
        let configuration = """
            foreground = yes
            pid =
            [redis]
            client = yes
            accept = 127.0.0.1:\(port)
            connect = 127.0.0.1:\(redisTLSPort)
            verifyChain = yes
            CAfile = \(folder.path)/ca.crt
            checkIP = 127.0.0.1
            """
        try configuration.write(toFile: folder.path + "/stunnel.conf", atomically: true, encoding: .utf8)
        process = try ServerProcess(executable, [folder.path + "/stunnel.conf"])
        let deadline = ContinuousClock.now + .seconds(10)
        while !LoopbackPort.isAccepting(port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                let result = process.stop(grace: .seconds(1))
                throw TestSupportError.didNotStart.with("stunnel on 127.0.0.1:\(port): \(result)")
            }
            usleep(20_000)
        }
    }

    func stop() { _ = process.stop(grace: .seconds(2)) }
}

/// `name` (or `alternative`) on the PATH or in /usr/bin; else a failure naming the Debian package.
private func locate(_ name: String, or alternative: String? = nil, package: String) throws -> String {
    let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin"]
    for candidate in [name] + (alternative.map { [$0] } ?? []) {
        if let found = folders.map({ "\($0)/\(candidate)" }).first(where: FileManager.default.isExecutableFile(atPath:)) { return found }
    }
    throw TestSupportError.executableNotFound.with("\(name) not found: install Debian's \(package) (deploy/install-deps does)")
}
