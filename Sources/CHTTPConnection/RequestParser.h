#ifndef RG_REQUEST_PARSER_H
#define RG_REQUEST_PARSER_H

// The HTTP/1.1 request parser of the server's own framing: pure functions over bytes
// (no allocation, no I/O), so that a fuzzer and the connection code share them.
// Internal to this target.

#include <stddef.h>
#include <stdint.h>

#include "CHTTPServer.h"

enum { RG_PARSE_ERROR = -1, RG_PARSE_INCOMPLETE = 0, RG_PARSE_DONE = 1 };

/// Why a request was refused: an HTTP status and a sentence for the client.
struct rg_parse_error {
    int status;
    const char *message;
};

/// A field value's bytes: visible ASCII, space, tab, and obs-text (0x80-0xFF); never a
/// control (NUL, a bare CR).
static inline int rg_http_is_value_byte(uint8_t byte) {
    return byte == '\t' || (byte >= 0x20 && byte != 0x7F);
}

/// RFC 9110 tchar: what a method and a field name are made of.
static inline int rg_http_is_token_byte(uint8_t byte) {
    if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') || (byte >= '0' && byte <= '9')) return 1;
    switch (byte) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~': return 1;
    default: return 0;
    }
}

/// Sets `error` and returns RG_PARSE_ERROR.
static inline int rg_http_refuse(struct rg_parse_error *error, int status, const char *message) {
    error->status = status;
    error->message = message;
    return RG_PARSE_ERROR;
}

/// The offset just past the blank line that ends a request head in `bytes`, or 0 when it
/// has not arrived. `from` is where the last search stopped (bytes before it held no
/// end), so a head trickled a byte at a time is searched once in all.
size_t rg_http_find_head_end(const uint8_t *bytes, size_t length, size_t from);

/// Whether what has arrived of a head can start a request line (a method of at most 32
/// token bytes, then a space): RG_PARSE_ERROR for junk, seen before the head ends.
int rg_http_check_start(const uint8_t *bytes, size_t length, struct rg_parse_error *error);

/// Parses a whole head (`length` is what rg_http_find_head_end returned) into `request`
/// (method, target, version, headers as offsets into `bytes`) and checks the message
/// framing a proxy in front could read otherwise (request smuggling): RG_PARSE_DONE, or
/// RG_PARSE_ERROR with `error` set. `request->body_length` is the Content-Length (or
/// UINT64_MAX past 19 digits); `request->chunked` tells chunked framing. A folded header
/// line (obs-fold) is refused.
int rg_http_parse_head(const uint8_t *bytes, size_t length, struct rg_http_request *request,
                       struct rg_http_header *headers, size_t max_headers, struct rg_parse_error *error);

/// Where a chunked body's scan stands, so that more bytes resume it.
struct rg_chunk_scan {
    size_t offset;       // next chunk's size line (or trailer line), from the body's start
    size_t body_length;  // data bytes in the chunks before it
    int in_trailer;      // the last chunk was read: trailer lines follow
};

/// Scans a chunked body (`bytes` starts right after the head): RG_PARSE_DONE with
/// `*consumed` set to its encoded length (last chunk and trailer included),
/// RG_PARSE_INCOMPLETE, or RG_PARSE_ERROR (a size that is not 1 to 16 hex digits, a
/// missing CRLF, a size or trailer line over 1 KiB, a trailer line that is not a field
/// line `name: value`, or data past `max_body`: 413).
int rg_http_scan_chunks(const uint8_t *bytes, size_t length, size_t max_body, struct rg_chunk_scan *scan,
                        size_t *consumed, struct rg_parse_error *error);

/// Moves the data of a complete chunked body (scanned whole) to its start, in place;
/// returns its length.
size_t rg_http_join_chunks(uint8_t *bytes, size_t encoded_length);

#endif
