#include <string.h>
#include <strings.h>

#include "RequestParser.h"

size_t rg_http_find_head_end(const uint8_t *bytes, size_t length, size_t from) {
    // A line ends with LF (CRLF, or a bare LF, which RFC 9112 §2.2 lets a server
    // accept); the head ends with an empty line.
    size_t start = from > 2 ? from - 2 : 0;
    for (size_t i = start; i < length; i++) {
        if (bytes[i] != '\n') continue;
        if (i + 1 < length && bytes[i + 1] == '\n') return i + 2;
        if (i + 2 < length && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') return i + 3;
    }
    return 0;
}

// The end of the line starting at `at` (the index of its LF), or `length` when the line
// has a control other than tab (a bare CR included): the caller refuses it.
static size_t line_end(const uint8_t *bytes, size_t at, size_t length, int *bad) {
    for (size_t i = at; i < length; i++) {
        if (bytes[i] == '\n') return i;
        if (bytes[i] == '\r' && i + 1 < length && bytes[i + 1] == '\n') continue;
        if (!rg_http_is_value_byte(bytes[i])) break;
    }
    *bad = 1;
    return length;
}

// The line's content end, without its CR.
static size_t content_end(const uint8_t *bytes, size_t start, size_t lf) {
    return lf > start && bytes[lf - 1] == '\r' ? lf - 1 : lf;
}

static enum rg_http_method method_of(const uint8_t *text, size_t length) {
    static const struct { const char *name; enum rg_http_method method; } known[] = {
        {"GET", RG_HTTP_GET}, {"POST", RG_HTTP_POST}, {"DELETE", RG_HTTP_DELETE}, {"HEAD", RG_HTTP_HEAD},
        {"PUT", RG_HTTP_PUT}, {"OPTIONS", RG_HTTP_OPTIONS}, {"PATCH", RG_HTTP_PATCH}, {"TRACE", RG_HTTP_TRACE},
        {"CONNECT", RG_HTTP_CONNECT},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strlen(known[i].name) == length && memcmp(known[i].name, text, length) == 0) return known[i].method;
    }
    return RG_HTTP_OTHER;
}

int rg_http_check_start(const uint8_t *bytes, size_t length, struct rg_parse_error *error) {
    size_t i = 0;
    while (i < length && i <= 32 && rg_http_is_token_byte(bytes[i])) i++;
    if (i == length) return RG_PARSE_DONE;
    if (i == 0 || i > 32 || bytes[i] != ' ') return rg_http_refuse(error, 400, "the request line is not METHOD target HTTP/1.1");
    return RG_PARSE_DONE;
}

static int parse_request_line(const uint8_t *bytes, size_t end, struct rg_http_request *request,
                              struct rg_parse_error *error) {
    size_t i = 0;
    while (i < end && rg_http_is_token_byte(bytes[i])) i++;
    if (i == 0 || i > 32 || i >= end || bytes[i] != ' ') return rg_http_refuse(error, 400, "the request line is not METHOD target HTTP/1.1");
    request->method_offset = 0;
    request->method_length = (uint16_t)i;
    request->method = method_of(bytes, i);
    size_t target = ++i;
    while (i < end && bytes[i] > 0x20 && bytes[i] != 0x7F) i++;
    if (i == target || i >= end || bytes[i] != ' ') return rg_http_refuse(error, 400, "the request line is not METHOD target HTTP/1.1");
    request->target_offset = (uint16_t)target;
    request->target_length = (uint16_t)(i - target);
    i++;
    if (end - i != 8 || memcmp(bytes + i, "HTTP/1.", 7) != 0 || (bytes[i + 7] != '0' && bytes[i + 7] != '1')) {
        return rg_http_refuse(error, 400, "only HTTP/1.0 and HTTP/1.1 are served");
    }
    request->minor_version = bytes[i + 7] - '0';
    return RG_PARSE_DONE;
}

static int equals_ignoring_case(const uint8_t *text, size_t length, const char *literal) {
    return strlen(literal) == length && strncasecmp((const char *)text, literal, length) == 0;
}

