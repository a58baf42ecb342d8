// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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

static struct input *input_take(void) {
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

static void release_input(struct rg_http_connection *c) {
    input_give_back(c->in);
    c->in = NULL;
}

static void on_readable(evutil_socket_t fd, short what, void *argument);
static void on_writable(evutil_socket_t fd, short what, void *argument);
static void process(struct rg_http_connection *c);

struct rg_http_connection *rg_connection_open(struct rg_http_server *server, int fd) {
    struct rg_http_connection *c = rg_counted_malloc(sizeof *c);
    if (!c) return NULL;
    memset(c, 0, sizeof *c);
    c->server = server;
    c->fd = fd;
    c->read_event = event_new(server->base, fd, EV_READ | EV_PERSIST, on_readable, c);
    c->write_event = event_new(server->base, fd, EV_WRITE | EV_PERSIST, on_writable, c);
    if (!c->read_event || !c->write_event || event_add(c->read_event, NULL) != 0) {
        if (c->read_event) event_free(c->read_event);
        if (c->write_event) event_free(c->write_event);
        rg_counted_free(c);
        return NULL;
    }
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    c->reading = 1;
    c->state = READING;
    c->last_progress = rg_coarse_now_nanoseconds();
    c->older = server->newest;
    if (server->newest) server->newest->newer = c; else server->oldest = c;
    server->newest = c;
    server->count++;
    server->callbacks.note(RG_HTTP_OPENED, server->context);
    return c;
}

static void start_reading(struct rg_http_connection *c) {
    if (!c->reading && c->state != CLOSED && event_add(c->read_event, NULL) == 0) c->reading = 1;
}

void rg_connection_stop_reading(struct rg_http_connection *c) {
    if (c->reading) event_del(c->read_event);
    c->reading = 0;
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
        if (c->state == READING) process(c);
    }
    static const struct timeval now = {0, 0};
    if (server->to_resume && !event_pending(server->resume, EV_TIMEOUT, NULL)) event_add(server->resume, &now);
}

static void forget_resume(struct rg_http_connection *c) {
    struct rg_http_connection **link = &c->server->to_resume;
    while (*link && *link != c) link = &(*link)->next_to_resume;
    if (*link) *link = c->next_to_resume;
    c->resume_pending = 0;
}

void rg_connection_close(struct rg_http_connection *c) {
    if (c->state == CLOSED) return;
    struct rg_http_server *server = c->server;
    if (c->resume_pending) forget_resume(c);
    if (c->older) c->older->newer = c->newer; else server->oldest = c->newer;
    if (c->newer) c->newer->older = c->older; else server->newest = c->older;
    c->older = c->newer = NULL;
    server->count--;
    event_free(c->read_event);
    event_free(c->write_event);
    close(c->fd);
    rg_counted_free(c->out);
    c->out = NULL;
    c->out_length = c->out_sent = 0;
    release_input(c);
    c->state = CLOSED;
    server->callbacks.note(RG_HTTP_CLOSED, server->context);
    if (!c->held) {
        rg_counted_free(c);
    } else if (c->owner) {
        // The owner releases it (perhaps before this returns): never touch `c` after.
        server->callbacks.closed(c, c->owner, server->context);
    }
}

size_t rg_connection_unsent(const struct rg_http_connection *c) {
    return c->out_length - c->out_sent;
}

size_t rg_connection_input_length(const struct rg_http_connection *c) {
    return c->in ? c->in->length : 0;
}

// How much of its client's bytes a connection may hold in its state.
static size_t input_limit(const struct rg_http_connection *c) {
    const struct rg_http_limits *limits = &c->server->limits;
    switch (c->state) {
    case READING: return limits->max_head_bytes + limits->max_body_bytes + RG_HTTP_READ_AHEAD_LIMIT;
    case SERVING: return c->request_bytes + RG_HTTP_READ_AHEAD_LIMIT;
    default: return RG_HTTP_READ_LIMIT_WHILE_WRITING;
    }
}

// What a request being received needs its block to hold: its head and body when its
// length is known, else twice as much as now (up to the limits).
static size_t needed_capacity(const struct rg_http_connection *c) {
    const struct rg_http_limits *limits = &c->server->limits;
    size_t doubled = c->in->capacity * 2;
    if (!c->head_parsed) return doubled < limits->max_head_bytes + 1 ? doubled : limits->max_head_bytes + 1;
    if (!c->request.chunked) return c->request.head_length + (size_t)c->request.body_length;
    return doubled < input_limit(c) ? doubled : input_limit(c);
}

