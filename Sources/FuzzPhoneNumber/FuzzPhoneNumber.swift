// libFuzzer entry point for phone canonicalisation through libphonenumber.
// Built only by deploy/dev/fuzz (swift build --sanitize fuzzer); no main of its own.
import CPhoneNumber
import PhoneNumbers

private let regions: [String?] = [nil, "CN", "GB", "US", "DE", "IN", "XX"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPhoneNumber(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let region = regions[Int(data[0]) % regions.count]
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    // The gate's parse (the E.164 fast path, then libphonenumber) and libphonenumber's
    // alone agree on every input: status and result (issue 23, finding 1: a fast path that
    // read "+01..." as "+1..." gave one number two keys).
    data.withMemoryRebound(to: CChar.self, capacity: size) { bytes in
        var ours = rg_phone_result(), theirs = rg_phone_result()
        let parse = { (out: UnsafeMutablePointer<rg_phone_result>, full: Bool) -> rg_phone_status in
            let call = { (code: UnsafePointer<CChar>?) in
                full ? rg_phone_parse_full(bytes + 1, size - 1, code, out) : rg_phone_parse(bytes + 1, size - 1, code, out)
            }
            guard let region else { return call(nil) }
            return region.withCString { call($0) }
        }
        let status = parse(&ours, false), expected = parse(&theirs, true)
        let same = status == expected && (status != RG_PHONE_OK || withUnsafeBytes(of: ours) { a in
            withUnsafeBytes(of: theirs) { b in a.elementsEqual(b) }
        })
        if !same { fatalError("\(text.debugDescription): the gate's parse (\(status.rawValue)) and libphonenumber's (\(expected.rawValue)) differ") }
    }
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
    static func main() { print("built without libFuzzer: run deploy/dev/fuzz") }
}
#endif
