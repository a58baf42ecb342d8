// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "CHTTPConnection.h"

static struct bufferevent *bufferevent_of(struct evhttp_request *request) {
    struct evhttp_connection *connection = evhttp_request_get_connection(request);
    return connection ? evhttp_connection_get_bufferevent(connection) : NULL;
}

// The read callback while a request is served: only bounds what waits in the buffer.
static void on_read_while_serving(struct bufferevent *bufferevent, void *connection) {
    (void)connection;
    if (evbuffer_get_length(bufferevent_get_input(bufferevent)) > RG_HTTP_READ_AHEAD_LIMIT) {
        bufferevent_disable(bufferevent, EV_READ);
    }
}

void rg_http_keep_reading(struct evhttp_request *request) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    if (!bufferevent) return;
    bufferevent_data_cb write_callback;
    bufferevent_event_cb event_callback;
    void *argument;
    bufferevent_getcb(bufferevent, NULL, &write_callback, &event_callback, &argument);
    // evhttp's own callbacks stay for writes and events (close, error, timeout); its
    // read callback is put back when it starts reading the next request.
    bufferevent_setcb(bufferevent, on_read_while_serving, write_callback, event_callback, argument);
    bufferevent_set_timeouts(bufferevent, NULL, NULL);
    bufferevent_enable(bufferevent, EV_READ);
}

void rg_http_restore_timeout(struct evhttp_request *request, const struct timeval *timeout) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    if (bufferevent) bufferevent_set_timeouts(bufferevent, timeout, timeout);
}

void rg_http_send_reply(struct evhttp_request *request, int status, const char *reason,
                        const struct timeval *timeout) {
    struct bufferevent *bufferevent = bufferevent_of(request);
    if (bufferevent) bufferevent_set_timeouts(bufferevent, timeout, timeout);
    evhttp_send_reply(request, status, reason, NULL);
    if (!bufferevent) return;  // no connection: evhttp freed the request
    struct evbuffer *output = bufferevent_get_output(bufferevent);
    evutil_socket_t socket = bufferevent_getfd(bufferevent);
    while (evbuffer_get_length(output) > 0) {
        if (evbuffer_write(output, socket) <= 0) return;  // full or failed: evhttp's write event carries on
    }
    bufferevent_data_cb write_callback;
    void *argument;
    bufferevent_getcb(bufferevent, NULL, &write_callback, NULL, &argument);
    bufferevent_disable(bufferevent, EV_WRITE);
    if (write_callback) write_callback(bufferevent, argument);
}
