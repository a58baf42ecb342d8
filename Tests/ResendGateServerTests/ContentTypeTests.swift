@testable import ResendGateServer
import Testing

@Suite("Content-Type of a send")
struct ContentTypeTests {
    @Test("application/json is accepted in any case and with parameters", arguments: [
        "application/json", "Application/JSON", " application/json ; charset=utf-8", "application/json;charset=UTF-8",
        "APPLICATION/JSON; charset=\"utf-8\"", "application/json;",
    ])
    func acceptsJSON(_ type: String) {
        #expect(isJSON(type))
    }

    @Test("other media types are refused", arguments: [
        "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx",
        "application/json-patch", "json", "", "application/", "+json",
        // Only application/json itself: +json types are refused too.
        "application/problem+json", "APPLICATION/VND.API+JSON", "text/json", "application/json+x",
        "application/json, text/plain", "text/plain; x=application/json",
    ])
    func refusesOthers(_ type: String) {
        #expect(!isJSON(type))
    }

    private func isJSON(_ contentType: String) -> Bool {
        var contentType = contentType
        return contentType.withUTF8 { Worker.isJSON($0) }
    }
}
