#ifndef RESENDGATE_CHTTPSERVER_H
#define RESENDGATE_CHTTPSERVER_H

// The server's own HTTP/1.1 framing on a libevent loop: one per worker. It replaces
// evhttp, which allocated about 25 blocks a request, formatted and parsed headers with
// printf and scanf, and had to be bent (callbacks swapped, watermarks) to bound what a
// client makes the server hold. Here a request is read into one buffer per connection
// (taken from a small per-thread pool), parsed in place, handed to the owner as a view
// of that buffer, and answered with one writev: no allocation a request on the common
// path. Everything a client can grow is bounded here: the head, the body, what is read
// ahead while a request is served, what an answer or a stream leaves unsent, and the
// time a request may take to arrive. Confined to the loop's thread.

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evconnlistener;

struct rg_http_server;
struct rg_http_connection;

enum rg_http_method {
    RG_HTTP_GET, RG_HTTP_POST, RG_HTTP_DELETE, RG_HTTP_HEAD, RG_HTTP_PUT, RG_HTTP_OPTIONS,
    RG_HTTP_PATCH, RG_HTTP_TRACE, RG_HTTP_CONNECT, RG_HTTP_OTHER
};

/// One header field: offsets into the request's head, value without surrounding spaces.
struct rg_http_header {
    uint16_t name, name_length, value, value_length;
};

/// A parsed request, valid from the request callback until its answer is sent.
struct rg_http_request {
    const uint8_t *head;          // request line and header fields, as received
    size_t head_length;           // up to and including the blank line
    const struct rg_http_header *headers;
    size_t header_count;
    uint16_t method_offset, method_length, target_offset, target_length;
    enum rg_http_method method;
    int minor_version;            // HTTP/1.0 or HTTP/1.1
    int chunked;                  // the body came chunked (the connection closes after)
    int keep_alive;               // the client lets the connection stay open
    const uint8_t *body;
    uint64_t body_length;
};

/// The most header fields a request may have (past it: 431).
#define RG_HTTP_MAX_HEADERS 100

/// What a connection reads ahead while its request is served (a pipelined request or
/// two), and while an answer waits for a slow client or a stream runs (enough to see it
/// leave, not a flood).
#define RG_HTTP_READ_AHEAD_LIMIT (64 * 1024)
#define RG_HTTP_READ_LIMIT_WHILE_WRITING (4 * 1024)

/// What happens on the server that its owner counts.
enum rg_http_event {
    RG_HTTP_OPENED, RG_HTTP_CLOSED, RG_HTTP_EVICTED, RG_HTTP_LATE_REQUEST
};

struct rg_http_callbacks {
    /// A request arrived whole: answer it (now or later) with rg_http_respond or
    /// rg_http_start_stream. The connection reads no further request until then.
    void (*request)(struct rg_http_connection *connection, const struct rg_http_request *request, void *context);
    /// A request was refused by its framing (bad syntax, too large, smuggling): answer
    /// it with rg_http_respond (the connection closes after). `request` is empty (method
    /// RG_HTTP_OTHER, no target); `message` is static text.
    void (*refused)(struct rg_http_connection *connection, const struct rg_http_request *request, int status,
                    const char *message, void *context);
    /// A connection that has an owner (rg_http_set_owner) closed: its owner must call
    /// rg_http_release, and never touch it otherwise.
    void (*closed)(struct rg_http_connection *connection, void *owner, void *context);
    /// Every connection is busy at the cap: close the oldest event stream; 0 if none.
    int (*evict_stream)(void *context);
    /// Counts (rg_http_event, and +1 or -1 for open connections).
    void (*note)(enum rg_http_event event, void *context);
};

struct rg_http_limits {
    size_t max_head_bytes;        // past it the request is refused (431)
    size_t max_body_bytes;        // past it the request is refused (413)
    uint64_t timeout_nanoseconds; // a request must arrive whole, an idle connection
                                  // speak, and an answer progress, within it
    size_t max_connections;       // past it the oldest idle connection is closed
};

