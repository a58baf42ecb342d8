// libFuzzer entry point for phone canonicalisation through libphonenumber.
// Built only by deploy/fuzz (swift build --sanitize fuzzer); no main of its own.
import ResendGate

private let regions: [String?] = [nil, "CN", "GB", "US", "DE", "IN", "XX"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPhoneNumber(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let region = regions[Int(data[0]) % regions.count]
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    // A fresh parser each time, so every input reaches libphonenumber.
    if let number = try? PhoneNumberParser(capacity: 2).parse(text, defaultRegion: region) {
        // What comes out is always canonical: parsing it again gives itself.
        let again = try? PhoneNumber(parsing: number.e164)
        if again?.e164 != number.e164 { fatalError("E.164 \(number.e164) did not parse back to itself") }
    }
    return 0
}

#if !RESENDGATE_FUZZING
/// Without libFuzzer (a plain `swift build`), say how to run this fuzzer.
@main enum FuzzerNotBuilt {
    static func main() { print("built without libFuzzer: run deploy/fuzz") }
}
#endif