static void end_of_input(struct rg_http_connection *c) {
    // A partial request is dropped; a stream's client has left.
    if (c->state == READING || c->state == STREAMING) return rg_connection_close(c);
    // Served or written: the client half-closed after asking, or left. The answer is
    // still written; writing it tells which.
    c->input_ended = 1;
    rg_connection_stop_reading(c);
    if (c->state == WRITING) c->close_after = 1;
}

// After an answer with a close: what the client still sends is read and dropped until it
// closes, up to LINGER_BYTES (then the connection is closed anyway).
#define LINGER_BYTES (256 * 1024)

static void read_discarding(struct rg_http_connection *c) {
    static _Thread_local uint8_t scratch[4096];
    ssize_t n = recv(c->fd, scratch, sizeof scratch, 0);
    if (n > 0 && (c->request_bytes += (size_t)n) <= LINGER_BYTES) return;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    rg_connection_close(c);
}

static void on_readable(evutil_socket_t fd, short what, void *argument) {
    (void)fd;
    (void)what;
    struct rg_http_connection *c = argument;
    if (c->state == LINGERING) return read_discarding(c);
    size_t limit = input_limit(c);
    if (!c->in && !(c->in = input_take())) return rg_connection_close(c);
    struct input *in = c->in;
    if (in->length >= limit) return rg_connection_stop_reading(c);
    if (in->length == in->capacity) {
        // A view into it is out, or a whole request waits to be parsed (pipelined): read
        // on once it is answered. Else the block grows as far as the request needs.
        if (c->state != READING || c->resume_pending) return rg_connection_stop_reading(c);
        size_t grown = needed_capacity(c);
        if (grown <= in->capacity) return rg_connection_stop_reading(c);
        struct input *bigger = rg_counted_realloc(in, sizeof *in + grown);
        if (!bigger) return rg_connection_close(c);
        bigger->capacity = grown;
        c->in = in = bigger;
    }
    size_t room = (limit < in->capacity ? limit : in->capacity) - in->length;
    ssize_t n = recv(c->fd, in->bytes + in->length, room, 0);
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) rg_connection_close(c);  // a reset
        return;
    }
    if (n == 0) return end_of_input(c);
    c->last_progress = rg_coarse_now_nanoseconds();
    if (c->state == READING && c->first_byte == 0) c->first_byte = c->last_progress;
    in->length += (size_t)n;
    if (c->state == READING) process(c);
}

