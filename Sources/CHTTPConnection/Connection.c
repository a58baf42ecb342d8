// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "Connection.h"

static void on_readable(evutil_socket_t fd, short what, void *argument);
static void on_writable(evutil_socket_t fd, short what, void *argument);

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

void rg_connection_read_on(struct rg_http_connection *c) {
    if (c->input_ended) return rg_connection_close(c);  // nothing whole is left to answer
    start_reading(c);
}

void rg_connection_stop_reading(struct rg_http_connection *c) {
    if (c->reading) event_del(c->read_event);
    c->reading = 0;
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
    // A request being served keeps its bytes (the owner's view of it) until released.
    if (!c->held) rg_connection_release_input(c);
    c->state = CLOSED;
    server->callbacks.note(RG_HTTP_CLOSED, server->context);
    if (!c->held) {
        rg_connection_free(c);
    } else if (c->owner) {
        // The owner releases it (perhaps before this returns): never touch `c` after.
        server->callbacks.closed(c, c->owner, server->context);
    }
}

void rg_connection_free(struct rg_http_connection *c) {
    if (c->dispatching) {
        c->free_pending = 1;
        return;
    }
    rg_connection_release_input(c);
    rg_counted_free(c);
}

int rg_connection_dispatched(struct rg_http_connection *c) {
    c->dispatching = 0;
    if (!c->free_pending) return 1;
    rg_connection_free(c);
    return 0;
}

size_t rg_connection_unsent(const struct rg_http_connection *c) {
    return c->out_length - c->out_sent;
}

size_t rg_connection_input_length(const struct rg_http_connection *c) {
    return c->in ? c->in->length : 0;
}

static void end_of_input(struct rg_http_connection *c) {
    // A stream's client has left; nothing at all was sent.
    if (c->state == STREAMING || (c->state == READING && rg_connection_input_length(c) == 0)) {
        return rg_connection_close(c);
    }
    // The client half-closed after asking (or left): what it sent whole is still
    // answered, in order, and the connection closes after the last of it; writing the
    // answers tells whether it left.
    c->input_ended = 1;
    rg_connection_stop_reading(c);
    if (c->state == READING && !c->resume_pending) {
        if (!rg_connection_process(c)) return;
        // A partial request is dropped; but a request answered inside its callback queued
        // the connection again, and the resume answers what is still whole.
        if (c->state == READING && !c->resume_pending) rg_connection_close(c);
    }
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
    size_t limit = rg_connection_input_limit(c);
    if (!c->in && !(c->in = rg_input_take())) return rg_connection_close(c);
    struct input *in = c->in;
    if (in->length >= limit) return rg_connection_stop_reading(c);
    if (in->length == in->capacity) {
        // A view into it is out, or a whole request waits to be parsed (pipelined: the
        // resume reads on if it was not whole). Else it grows as far as the request needs.
        if (c->state != READING || c->resume_pending) return rg_connection_stop_reading(c);
        size_t grown = rg_connection_needed_capacity(c);
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
    if (c->state == READING) rg_connection_process(c);
}

void rg_connection_answered(struct rg_http_connection *c, int close) {
    if (close || c->close_after) {
        if (c->input_ended) return rg_connection_close(c);
        // Lingering close: the client may still be sending (a body we refused); closing
        // with its bytes unread would reset the connection and could destroy the answer
        // before it reads it. Shut our side, read until it closes (the sweep ends the wait).
        shutdown(c->fd, SHUT_WR);
        rg_connection_release_input(c);
        c->request_bytes = 0;  // counts what is dropped
        c->state = LINGERING;
        c->last_progress = rg_coarse_now_nanoseconds();
        return start_reading(c);
    }
    c->state = READING;
    c->close_after = 0;
    c->last_progress = rg_coarse_now_nanoseconds();
    if (c->input_ended && rg_connection_input_length(c) == 0) return rg_connection_close(c);
    if (!c->input_ended) start_reading(c);
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
