// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/socket.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include "Connection.h"

// Input blocks: the standard size serves any ordinary request; a larger head or body
// grows its block (up to the limits) and that block is freed rather than pooled.
#define STANDARD_CAPACITY 4096
#define POOL_SIZE 16

// Connections with a pipelined request parsed per pass of the loop.
#define RESUMED_PER_CALLBACK 8

static _Thread_local struct input *pool[POOL_SIZE];
static _Thread_local int pooled;

struct input *rg_input_take(void) {
    if (pooled > 0) return pool[--pooled];
    struct input *in = rg_counted_malloc(sizeof *in + STANDARD_CAPACITY);
    if (in) {
        in->capacity = STANDARD_CAPACITY;
        in->length = 0;
    }
    return in;
}

static void input_give_back(struct input *in) {
    if (!in) return;
    if (in->capacity == STANDARD_CAPACITY && pooled < POOL_SIZE) {
        in->length = 0;
        pool[pooled++] = in;
    } else {
        rg_counted_free(in);
    }
}

void rg_input_pool_drain(void) {
    while (pooled > 0) rg_counted_free(pool[--pooled]);
}

void rg_connection_release_input(struct rg_http_connection *c) {
    input_give_back(c->in);
    c->in = NULL;
}

// How much of its client's bytes a connection may hold in its state.
size_t rg_connection_input_limit(const struct rg_http_connection *c) {
    const struct rg_http_limits *limits = &c->server->limits;
    switch (c->state) {
    case READING: return limits->max_head_bytes + limits->max_body_bytes + RG_HTTP_READ_AHEAD_LIMIT;
    case SERVING: return c->request_bytes + RG_HTTP_READ_AHEAD_LIMIT;
    default: return RG_HTTP_READ_LIMIT_WHILE_WRITING;
    }
}

// What a request being received needs its block to hold: its head and body when its
// length is known, else twice as much as now (up to the limits).
size_t rg_connection_needed_capacity(const struct rg_http_connection *c) {
    const struct rg_http_limits *limits = &c->server->limits;
    size_t doubled = c->in->capacity * 2;
    if (!c->head_parsed) return doubled < limits->max_head_bytes + 1 ? doubled : limits->max_head_bytes + 1;
    if (!c->request.chunked) return c->request.head_length + (size_t)c->request.body_length;
    return doubled < rg_connection_input_limit(c) ? doubled : rg_connection_input_limit(c);
}

void rg_connection_resume_all(evutil_socket_t fd, short what, void *argument) {
    (void)fd;
    (void)what;
    struct rg_http_server *server = argument;
    // A few a callback: each may allocate an answer, and the memory budget's pressure
    // event runs between callbacks, not inside one.
    for (int served = 0; served < RESUMED_PER_CALLBACK && server->to_resume; served++) {
        struct rg_http_connection *c = server->to_resume;
        server->to_resume = c->next_to_resume;
        c->resume_pending = 0;
        c->next_to_resume = NULL;
        if (c->state != READING || !rg_connection_process(c)) continue;
        // Still waiting for (the rest of) a request: read on, or, after the client's end
        // of input, there is nothing more to answer. Not when the request was answered
        // inside its callback and the connection is queued again: whole requests wait.
        if (c->state == READING && !c->resume_pending) rg_connection_read_on(c);
    }
    static const struct timeval now = {0, 0};
    if (server->to_resume && !event_pending(server->resume, EV_TIMEOUT, NULL)) event_add(server->resume, &now);
}

// Hands a refusal to the owner; 0 when the connection is gone once it answered.
static int refuse(struct rg_http_connection *c, int status, const char *message) {
    c->state = SERVING;
    c->held = 1;
    c->close_after = 1;
    c->head_parsed = 0;
    static const uint8_t nothing[1];
    memset(&c->request, 0, sizeof c->request);
    c->request.head = nothing;
    c->request.method = RG_HTTP_OTHER;
    c->request_bytes = c->in ? c->in->length : 0;  // nothing more of it is read as a request
    c->dispatching = 1;
    c->server->callbacks.refused(c, &c->request, status, message, c->server->context);
    return rg_connection_dispatched(c);
}

