#ifndef RG_CONNECTION_H
#define RG_CONNECTION_H

// The server's connections and what they hold. Internal to this target.

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <event2/util.h>

#include "CHTTPServer.h"
#include "RequestParser.h"

struct event;

/// What a connection has read of its client: the request being received or served and
/// what was read ahead of it, with the parsed header table. Taken from a small
/// per-thread pool while bytes are held; an idle connection holds none.
struct input {
    size_t capacity;
    size_t length;
    struct rg_http_header headers[RG_HTTP_MAX_HEADERS];
    uint8_t bytes[];
};

enum connection_state {
    READING,    // waiting for (the rest of) a request
    SERVING,    // a request is with the owner, not yet answered
    WRITING,    // an answer the socket did not take whole is being written
    STREAMING,  // an event stream runs
    LINGERING,  // answered with a close: written, shut for writing, reading until the client closes
    CLOSED      // the socket is closed; the struct lives until the owner releases it
};

struct rg_http_connection {
    struct rg_http_server *server;
    struct rg_http_connection *older, *newer;
    int fd;
    enum connection_state state;
    struct event *read_event;
    struct event *write_event;   // also activated by hand to resume work on the next loop pass
    struct input *in;
    size_t request_bytes;        // input bytes of the request being served
    size_t head_scanned;         // searched for the head's end up to here
    struct rg_chunk_scan chunks;
    struct rg_http_request request;
    uint8_t *out;                // unsent answer or stream bytes
    size_t out_length, out_sent;
    uint64_t first_byte;         // when the request being received began; 0: none
    uint64_t last_progress;      // last read or write
    void *owner;
    struct rg_http_connection *next_to_resume;
    unsigned head_parsed : 1, held : 1, reading : 1, input_ended : 1, close_after : 1, served : 1;
    unsigned resume_pending : 1, close_pending : 1, chunked_stream : 1, stream_ended : 1;
    unsigned dispatching : 1;    // inside the owner's request or refusal callback
    unsigned free_pending : 1;   // closed and given up meanwhile: freed once it returns
};

struct rg_http_server {
    struct event_base *base;
    struct evconnlistener *listener;
    struct rg_http_limits limits;
    struct rg_http_callbacks callbacks;
    void *context;
    struct rg_http_connection *oldest, *newest;
    size_t count;
    struct event *sweep;
    /// Connections with a pipelined request to parse, on the next loop pass (after new
    /// I/O is polled: a client that pipelines thousands must not hold the loop).
    struct event *resume;
    struct rg_http_connection *to_resume;
};

// Connection.c
struct rg_http_connection *rg_connection_open(struct rg_http_server *server, int fd);
void rg_connection_close(struct rg_http_connection *connection);
size_t rg_connection_unsent(const struct rg_http_connection *connection);
size_t rg_connection_input_length(const struct rg_http_connection *connection);
void rg_connection_stop_reading(struct rg_http_connection *connection);
/// Waiting for a request: reads on, or closes after the client's end of input.
void rg_connection_read_on(struct rg_http_connection *connection);
/// Writes `count` pieces now, or queues what the socket does not take. 0 on a socket error.
int rg_connection_send(struct rg_http_connection *connection, const struct iovec *pieces, int count);
void rg_connection_answered(struct rg_http_connection *connection, int close);
void rg_connection_consume_request(struct rg_http_connection *connection);
// Input.c: what a connection reads, and the requests parsed from it.
struct input *rg_input_take(void);
/// Frees the calling thread's pooled blocks (its server is being freed).
void rg_input_pool_drain(void);
void rg_connection_release_input(struct rg_http_connection *connection);
/// How much of its client's bytes a connection may hold in its state.
size_t rg_connection_input_limit(const struct rg_http_connection *connection);
/// What the request being received needs its block to hold.
size_t rg_connection_needed_capacity(const struct rg_http_connection *connection);
/// Parses what has arrived; hands a whole request to the owner. 0 when the connection is
/// gone once the owner's callback returned (it answered at once and the connection
/// closed): the caller must not touch it.
int rg_connection_process(struct rg_http_connection *connection);
/// Frees a connection that is closed and no longer held (its request's bytes too), or,
/// inside a callback to the owner, once that callback returns.
void rg_connection_free(struct rg_http_connection *connection);
/// After a callback to the owner: 1 if the connection is still there, else it was freed.
int rg_connection_dispatched(struct rg_http_connection *connection);
/// Parses the connections waiting in `server->to_resume` (the resume event's callback).
void rg_connection_resume_all(evutil_socket_t fd, short what, void *server);

// Response.c
/// Writes a response head into `buffer` (of `capacity`); returns its length, or 0 when
/// it does not fit.
size_t rg_response_head(char *buffer, size_t capacity, int status, const char *reason, const char *content_type,
                        int64_t content_length, const char *connection, int chunked,
                        const uint8_t *extra, size_t extra_length);

// Memory (ConnectionMemory.c): libevent's and the connections' blocks, counted per thread.
/// Makes libevent allocate through the counting wrappers (once per process, before the
/// first server allocates anything).
void rg_memory_count_libevent(void);
void *rg_counted_malloc(size_t size);
void *rg_counted_realloc(void *block, size_t size);
void rg_counted_free(void *block);

#endif
