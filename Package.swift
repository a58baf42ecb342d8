// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "resendgate",
    // The server targets run on Linux; `Countdown` and `ResendGateClient` also build for
    // Apple platforms (checked here only on Linux: see README "In an app").
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Countdown", targets: ["Countdown"]),
        .library(name: "ResendGateClient", targets: ["ResendGateClient"]),
        .library(name: "ResendGate", targets: ["ResendGate"]),
        .library(name: "ResendGateServer", targets: ["ResendGateServer"]),
        .library(name: "ResendGateTestSupport", targets: ["ResendGateTestSupport"]),
        .executable(name: "resendgate", targets: ["resendgate"]),
    ],
    targets: [
        // MARK: C libraries from Debian
        .systemLibrary(name: "CHiredis", path: "Sources/CHiredis"),
        // libevent: the event loop of the server, the Redis client and the HTTP framing.
        .systemLibrary(name: "CLibevent", path: "Sources/CLibevent"),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto"),
        // Our hiredis adapter for libevent (C, beside the libraries it joins).
        .target(name: "CRedisEvents", dependencies: ["CHiredis", "CLibevent"], path: "Sources/CRedisEvents"),
        // Our HTTP/1.1 framing on libevent (C): no allocation a request, one sendmsg an answer.
        .target(name: "CHTTPConnection", dependencies: ["CLibevent"], path: "Sources/CHTTPConnection"),
        .target(
            name: "CPhoneNumber",
            path: "Sources/CPhoneNumber",
            cxxSettings: [.unsafeFlags(["-std=c++17"])],
            linkerSettings: [
                .linkedLibrary("phonenumber"), .linkedLibrary("protobuf"), .linkedLibrary("icui18n"),
                .linkedLibrary("icuuc"), .linkedLibrary("stdc++"),
            ]
        ),

        // MARK: Swift modules
        .target(name: "Countdown"),
        // The app-side kit: Foundation's URLSession and Countdown only (no UIKit/AppKit/SwiftUI).
        .target(name: "ResendGateClient", dependencies: ["Countdown"]),
        // A complete sign-in app on the kit (Examples/ResendDemo): its SwiftUI views build on
        // Apple platforms only; its logic builds and runs in the tests here.
        .target(name: "ResendDemo", dependencies: ["ResendGateClient", "Countdown"], path: "Examples/ResendDemo"),
        // The floor, Swift alone: the logger, configuration errors, text helpers.
        .target(name: "GateRuntime", dependencies: []),
        // The event loop and its timers (libevent), beside the floor: re-exports GateRuntime.
        .target(name: "GateEventLoop", dependencies: ["GateRuntime", "CLibevent", "CCrypto"]),
        // Phone numbers (libphonenumber): parsing, canonical E.164, the per-worker cache.
        // Neither Redis nor libevent: the phone fuzzer links this and libphonenumber only.
        .target(name: "PhoneNumbers", dependencies: ["CPhoneNumber"]),
        // Purposes and policies: what each rule allows, parsed and checked. Neither Redis nor
        // libevent (Swift, the floor and phone numbers only).
        .target(name: "Policies", dependencies: ["GateRuntime", "PhoneNumbers"]),
        // The async Redis client on the event loop (one Redis, Sentinel, Cluster): Redis only.
        .target(name: "RedisClient", dependencies: ["GateEventLoop", "GateRuntime", "CHiredis", "CLibevent", "CRedisEvents", "CCrypto"]),
        // The domain: policies, keys, the rules and their scripts, the gate.
        .target(
            name: "ResendGate", dependencies: ["GateEventLoop", "GateRuntime", "PhoneNumbers", "Policies", "RedisClient", "CCrypto"],
            plugins: ["EmbedFiles"]),
        .target(
            name: "ResendGateServer",
            dependencies: ["GateEventLoop", "GateRuntime", "ResendGate", "RedisClient", "Countdown", "CLibevent", "CHTTPConnection"],
            plugins: ["EmbedFiles"]),
        .executableTarget(
            name: "resendgate",
            dependencies: ["GateRuntime", "ResendGate", "RedisClient", "ResendGateServer", "ResendGateClient", "Countdown"]),
        .target(
            name: "ResendGateTestSupport", dependencies: ["GateRuntime", "ResendGate", "RedisClient", "ResendGateClient"],
            plugins: ["EmbedFiles"]),
        // The "Redis plus gate" fixture: apart, so that ResendGateTestSupport needs no server.
        .target(name: "ResendGateServerTestSupport", dependencies: ["ResendGateServer", "ResendGateTestSupport"]),
        .executableTarget(name: "CountdownBench", dependencies: ["Countdown"]),
        .executableTarget(name: "GateBench", dependencies: ["Countdown", "GateRuntime", "ResendGate", "RedisClient", "ResendGateTestSupport"]),

        // MARK: Build tools
        // Data files (Content/EmbeddedFiles.txt lists them) compiled into their module as byte
        // arrays, so the one binary carries them and the repository holds them as files.
        .executableTarget(name: "EmbedFilesTool", path: "Plugins/EmbedFilesTool"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["EmbedFilesTool"]),

        // MARK: Fuzzers (built only by deploy/dev/fuzz with --sanitize fuzzer: libFuzzer brings main)
        .executableTarget(
            name: "FuzzRequestDecoding", dependencies: ["ResendGateServer", "GateRuntime"],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzPhoneNumber", dependencies: ["PhoneNumbers", "CPhoneNumber"],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzHTTPFraming", dependencies: ["CHTTPConnection", "CLibevent"],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),

        // MARK: Tests
        .testTarget(name: "CountdownTests", dependencies: ["Countdown"]),
        .testTarget(name: "ResendGateTests", dependencies: ["GateEventLoop", "GateRuntime", "PhoneNumbers", "ResendGate", "RedisClient"]),
        .testTarget(
            name: "ResendGateClientTests",
            dependencies: ["ResendGateClient", "Countdown", "ResendDemo", "ResendGateTestSupport", "ResendGateServerTestSupport"]
        ),
        .testTarget(
            name: "ResendGateIntegrationTests",
            dependencies: ["GateEventLoop", "GateRuntime", "PhoneNumbers", "ResendGate", "RedisClient", "ResendGateTestSupport"]
        ),
        .testTarget(
            name: "ResendGateServerTests",
            dependencies: [
                "GateRuntime", "PhoneNumbers", "ResendGateServer", "ResendGate", "RedisClient", "ResendGateClient",
                "ResendGateTestSupport", "ResendGateServerTestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
