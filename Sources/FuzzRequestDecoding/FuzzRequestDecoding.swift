// libFuzzer entry point for everything the server decodes from a request before
// Redis sees it: the JSON body, its fields, percent-encoded paths and queries.
// Built only by deploy/dev/fuzz (swift build --sanitize fuzzer, debug, RESENDGATE_FUZZING);
// no main of its own. It reaches the server's internal decoders through @testable,
// which a release build does not allow, so outside fuzzing only the stub below is built.
#if RESENDGATE_FUZZING
import GateRuntime
import ResendGate
import RedisClient
@testable import ResendGateServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestDecoding(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let fields = try? JSONFields(parsing: bytes) {
        for name in ["phone", "purpose", "client_ip"] { _ = try? fields.value(name) }
    }
    let text = Substring(decoding: bytes, as: UTF8.self)
    _ = PercentDecoding.decode(text)
    _ = try? PercentDecoding.queryValue("purpose", in: text)
    if let ip = PercentDecoding.decode(text) { _ = ClientAddress(ip) }
    return 0
}
#else
/// Without libFuzzer (a plain `swift build`), say how to run this fuzzer.
@main enum FuzzerNotBuilt {
    static func main() { print("built without libFuzzer: run deploy/dev/fuzz") }
}
#endif
