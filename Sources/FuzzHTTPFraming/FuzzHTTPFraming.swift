// libFuzzer entry point for the server's HTTP framing (CHTTPConnection's parser): the
// request line, the header table, the framing checks and chunked bodies, over arbitrary
// bytes under AddressSanitizer. Each input is parsed whole, and again with its first half
// arriving before the rest (the way a connection resumes a chunked body): both must agree.
// Built only by deploy/dev/fuzz (swift build --sanitize fuzzer, RESENDGATE_FUZZING); outside
// fuzzing only the stub below is built.
import CLibevent  // links libevent, which the framing's connection code calls

#if RESENDGATE_FUZZING
import CHTTPConnection

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPFraming(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let whole = parse(data, size)
    let halves = parse(data, size / 2)
    // A request found whole in the first half is found, the same, in all of it; one refused
    // in the first half is refused in all of it.
    if halves.result == 1 && (whole.result != 1 || whole.consumed != halves.consumed || whole.body != halves.body) {
        fatalError("a request parsed from a prefix differs: \(halves) then \(whole)")
    }
    if halves.result < 0 && whole.result != halves.result {
        fatalError("a prefix refused with \(halves.result) and the whole with \(whole.result)")
    }
    return 0
}

/// Parses a copy of the first `size` bytes (an exact allocation, so that a read past its
/// end is AddressSanitizer's finding).
private func parse(_ data: UnsafePointer<UInt8>, _ size: Int) -> (result: Int32, consumed: Int, body: [UInt8]) {
    let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(size, 1))
    defer { copy.deallocate() }
    copy.update(from: data, count: size)
    var request = rg_http_request()
    let headers = UnsafeMutablePointer<rg_http_header>.allocate(capacity: Int(RG_HTTP_MAX_HEADERS))
    defer { headers.deallocate() }
    var consumed = 0
    let result = rg_http_parse_whole(copy, size, 8 << 10, 16 << 10, &request, headers, &consumed)
    guard result == 1, let body = request.body else { return (result, 0, []) }
    return (result, consumed, Array(UnsafeBufferPointer(start: body, count: Int(request.body_length))))
}
#else
/// Without libFuzzer (a plain `swift build`), say how to run this fuzzer.
@main enum FuzzerNotBuilt {
    static func main() { print("built without libFuzzer: run deploy/dev/fuzz") }
}
#endif
