// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CLibevent/shim.h).
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <errno.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "CHTTPConnection.h"
#include "BufferWrite.h"

// evhttp's event callback (one static function of libevent's), taken from the first
// connection served on this thread: ours passes on what it does not handle itself.
static _Thread_local bufferevent_event_cb evhttp_event_callback;
// evhttp's write callback, taken likewise from the first answer that waited for a socket.
static _Thread_local bufferevent_data_cb evhttp_write_callback;

// What a connection may read while its answer waits for the socket, or while it carries
// an event stream: enough to see its client leave, not a flood. Its next request is read
// once the answer is written, so a client that reads nothing cannot make the server hold
// more than this (and the answer) for it, however many such connections it opens.
#define READ_LIMIT_WHILE_WRITING (4 * 1024)

static struct bufferevent *bufferevent_of(struct evhttp_request *request) {
    struct evhttp_connection *connection = evhttp_request_get_connection(request);
    return connection ? evhttp_connection_get_bufferevent(connection) : NULL;
}

// The accept-failure handler of the listener run by this thread (one per worker loop).
static _Thread_local rg_accept_failure_handler accept_failure_handler;
static _Thread_local void *accept_failure_context;

static void on_accept_error(struct evconnlistener *listener, void *http) {
    (void)listener;
    (void)http;
    int error = errno;  // libevent calls this right after the failed accept()
    if (accept_failure_handler) accept_failure_handler(error, accept_failure_context);
}

void rg_listener_on_accept_failure(struct evconnlistener *listener, rg_accept_failure_handler handler,
                                   void *context) {
    accept_failure_handler = handler;
    accept_failure_context = context;
    evconnlistener_set_error_cb(listener, handler ? on_accept_error : NULL);
}

void rg_http_limit_input(struct bufferevent *bufferevent) {
    // A read high-water mark: libevent reads no more than brings the input to it, and
    // reads again once the input drains below it (evhttp never changes watermarks).
    bufferevent_setwatermark(bufferevent, EV_READ, 0, RG_HTTP_READ_AHEAD_LIMIT);
}

size_t rg_http_unsent_bytes(struct evhttp_request *request) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    return bufferevent ? evbuffer_get_length(bufferevent_get_output(bufferevent)) : 0;
}

// The read callback while a request is served: what arrives waits in the input, which
// the read watermark (rg_http_limit_input) bounds. Its identity marks the state.
static void on_read_while_serving(struct bufferevent *bufferevent, void *connection) {
    (void)bufferevent;
    (void)connection;
}

// Never called (reading is off): as the read callback, it marks a connection whose
// client has sent its end of input while its request was served.
static void on_read_after_end(struct bufferevent *bufferevent, void *connection) {
    (void)connection;
    bufferevent_disable(bufferevent, EV_READ);
}

// The event callback while a request is served. End of input is a client that has
// sent all it will (a half-close) or has gone: reading stops, and the answer is still
// written (a client that has gone makes that write fail, and evhttp drops the
// connection then). An error (a reset) means it has gone: evhttp drops it at once.
static void on_event_while_serving(struct bufferevent *bufferevent, short what, void *connection) {
    if ((what & BEV_EVENT_READING) && (what & BEV_EVENT_EOF)) {
        bufferevent_data_cb write_callback;
        bufferevent_getcb(bufferevent, NULL, &write_callback, NULL, NULL);
        bufferevent_setcb(bufferevent, on_read_after_end, write_callback, on_event_while_serving, connection);
        bufferevent_disable(bufferevent, EV_READ);
        return;
    }
    evhttp_event_callback(bufferevent, what, connection);
}

// The write callback of a connection whose answer waited for the socket. Called once the
// answer has drained: the connection reads ahead fully again, and evhttp goes on.
static void on_write_after_waiting(struct bufferevent *bufferevent, void *connection) {
    bufferevent_setwatermark(bufferevent, EV_READ, 0, RG_HTTP_READ_AHEAD_LIMIT);
    evhttp_write_callback(bufferevent, connection);
}

