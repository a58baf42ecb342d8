#if canImport(SwiftUI)
import ResendGateClient
import SwiftUI

/// The sign-in screen (Apple platforms only; its logic, `SignInFlow`, runs in the tests).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public struct SignInView: View {
    let flow: SignInFlow
    @State private var phone = ""
    @State private var code = ""

    public init(flow: SignInFlow) { self.flow = flow }

    public var body: some View {
        Form {
            TextField("Phone", text: $phone)
                .onChange(of: phone) { flow.phoneChanged(phone) }
            Button(flow.button.title) { Task { await flow.sendTapped() } }
                .disabled(!flow.button.isEnabled)
            TextField("Code", text: $code)
            Button("Sign in") { Task { await flow.submit(code: code) } }
            Text(flow.message)
        }
        .onAppear { flow.button.startLiveUpdates() }
        .onDisappear { flow.button.stopLiveUpdates() }
    }
}

/// The app: one screen, talking to `backEnd` (your server, which holds the gate's API key).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public struct ResendDemoScene: Scene {
    let flow: SignInFlow

    public init(backEnd: URL, checker: any CodeChecking) {
        flow = SignInFlow(backEnd: ResendGateClient(baseURL: backEnd), checker: checker)
    }

    public var body: some Scene {
        WindowGroup { SignInView(flow: flow) }
    }
}
#endif
