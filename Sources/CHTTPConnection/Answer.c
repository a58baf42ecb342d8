// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "Connection.h"

// A head with this much room for the owner's header lines is made on the stack.
#define STACK_HEAD 2048

static void kick_close(struct rg_http_connection *c) {
    c->close_pending = 1;
    event_active(c->write_event, EV_TIMEOUT, 1);
}

static void forget(struct rg_http_connection *c) {
    c->held = 0;
    c->owner = NULL;
    if (c->state == CLOSED) rg_connection_free(c);
}

int rg_http_respond(struct rg_http_connection *c, int status, const char *reason,
                    const uint8_t *extra, size_t extra_length, const char *content_type,
                    const uint8_t *body, size_t body_length, int head_only, int close) {
    if (c->state == CLOSED) {
        forget(c);
        return -1;
    }
    // After the client's end of input, the connection closes with its last whole request.
    int more = c->in && c->in->length > c->request_bytes;
    close = close || c->close_after || (c->input_ended && !more) || !c->request.keep_alive || c->request.chunked;
    int bodyless = status == 204 || status == 304 || status < 200;
    const char *connection = close ? "close" : (c->request.minor_version == 0 ? "keep-alive" : NULL);
    char stack[STACK_HEAD];
    char *head = stack;
    size_t capacity = sizeof stack;
    if (extra_length > STACK_HEAD - 512) {
        capacity = extra_length + 512;
        if (!(head = malloc(capacity))) {
            c->held = 0;
            rg_connection_close(c);
            return -1;
        }
    }
    size_t length = rg_response_head(head, capacity, status, reason, bodyless ? NULL : content_type,
                                     bodyless ? -1 : (int64_t)body_length, connection, 0, extra, extra_length);
    rg_connection_consume_request(c);
    c->held = 0;
    c->close_after = close;
    struct iovec pieces[2] = {{head, length}, {(void *)body, body_length}};
    int sent = rg_connection_send(c, pieces, head_only || bodyless || body_length == 0 ? 1 : 2);
    if (head != stack) free(head);
    if (!sent) {
        rg_connection_close(c);
        return -1;
    }
    if (rg_connection_unsent(c) > 0) {
        c->state = WRITING;  // reads no more than 4 KiB ahead until it has drained
        return 0;
    }
    rg_connection_answered(c, close);
    return 1;
}

int rg_http_start_stream(struct rg_http_connection *c, int status, const char *reason,
                         const uint8_t *extra, size_t extra_length, const char *content_type) {
    if (c->state == CLOSED) {
        forget(c);
        return 0;
    }
    int chunked = c->request.minor_version == 1;
    char head[STACK_HEAD];
    size_t length = rg_response_head(head, sizeof head, status, reason, content_type, -1, "close", chunked,
                                     extra, extra_length);
    c->request_bytes = c->in ? c->in->length : 0;  // nothing more is read as a request
    rg_connection_consume_request(c);
    c->state = STREAMING;
    c->chunked_stream = chunked;
    struct iovec piece = {head, length};
    if (length == 0 || !rg_connection_send(c, &piece, 1)) kick_close(c);
    return 1;
}

int rg_http_stream_write(struct rg_http_connection *c, const uint8_t *bytes, size_t length, size_t max_unsent,
                         int always) {
    if (c->state != STREAMING || c->stream_ended || c->close_pending) return 0;
    if (!always && rg_connection_unsent(c) > max_unsent) return 0;
    char size_line[24];
    static const char hex[] = "0123456789abcdef";
    size_t n = sizeof size_line - 2;
    size_line[n] = '\r';
    size_line[n + 1] = '\n';
    size_t value = length;
    do { size_line[--n] = hex[value & 15]; value >>= 4; } while (value);
    struct iovec pieces[3] = {
        {size_line + n, sizeof size_line - n}, {(void *)bytes, length}, {(void *)"\r\n", 2}};
    int sent = c->chunked_stream ? rg_connection_send(c, pieces, 3) : rg_connection_send(c, pieces + 1, 1);
    if (!sent) kick_close(c);
    return 1;
}

void rg_http_end_stream(struct rg_http_connection *c) {
    if (c->state != STREAMING) return rg_http_release(c);
    c->held = 0;
    c->owner = NULL;
    c->stream_ended = 1;
    if (c->chunked_stream && !c->close_pending) {
        struct iovec last = {(void *)"0\r\n\r\n", 5};
        if (!rg_connection_send(c, &last, 1)) return rg_connection_close(c);
    }
    if (rg_connection_unsent(c) == 0 || c->close_pending) rg_connection_close(c);
}

void rg_http_close_now(struct rg_http_connection *c) {
    if (c->state == STREAMING && c->chunked_stream && !c->stream_ended && !c->close_pending) {
        struct iovec last = {(void *)"0\r\n\r\n", 5};
        c->stream_ended = 1;
        if (!rg_connection_send(c, &last, 1)) return rg_http_release(c);
    }
    if (c->state != CLOSED && rg_connection_unsent(c) > 0) {
        (void)send(c->fd, c->out + c->out_sent, rg_connection_unsent(c), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    rg_http_release(c);
}

void rg_http_release(struct rg_http_connection *c) {
    if (c->state != CLOSED) {
        c->held = 0;
        c->owner = NULL;
        return rg_connection_close(c);
    }
    forget(c);
}

int rg_http_is_open(const struct rg_http_connection *c) {
    return c->state != CLOSED && !c->close_pending;
}

void rg_http_set_owner(struct rg_http_connection *c, void *owner) {
    c->owner = owner;
}

size_t rg_http_unsent_bytes(const struct rg_http_connection *c) {
    return c->state == CLOSED ? 0 : rg_connection_unsent(c);
}