// An answer waits for the socket: read little until it has drained.
static void read_little_until_written(struct bufferevent *bufferevent) {
    bufferevent_data_cb read_callback;
    bufferevent_data_cb write_callback;
    bufferevent_event_cb event_callback;
    void *argument;
    bufferevent_getcb(bufferevent, &read_callback, &write_callback, &event_callback, &argument);
    if (write_callback && write_callback != on_write_after_waiting) {
        evhttp_write_callback = write_callback;
        // evhttp puts its own callbacks back when it reads the next request.
        bufferevent_setcb(bufferevent, read_callback, on_write_after_waiting, event_callback, argument);
    }
    bufferevent_setwatermark(bufferevent, EV_READ, 0, READ_LIMIT_WHILE_WRITING);
}

int rg_http_answer_waits(struct bufferevent *bufferevent) {
    bufferevent_data_cb write_callback;
    bufferevent_getcb(bufferevent, NULL, &write_callback, NULL, NULL);
    return write_callback == on_write_after_waiting && evbuffer_get_length(bufferevent_get_output(bufferevent)) > 0;
}

void rg_http_start_stream(struct evhttp_request *request, int status, const char *reason,
                          const struct timeval *timeout) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    if (bufferevent) {
        bufferevent_set_timeouts(bufferevent, timeout, timeout);
        // A stream's client has nothing more to send: only its leaving matters.
        bufferevent_setwatermark(bufferevent, EV_READ, 0, READ_LIMIT_WHILE_WRITING);
    }
    evhttp_send_reply_start(request, status, reason);
}

void rg_http_keep_reading(struct evhttp_request *request) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    if (!bufferevent) return;
    bufferevent_data_cb write_callback;
    bufferevent_event_cb event_callback;
    void *argument;
    bufferevent_getcb(bufferevent, NULL, &write_callback, &event_callback, &argument);
    if (!event_callback || event_callback == on_event_while_serving) return;
    evhttp_event_callback = event_callback;
    // evhttp's own write callback stays; its read and event callbacks are put back when
    // it sends the answer (evhttp_write_buffer) and reads the next request.
    bufferevent_setcb(bufferevent, on_read_while_serving, write_callback, on_event_while_serving, argument);
    bufferevent_set_timeouts(bufferevent, NULL, NULL);
    bufferevent_enable(bufferevent, EV_READ);
}

void rg_http_restore_timeout(struct evhttp_request *request, const struct timeval *timeout) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    if (bufferevent) bufferevent_set_timeouts(bufferevent, timeout, timeout);
}

void rg_bufferevent_write_now(struct bufferevent *bufferevent) {
    struct evbuffer *output = bufferevent_get_output(bufferevent);
    evutil_socket_t socket = bufferevent_getfd(bufferevent);
    // As libevent's own write callback does: the buffer's front is frozen between its
    // writes so that nothing else drains it.
    evbuffer_unfreeze(output, 1);
    while (evbuffer_get_length(output) > 0) {
        if (evbuffer_write(output, socket) <= 0) break;
    }
    evbuffer_freeze(output, 1);
}

int rg_http_send_reply(struct evhttp_request *request, int status, const char *reason,
                       const struct timeval *timeout) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    if (!bufferevent) {  // no connection: evhttp frees the request, there is nothing to write
        evhttp_send_reply(request, status, reason, NULL);
        return 1;
    }
    bufferevent_data_cb read_callback;
    bufferevent_getcb(bufferevent, &read_callback, NULL, NULL, NULL);
    int input_ended = read_callback == on_read_after_end;
    bufferevent_set_timeouts(bufferevent, timeout, timeout);
    evhttp_send_reply(request, status, reason, NULL);
    struct evbuffer *output = bufferevent_get_output(bufferevent);
    rg_bufferevent_write_now(bufferevent);
    if (evbuffer_get_length(output) > 0) {
        // Full or failed: evhttp's write event carries on. evhttp reads meanwhile, and
        // would take an end of input already sent for the client leaving: not after one.
        // (Our answers after an end of input are small JSON, which a socket takes whole
        // unless the client pipelined many requests before half-closing, and evhttp drops
        // such a client anyway while it writes the earlier answers: no test reaches this.)
        if (input_ended) bufferevent_disable(bufferevent, EV_READ);
        read_little_until_written(bufferevent);
        return 0;
    }
    bufferevent_data_cb write_callback;
    void *argument;
    bufferevent_getcb(bufferevent, NULL, &write_callback, NULL, &argument);
    bufferevent_disable(bufferevent, EV_WRITE);
    if (write_callback) write_callback(bufferevent, argument);
    return 1;
}