static int expects_continue(const struct rg_http_request *request) {
    for (size_t h = 0; h < request->header_count; h++) {
        const struct rg_http_header *field = &request->headers[h];
        if (field->name_length == 6 && strncasecmp((const char *)request->head + field->name, "Expect", 6) == 0
            && field->value_length == 12 && strncasecmp((const char *)request->head + field->value, "100-continue", 12) == 0) {
            return 1;
        }
    }
    return 0;
}

// Parses what has arrived; hands a whole request to the owner.
int rg_connection_process(struct rg_http_connection *c) {
    const struct rg_http_limits *limits = &c->server->limits;
    struct input *in = c->in;
    if (!in) return 1;
    if (!c->head_parsed) {
        // Empty lines (CRLF or LF) before a request line are ignored (RFC 9112 §2.2); a bare
        // CR is no line end, and is refused as the start of a request line.
        size_t blank = 0;
        for (;;) {
            if (blank < in->length && in->bytes[blank] == '\n') blank++;
            else if (blank + 1 < in->length && in->bytes[blank] == '\r' && in->bytes[blank + 1] == '\n') blank += 2;
            else break;
        }
        if (blank > 0) {
            memmove(in->bytes, in->bytes + blank, in->length - blank);
            in->length -= blank;
            c->head_scanned = 0;
        }
        if (in->length == 0) {
            c->first_byte = 0;
            rg_connection_release_input(c);
            return 1;
        }
        if (in->length == 1 && in->bytes[0] == '\r') return 1;  // perhaps an empty line's CR
        size_t end = rg_http_find_head_end(in->bytes, in->length, c->head_scanned);
        if (end == 0) {
            struct rg_parse_error error;
            if (rg_http_check_start(in->bytes, in->length, &error) != RG_PARSE_DONE) return refuse(c, error.status, error.message);
            c->head_scanned = in->length;
            if (in->length > limits->max_head_bytes) return refuse(c, 431, "the request head is too large");
            return 1;
        }
        if (end > limits->max_head_bytes) return refuse(c, 431, "the request head is too large");
        struct rg_parse_error error;
        if (rg_http_parse_head(in->bytes, end, &c->request, in->headers, RG_HTTP_MAX_HEADERS, &error) != RG_PARSE_DONE) {
            return refuse(c, error.status, error.message);
        }
        if (!c->request.chunked && c->request.body_length > limits->max_body_bytes) {
            return refuse(c, 413, "the body is too large");
        }
        c->head_parsed = 1;
        c->chunks = (struct rg_chunk_scan){0, 0, 0};
        size_t arrived = in->length - end;
        if ((c->request.chunked || arrived < c->request.body_length) && c->request.minor_version == 1
            && expects_continue(&c->request)) {
            static const char go_on[] = "HTTP/1.1 100 Continue\r\n\r\n";
            (void)send(c->fd, go_on, sizeof go_on - 1, MSG_NOSIGNAL);
        }
    }
    size_t head = c->request.head_length;
    if (c->request.chunked) {
        size_t consumed = 0;
        struct rg_parse_error error;
        int scan = rg_http_scan_chunks(in->bytes + head, in->length - head, limits->max_body_bytes, &c->chunks,
                                       &consumed, &error);
        if (scan == RG_PARSE_ERROR) return refuse(c, error.status, error.message);
        if (scan == RG_PARSE_INCOMPLETE) {
            if (in->length >= rg_connection_input_limit(c)) return refuse(c, 413, "the body is too large");
            return 1;
        }
        c->request.body_length = rg_http_join_chunks(in->bytes + head, consumed);
        c->request_bytes = head + consumed;
    } else {
        if (in->length - head < c->request.body_length) return 1;
        c->request_bytes = head + (size_t)c->request.body_length;
    }
    // The block may have moved since the head was parsed.
    c->request.head = in->bytes;
    c->request.headers = in->headers;
    c->request.body = in->bytes + head;
    c->state = SERVING;
    c->held = 1;
    c->served = 1;
    c->head_parsed = 0;
    c->head_scanned = 0;
    c->first_byte = 0;
    c->dispatching = 1;
    c->server->callbacks.request(c, &c->request, c->server->context);
    return rg_connection_dispatched(c);
}

void rg_connection_consume_request(struct rg_http_connection *c) {
    struct input *in = c->in;
    size_t used = c->request_bytes;
    c->request_bytes = 0;
    if (!in) return;
    if (used >= in->length) return rg_connection_release_input(c);
    memmove(in->bytes, in->bytes + used, in->length - used);
    in->length -= used;
}

