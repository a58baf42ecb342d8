// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <stdlib.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>

#include "CHTTPEviction.h"
#include "BufferWrite.h"

void rg_http_flush_now(struct evhttp_connection *connection) {
    struct bufferevent *bufferevent = evhttp_connection_get_bufferevent(connection);
    if (!bufferevent) return;
    rg_bufferevent_write_now(bufferevent);
}

size_t rg_http_unread_bytes(struct bufferevent *bufferevent) {
    int waiting = 0;
    const evutil_socket_t socket = bufferevent_getfd(bufferevent);
    if (socket < 0 || ioctl(socket, FIONREAD, &waiting) != 0 || waiting < 0) return 0;
    return (size_t)waiting;
}

uint64_t rg_coarse_now_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec + 1;
}

struct rg_arrival_clock {
    uint64_t first_arrival;
};

static void on_input_changed(struct evbuffer *buffer, const struct evbuffer_cb_info *info, void *argument) {
    (void)buffer;
    struct rg_arrival_clock *clock = argument;
    if (info->n_added > 0 && clock->first_arrival == 0) clock->first_arrival = rg_coarse_now_nanoseconds();
}

struct rg_arrival_clock *rg_http_watch_arrivals(struct bufferevent *bufferevent) {
    // One allocation per connection (the callback's argument), freed when it closes.
    struct rg_arrival_clock *clock = calloc(1, sizeof *clock);
    if (!clock) return NULL;
    if (!evbuffer_add_cb(bufferevent_get_input(bufferevent), on_input_changed, clock)) {
        free(clock);
        return NULL;
    }
    return clock;
}

uint64_t rg_http_first_arrival(const struct rg_arrival_clock *clock) {
    return clock->first_arrival;
}

void rg_http_rearm_arrivals(struct rg_arrival_clock *clock, struct bufferevent *bufferevent) {
    clock->first_arrival = evbuffer_get_length(bufferevent_get_input(bufferevent)) > 0 ? rg_coarse_now_nanoseconds() : 0;
}

void rg_http_stop_watching_arrivals(struct bufferevent *bufferevent, struct rg_arrival_clock *clock) {
    if (!clock) return;
    if (bufferevent) evbuffer_remove_cb(bufferevent_get_input(bufferevent), on_input_changed, clock);
    free(clock);
}
