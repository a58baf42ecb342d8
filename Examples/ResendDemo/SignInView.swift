#if canImport(SwiftUI)
import ResendGateClient
import SwiftUI

/// The sign-in screen (Apple platforms only; its logic, `SignInFlow`, runs in the tests).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public struct SignInView: View {
    @Bindable var flow: SignInFlow
    @Environment(\.scenePhase) private var scenePhase

    public init(flow: SignInFlow) { self.flow = flow }

    public var body: some View {
        Form {
            TextField("Phone", text: $flow.phone)
            #if os(iOS)
                .textContentType(.telephoneNumber)
                .keyboardType(.phonePad)
            #endif
            Button(flow.button.title) { Task { await flow.sendTapped() } }
                .disabled(!flow.button.isEnabled)
                .accessibilityLabel(flow.button.accessibilityLabel)
                .accessibilityValue(flow.button.accessibilityValue)
            TextField("Code", text: $flow.code)
            #if os(iOS)
                .textContentType(.oneTimeCode)
                .keyboardType(.numberPad)
            #endif
            Button("Sign in") { Task { await flow.submit() } }
                .disabled(flow.code.isEmpty || flow.isChecking)
            Text(flow.message)
        }
        // Follows the countdown's stream while the screen shows; cancelled with the view.
        .task { await flow.button.liveUpdates() }
        .onChange(of: scenePhase) { _, phase in
            if phase == .active { Task { await flow.becameActive() } }
        }
    }
}

/// The app: one screen, talking to `backEnd` (your server, which holds the gate's API key
/// and proxies the kit's routes, `/v1/checks` included). `@MainActor` said here, not only
/// inherited from `Scene`: its `init` makes the main-actor `SignInFlow`, whatever SDK
/// version declares `Scene`'s isolation.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor public struct ResendDemoScene: Scene {
    @State private var flow: SignInFlow

    public init(backEnd: URL, userToken: @escaping @Sendable () async throws -> String) {
        let client = ResendGateClient(baseURL: backEnd, headers: { ["Authorization": "Bearer \(try await userToken())"] })
        _flow = State(initialValue: SignInFlow(backEnd: client, checker: BackEndCodeChecker(backEnd: client),
                                               strings: .localized(for: .current)))
    }

    public var body: some Scene {
        WindowGroup { SignInView(flow: flow) }
    }
}
#endif