static void refuse(struct rg_http_connection *c, int status, const char *message) {
    c->state = SERVING;
    c->held = 1;
    c->close_after = 1;
    c->head_parsed = 0;
    static const uint8_t nothing[1];
    memset(&c->request, 0, sizeof c->request);
    c->request.head = nothing;
    c->request.method = RG_HTTP_OTHER;
    c->request_bytes = c->in ? c->in->length : 0;  // nothing more of it is read as a request
    c->server->callbacks.refused(c, &c->request, status, message, c->server->context);
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
static void process(struct rg_http_connection *c) {
    const struct rg_http_limits *limits = &c->server->limits;
    struct input *in = c->in;
    if (!in) return;
    if (!c->head_parsed) {
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        size_t blank = 0;
        while (blank < in->length && (in->bytes[blank] == '\r' || in->bytes[blank] == '\n')) blank++;
        if (blank > 0) {
            memmove(in->bytes, in->bytes + blank, in->length - blank);
            in->length -= blank;
            c->head_scanned = 0;
        }
        if (in->length == 0) {
            c->first_byte = 0;
            return release_input(c);
        }
        size_t end = rg_http_find_head_end(in->bytes, in->length, c->head_scanned);
        if (end == 0) {
            struct rg_parse_error error;
            if (rg_http_check_start(in->bytes, in->length, &error) != RG_PARSE_DONE) return refuse(c, error.status, error.message);
            c->head_scanned = in->length;
            if (in->length > limits->max_head_bytes) refuse(c, 431, "the request head is too large");
            return;
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
        c->chunks = (struct rg_chunk_scan){0, 0};
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
            if (in->length >= input_limit(c)) refuse(c, 413, "the body is too large");
            return;
        }
        c->request.body_length = rg_http_join_chunks(in->bytes + head, consumed);
        c->request_bytes = head + consumed;
    } else {
        if (in->length - head < c->request.body_length) return;
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
    c->server->callbacks.request(c, &c->request, c->server->context);
}

void rg_connection_consume_request(struct rg_http_connection *c) {
    struct input *in = c->in;
    size_t used = c->request_bytes;
    c->request_bytes = 0;
    if (!in) return;
    if (used >= in->length) return release_input(c);
    memmove(in->bytes, in->bytes + used, in->length - used);
    in->length -= used;
}

void rg_connection_answered(struct rg_http_connection *c, int close) {
    if (close || c->close_after) {
        if (c->input_ended) return rg_connection_close(c);
        // Lingering close: the client may still be sending (a body we refused); closing
        // with its bytes unread would reset the connection and could destroy the answer
        // before it reads it. Shut our side, read until it closes (the sweep ends the wait).
        shutdown(c->fd, SHUT_WR);
        release_input(c);
        c->request_bytes = 0;  // counts what is dropped
        c->state = LINGERING;
        c->last_progress = rg_coarse_now_nanoseconds();
        return start_reading(c);
    }
    c->state = READING;
    c->close_after = 0;
    c->last_progress = rg_coarse_now_nanoseconds();
    start_reading(c);
    if (c->in && c->in->length > 0 && !c->resume_pending) {
        c->first_byte = c->last_progress;  // the next request began arriving already
        c->resume_pending = 1;
        c->next_to_resume = c->server->to_resume;
        c->server->to_resume = c;
        static const struct timeval now = {0, 0};
        if (!event_pending(c->server->resume, EV_TIMEOUT, NULL)) event_add(c->server->resume, &now);
    }
}

// Copies what the socket did not take of `pieces` (after `sent` bytes) to the output.
static int queue_rest(struct rg_http_connection *c, const struct iovec *pieces, int count, size_t sent) {
    size_t total = 0;
    for (int i = 0; i < count; i++) total += pieces[i].iov_len;
    size_t rest = total - sent, unsent = c->out_length - c->out_sent;
    uint8_t *out = rg_counted_malloc(unsent + rest);
    if (!out) return 0;
    if (unsent) memcpy(out, c->out + c->out_sent, unsent);
    size_t at = unsent, skip = sent;
    for (int i = 0; i < count; i++) {
        size_t length = pieces[i].iov_len;
        if (skip >= length) { skip -= length; continue; }
        memcpy(out + at, (const uint8_t *)pieces[i].iov_base + skip, length - skip);
        at += length - skip;
        skip = 0;
    }
    rg_counted_free(c->out);
    c->out = out;
    c->out_sent = 0;
    c->out_length = at;
    event_add(c->write_event, NULL);
    return 1;
}

int rg_connection_send(struct rg_http_connection *c, const struct iovec *pieces, int count) {
    if (rg_connection_unsent(c) > 0) return queue_rest(c, pieces, count, 0);
    struct msghdr message = {.msg_iov = (struct iovec *)pieces, .msg_iovlen = (size_t)count};
    ssize_t n;
    do n = sendmsg(c->fd, &message, MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN) return 0;
    size_t sent = n > 0 ? (size_t)n : 0;
    if (sent > 0) c->last_progress = rg_coarse_now_nanoseconds();
    size_t total = 0;
    for (int i = 0; i < count; i++) total += pieces[i].iov_len;
    return sent == total ? 1 : queue_rest(c, pieces, count, sent);
}

static void flush(struct rg_http_connection *c) {
    while (c->out_sent < c->out_length) {
        ssize_t n = send(c->fd, c->out + c->out_sent, c->out_length - c->out_sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) return rg_connection_close(c);
        c->out_sent += (size_t)n;
        c->last_progress = rg_coarse_now_nanoseconds();
    }
    rg_counted_free(c->out);
    c->out = NULL;
    c->out_length = c->out_sent = 0;
    event_del(c->write_event);
    if (c->state == WRITING) {
        rg_connection_answered(c, 0);
    } else if (c->state == STREAMING && c->stream_ended) {
        rg_connection_close(c);
    }
}

static void on_writable(evutil_socket_t fd, short what, void *argument) {
    (void)fd;
    struct rg_http_connection *c = argument;
    if (what & EV_TIMEOUT) {  // kicked
        if (c->close_pending) rg_connection_close(c);
        return;
    }
    flush(c);
}
