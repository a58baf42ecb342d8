// Chunked request bodies (RFC 9112 7.1), scanned as they arrive and joined in place:
// the part of the parser after the head (RequestParser.h).

#include <string.h>

#include "RequestParser.h"

// The longest chunk size line (with its extension) or trailer line: past it, refused, so
// that a line trickled a byte at a time is never rescanned for long.
#define MAX_SIZE_LINE 1024

static int hex_value(uint8_t byte) {
    if (byte >= '0' && byte <= '9') return byte - '0';
    if (byte >= 'a' && byte <= 'f') return byte - 'a' + 10;
    if (byte >= 'A' && byte <= 'F') return byte - 'A' + 10;
    return -1;
}

// A chunk's size line at `at`: 1 to 16 hex digits, an optional extension, CRLF. Sets
// `*size` and `*data` (where the data starts).
static int read_size_line(const uint8_t *bytes, size_t length, size_t at, uint64_t *size, size_t *data,
                          struct rg_parse_error *error) {
    size_t i = at;
    uint64_t value = 0;
    while (i < length && hex_value(bytes[i]) >= 0) {
        if (i - at == 16) return rg_http_refuse(error, 400, "a chunk size is not 1 to 16 hex digits");
        value = value << 4 | (uint64_t)hex_value(bytes[i]);
        i++;
    }
    if (i == length) return RG_PARSE_INCOMPLETE;
    if (i == at) return rg_http_refuse(error, 400, "a chunk size is not 1 to 16 hex digits");
    if (bytes[i] == ';') {  // a chunk extension, ignored
        while (i < length && i - at <= MAX_SIZE_LINE && bytes[i] != '\r' && rg_http_is_value_byte(bytes[i])) i++;
        if (i - at > MAX_SIZE_LINE) return rg_http_refuse(error, 400, "a chunk size line is too long");
        if (i == length) return RG_PARSE_INCOMPLETE;
    }
    if (bytes[i] != '\r') return rg_http_refuse(error, 400, "a chunk size line does not end with CRLF");
    if (i + 1 == length) return RG_PARSE_INCOMPLETE;
    if (bytes[i + 1] != '\n') return rg_http_refuse(error, 400, "a chunk size line does not end with CRLF");
    *size = value;
    *data = i + 2;
    return RG_PARSE_DONE;
}

int rg_http_scan_chunks(const uint8_t *bytes, size_t length, size_t max_body, struct rg_chunk_scan *scan,
                        size_t *consumed, struct rg_parse_error *error) {
    while (!scan->in_trailer) {
        uint64_t size = 0;
        size_t data = 0;
        int line = read_size_line(bytes, length, scan->offset, &size, &data, error);
        if (line != RG_PARSE_DONE) return line;
        if (size > max_body - scan->body_length) return rg_http_refuse(error, 413, "the body is too large");
        if (size == 0) {
            scan->in_trailer = 1;
            scan->offset = data;
            break;
        }
        if (length - data < size + 2) return RG_PARSE_INCOMPLETE;
        if (bytes[data + size] != '\r' || bytes[data + size + 1] != '\n') {
            return rg_http_refuse(error, 400, "a chunk's data does not end with CRLF");
        }
        scan->body_length += size;
        scan->offset = data + size + 2;
    }
    // The trailer: field lines (ignored) up to an empty line; each is scanned once. A line
    // that is not `name: value` (a request line, a folded line) is refused (RFC 9112
    // §7.1.2): it could be the head of a request pipelined behind, read as a trailer.
    for (;;) {
        size_t at = scan->offset, i = at;
        while (i < length && bytes[i] != '\r') {
            if (!rg_http_is_value_byte(bytes[i])) return rg_http_refuse(error, 400, "a chunked trailer has a control character");
            i++;
        }
        if (i - at > MAX_SIZE_LINE) return rg_http_refuse(error, 400, "a chunked trailer line is too long");
        if (i + 1 >= length) return RG_PARSE_INCOMPLETE;
        if (bytes[i + 1] != '\n') return rg_http_refuse(error, 400, "a chunked trailer line does not end with CRLF");
        if (i == at) {
            *consumed = i + 2;
            return RG_PARSE_DONE;
        }
        size_t colon = at;
        while (colon < i && rg_http_is_token_byte(bytes[colon])) colon++;
        if (colon == at || colon == i || bytes[colon] != ':') {
            return rg_http_refuse(error, 400, "a chunked trailer line is not a field line (name: value)");
        }
        scan->offset = i + 2;
    }
}

size_t rg_http_join_chunks(uint8_t *bytes, size_t encoded_length) {
    size_t read = 0, written = 0;
    struct rg_parse_error ignored;
    for (;;) {
        uint64_t size = 0;
        size_t data = 0;
        if (read_size_line(bytes, encoded_length, read, &size, &data, &ignored) != RG_PARSE_DONE || size == 0) {
            return written;
        }
        memmove(bytes + written, bytes + data, size);
        written += size;
        read = data + size + 2;
    }
}
