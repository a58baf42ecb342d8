import GateRuntime
import ResendGate

/// `GET /v1/prefixes?state=blocked`: the prefixes the SMS-pumping guard refuses now, with
/// their figures. At most `GateWorker.blockedPrefixCapacity`, written into a buffer of its
/// own, so the worker's reused one never grows to a listing's size.
enum PrefixesRoute {
    static func get(_ c: Exchange) {
        guard let state = c.decoded({ () throws(APIError) in try PercentDecoding.queryValue("state", in: c.query) }) else { return }
        guard state == nil || state == "blocked" else {
            return c.respond(.invalidField("state must be \"blocked\" (the only state listed)"))
        }
        c.gate.blockedPrefixes { result in
            switch result {
            case .success(let prefixes):
                var json = JSONWriter(reservingCapacity: 64 + 256 * prefixes.count)
                json.beginObject()
                json.field("state", "blocked")
                json.key("prefixes")
                json.beginArray()
                for figures in prefixes { figures.writeJSON(to: &json) }
                json.endArray()
                json.endObject()
                c.respond(status: 200, body: json.bytes)
            case .failure(let error):
                c.respond(APIError(error))
            }
        }
    }
}

extension PrefixFigures {
    /// One prefix as `GET /v1/prefixes` lists it.
    public func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.field("prefix", prefix.text)
        json.field("calling_code", Int64(prefix.callingCode))
        json.field("purpose", purpose.name)
        json.field("blocked", blocked)
        json.field("sends", Int64(sends))
        json.field("verifications", Int64(verifications))
        json.key("conversion")
        if let conversion { json.value(fraction: conversion) } else { json.null() }
        json.key("since")
        if let since = blockedSinceMilliseconds { json.timestamp(millisecondsSince1970: since) } else { json.null() }
        WaitEncoding.write(retryAfterMilliseconds, end: "free_at", serverTime: serverTimeMilliseconds, to: &json)
        json.endObject()
    }
}