// Whether a comma-separated field value lists `option` (Connection: keep-alive, close).
static int lists(const uint8_t *value, size_t length, const char *option) {
    size_t start = 0;
    while (start < length) {
        size_t end = start;
        while (end < length && value[end] != ',') end++;
        size_t a = start, b = end;
        while (a < b && (value[a] == ' ' || value[a] == '\t')) a++;
        while (b > a && (value[b - 1] == ' ' || value[b - 1] == '\t')) b--;
        if (equals_ignoring_case(value + a, b - a, option)) return 1;
        start = end + 1;
    }
    return 0;
}

// What the header fields say of the body and the connection, checked the way a proxy in
// front could read them otherwise: one Content-Length of digits only, or exactly
// `Transfer-Encoding: chunked` on HTTP/1.1, never both, never twice; one Host, one
// Authorization, one Content-Type (a proxy and the gate could each take another); no
// body on a method that has none (HEAD, TRACE, CONNECT, an unknown one).
static int read_framing(const uint8_t *bytes, struct rg_http_request *request, struct rg_parse_error *error) {
    int lengths = 0, encodings = 0, hosts = 0, authorizations = 0, content_types = 0, close = 0, keep_alive = 0;
    uint64_t body_length = 0;
    for (size_t h = 0; h < request->header_count; h++) {
        const struct rg_http_header *field = &request->headers[h];
        const uint8_t *name = bytes + field->name, *value = bytes + field->value;
        if (equals_ignoring_case(name, field->name_length, "Content-Length")) {
            lengths++;
            if (field->value_length == 0) return rg_http_refuse(error, 400, "Content-Length must be decimal digits only");
            body_length = 0;
            for (size_t i = 0; i < field->value_length; i++) {
                if (value[i] < '0' || value[i] > '9') return rg_http_refuse(error, 400, "Content-Length must be decimal digits only");
                body_length = body_length > UINT64_MAX / 100 ? UINT64_MAX : body_length * 10 + (uint64_t)(value[i] - '0');
            }
        } else if (equals_ignoring_case(name, field->name_length, "Transfer-Encoding")) {
            encodings++;
            if (!equals_ignoring_case(value, field->value_length, "chunked")) {
                return rg_http_refuse(error, 400, "the only transfer coding accepted is chunked");
            }
        } else if (equals_ignoring_case(name, field->name_length, "Host")) {
            hosts++;
        } else if (equals_ignoring_case(name, field->name_length, "Authorization")) {
            authorizations++;
        } else if (equals_ignoring_case(name, field->name_length, "Content-Type")) {
            content_types++;
        } else if (equals_ignoring_case(name, field->name_length, "Connection")) {
            close |= lists(value, field->value_length, "close");
            keep_alive |= lists(value, field->value_length, "keep-alive");
        }
    }
    // RFC 9112 §3.2: a request naming its Host twice is refused.
    if (hosts > 1) return rg_http_refuse(error, 400, "the request names its Host more than once");
    if (authorizations > 1) return rg_http_refuse(error, 400, "the request sends Authorization more than once");
    if (content_types > 1) return rg_http_refuse(error, 400, "the request names its Content-Type more than once");
    // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message is faulty framing; the
    // connection closes after the refusal.
    if (encodings > 0 && request->minor_version == 0) {
        return rg_http_refuse(error, 400, "HTTP/1.0 has no Transfer-Encoding: send a Content-Length");
    }
    if (lengths > 1 || encodings > 1 || (lengths > 0 && encodings > 0)) {
        return rg_http_refuse(error, 400, "ambiguous message framing: send one Content-Length or chunked encoding, not both");
    }
    int has_body = encodings > 0 || body_length > 0;
    // RFC 9110 §9.3.6: CONNECT has no content either (a Content-Length of 0 is none).
    if (has_body && (request->method == RG_HTTP_HEAD || request->method == RG_HTTP_TRACE
                     || request->method == RG_HTTP_CONNECT || request->method == RG_HTTP_OTHER)) {
        return rg_http_refuse(error, 400, "this method's request has no body");
    }
    request->chunked = encodings > 0;
    request->body_length = body_length;
    request->keep_alive = request->minor_version == 1 ? !close : keep_alive && !close;
    return RG_PARSE_DONE;
}