/// Serves the connections `listener` accepts (its callback is taken over) on `base`.
/// NULL when out of memory.
struct rg_http_server *rg_http_server_new(struct event_base *base, struct evconnlistener *listener,
                                          struct rg_http_limits limits, struct rg_http_callbacks callbacks,
                                          void *context);

/// Stops accepting (the listener is freed); open connections go on.
void rg_http_server_stop_accepting(struct rg_http_server *server);

/// Closes every connection (owners are told) and frees the server.
void rg_http_server_free(struct rg_http_server *server);

/// Whether an answer is still being written or a request is being served.
int rg_http_server_busy(const struct rg_http_server *server);

/// Closes up to `count` of the oldest connections that are not being served; returns
/// how many it closed.
size_t rg_http_server_evict_idle(struct rg_http_server *server, size_t count);

/// Over the memory budget: closes connections until about `bytes` are freed (those stuck
/// with unsent bytes, most first; then the oldest receiving a request; then idle ones
/// answered before). Returns how many it closed.
size_t rg_http_server_shed(struct rg_http_server *server, size_t bytes, size_t max_unsent);

/// Answers the request with `status`: `extra` holds header lines ("Name: value\r\n"),
/// the status line, Date, Content-Type, Content-Length and Connection are written here.
/// `head_only` sends the head of what `body` would be (HEAD). `close` ends the connection
/// after the answer (it also ends after a chunked request, an HTTP/1.0 one without
/// keep-alive, or a refusal). Returns 1 when the socket took it all, 0 when the rest is
/// written as the client reads, -1 when the connection had closed (nothing sent; the
/// connection is released either way).
int rg_http_respond(struct rg_http_connection *connection, int status, const char *reason,
                    const uint8_t *extra, size_t extra_length, const char *content_type,
                    const uint8_t *body, size_t body_length, int head_only, int close);

/// Starts a streamed answer (an event stream): chunked for HTTP/1.1, and the connection
/// closes when it ends. The connection stays the caller's until rg_http_end_stream or,
/// once it closed, rg_http_release. Returns 0 when the connection had closed.
int rg_http_start_stream(struct rg_http_connection *connection, int status, const char *reason,
                         const uint8_t *extra, size_t extra_length, const char *content_type);

/// Writes one piece of a stream. Unless `always`, it is dropped (0) while more than
/// `max_unsent` bytes wait for the client. 1 when queued or written.
int rg_http_stream_write(struct rg_http_connection *connection, const uint8_t *bytes, size_t length,
                         size_t max_unsent, int always);

/// Ends a stream: the last chunk, then the connection closes once it is written.
/// Releases the connection.
void rg_http_end_stream(struct rg_http_connection *connection);

/// Ends a stream now (its last chunk) and writes what it holds unsent as far as the socket takes it, then closes the
/// connection (to free its descriptor). The owner is not told; the connection is released.
void rg_http_close_now(struct rg_http_connection *connection);

/// Gives up a connection after the `closed` callback (or one whose request is dropped).
void rg_http_release(struct rg_http_connection *connection);

/// Whether the connection is still open (its client may be answered).
int rg_http_is_open(const struct rg_http_connection *connection);

/// Ties `owner` to the connection: told through `closed` if it closes while held.
void rg_http_set_owner(struct rg_http_connection *connection, void *owner);

/// Bytes queued for the client, not yet taken by the socket.
size_t rg_http_unsent_bytes(const struct rg_http_connection *connection);

/// Parses `bytes` as one request the way a connection does, all of it at hand: 1 when a
/// whole request was found (`*consumed` bytes, its chunked body joined in place), 0 when
/// more is needed, or minus the status it is refused with. For the fuzzer (deploy/dev/fuzz),
/// which also checks it against a chunked body scanned in two goes.
int rg_http_parse_whole(uint8_t *bytes, size_t length, size_t max_head, size_t max_body,
                        struct rg_http_request *request, struct rg_http_header *headers, size_t *consumed);

/// A coarse monotonic clock in nanoseconds (CLOCK_MONOTONIC_COARSE: a few ms of
/// resolution, no system call), never 0.
uint64_t rg_coarse_now_nanoseconds(void);

#endif
