@testable import ResendGateServer
import Testing

@Suite("Content-Type of a send")
struct ContentTypeTests {
    @Test("JSON media types are accepted in any case and with parameters", arguments: [
        "application/json", "Application/JSON", " application/json ; charset=utf-8", "application/json;charset=UTF-8",
        "application/problem+json", "APPLICATION/VND.API+JSON",
    ])
    func acceptsJSON(_ type: String) {
        #expect(Worker.isJSON(type))
    }

    @Test("other media types are refused", arguments: [
        "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx",
        "application/json-patch", "json", "", "application/", "+json",
    ])
    func refusesOthers(_ type: String) {
        #expect(!Worker.isJSON(type))
    }
}