int rg_http_parse_head(const uint8_t *bytes, size_t length, struct rg_http_request *request,
                       struct rg_http_header *headers, size_t max_headers, struct rg_parse_error *error) {
    memset(request, 0, sizeof *request);
    request->head = bytes;
    request->head_length = length;
    request->headers = headers;
    if (length > UINT16_MAX) return rg_http_refuse(error, 431, "the request head is too large");
    int bad = 0;
    size_t lf = line_end(bytes, 0, length, &bad);
    if (bad) return rg_http_refuse(error, 400, "the request line has a control character");
    if (parse_request_line(bytes, content_end(bytes, 0, lf), request, error) != RG_PARSE_DONE) return RG_PARSE_ERROR;
    size_t start = lf + 1;
    for (;;) {
        lf = line_end(bytes, start, length, &bad);
        if (bad) return rg_http_refuse(error, 400, "a header field has a control character (a bare CR, NUL)");
        size_t end = content_end(bytes, start, lf);
        if (end == start) break;  // the blank line
        if (bytes[start] == ' ' || bytes[start] == '\t') {
            // obs-fold. RFC 9112 §5.2 lets a server refuse it or unfold it; a proxy in front
            // that strips the leading space would read ` Transfer-Encoding: chunked` as a
            // field of its own where unfolding makes it part of the value before: refused.
            return rg_http_refuse(error, 400, "a header field is folded over lines (obs-fold)");
        }
        size_t colon = start;
        while (colon < end && bytes[colon] != ':') colon++;
        if (colon == end) return rg_http_refuse(error, 400, "a header field has no colon");
        for (size_t i = start; i < colon; i++) {
            if (!rg_http_is_token_byte(bytes[i])) {
                return rg_http_refuse(error, 400, "a header name is not a token (no spaces, controls or separators)");
            }
        }
        if (colon == start) return rg_http_refuse(error, 400, "a header name is not a token (no spaces, controls or separators)");
        size_t value = colon + 1, value_end = end;
        while (value < value_end && (bytes[value] == ' ' || bytes[value] == '\t')) value++;
        while (value_end > value && (bytes[value_end - 1] == ' ' || bytes[value_end - 1] == '\t')) value_end--;
        if (request->header_count == max_headers) return rg_http_refuse(error, 431, "the request has too many header fields");
        headers[request->header_count++] = (struct rg_http_header){
            (uint16_t)start, (uint16_t)(colon - start), (uint16_t)value, (uint16_t)(value_end - value)};
        start = lf + 1;
    }
    return read_framing(bytes, request, error);
}

int rg_http_parse_whole(uint8_t *bytes, size_t length, size_t max_head, size_t max_body,
                        struct rg_http_request *request, struct rg_http_header *headers, size_t *consumed) {
    struct rg_parse_error error;
    if (rg_http_check_start(bytes, length, &error) != RG_PARSE_DONE) return -error.status;
    size_t end = rg_http_find_head_end(bytes, length, 0);
    if (end == 0) return length > max_head ? -431 : 0;
    if (end > max_head) return -431;
    if (rg_http_parse_head(bytes, end, request, headers, RG_HTTP_MAX_HEADERS, &error) != RG_PARSE_DONE) {
        return -error.status;
    }
    if (!request->chunked) {
        if (request->body_length > max_body) return -413;
        if (length - end < request->body_length) return 0;
        *consumed = end + (size_t)request->body_length;
        request->body = bytes + end;
        return 1;
    }
    struct rg_chunk_scan scan = {0, 0, 0};
    size_t encoded = 0;
    int result = rg_http_scan_chunks(bytes + end, length - end, max_body, &scan, &encoded, &error);
    if (result != RG_PARSE_DONE) return result == RG_PARSE_ERROR ? -error.status : 0;
    request->body = bytes + end;
    request->body_length = rg_http_join_chunks(bytes + end, encoded);
    *consumed = end + encoded;
    return 1;
}
