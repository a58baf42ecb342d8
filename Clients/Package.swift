// swift-tools-version:6.0
import PackageDescription

// The app-side kit alone, for apps: Foundation-level targets only (no C, C++ or system
// libraries). Its sources are the root package's (`Sources/Countdown`,
// `Sources/ResendGateClient`, linked here), so the two never drift; an app adds this
// package (Xcode: Add Package, or `.package(url:...)` with this folder as its root).
let package = Package(
    name: "ResendGateKit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Countdown", targets: ["Countdown"]),
        .library(name: "ResendGateClient", targets: ["ResendGateClient"]),
    ],
    targets: [
        .target(name: "Countdown"),
        .target(name: "ResendGateClient", dependencies: ["Countdown"]),
    ],
    swiftLanguageModes: [.v6]
)
