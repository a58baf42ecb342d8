// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "CHTTPConnection.h"
#include "Connection.h"

uint64_t rg_coarse_now_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec + 1;
}

// A connection answered with a close waits this long at most for its client to close.
#define LINGER_NANOSECONDS (2 * 1000000000ull)

// Bytes its client sent that wait in the socket, not yet read.
static size_t unread_bytes(const struct rg_http_connection *c) {
    int waiting = 0;
    if (ioctl(c->fd, FIONREAD, &waiting) != 0 || waiting < 0) return 0;
    return (size_t)waiting;
}

static int is_receiving(const struct rg_http_connection *c) {
    return c->state == READING && (c->first_byte != 0 || rg_connection_input_length(c) > 0);
}

// A connection accepted this long ago or less that has received nothing yet is not
// taken for idle: its client is sending its request right now. (Linux's accept() takes a
// descriptor before it looks for a connection, so the accept that follows the one that
// took the last descriptor fails: without this the failure's eviction closed the very
// connection just accepted.)
#define FRESH_NANOSECONDS (20 * 1000000ull)

// Not being served: receiving a request, idle, or lingering. An idle one whose next
// request waits unread in the socket (a client asking, on a busy loop) is about to be
// served: not idle; nor, when descriptors ran out, is one just accepted.
static int is_idle(const struct rg_http_connection *c, int spare_fresh) {
    if (c->state == LINGERING) return 1;
    if (c->state != READING) return 0;
    if (is_receiving(c)) return 1;
    if (spare_fresh && !c->served && rg_coarse_now_nanoseconds() - c->last_progress < FRESH_NANOSECONDS) return 0;
    return unread_bytes(c) == 0;
}

static int evict_oldest_idle(struct rg_http_server *server, int spare_fresh) {
    for (struct rg_http_connection *c = server->oldest; c; c = c->newer) {
        if (!is_idle(c, spare_fresh)) continue;
        server->callbacks.note(RG_HTTP_EVICTED, server->context);
        rg_connection_close(c);
        return 1;
    }
    return 0;
}

size_t rg_http_server_evict_idle(struct rg_http_server *server, size_t count) {
    size_t closed = 0;
    while (closed < count && evict_oldest_idle(server, 1)) closed++;
    return closed;
}

static void on_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *address, int length,
                      void *argument) {
    (void)listener;
    (void)address;
    (void)length;
    struct rg_http_server *server = argument;
    if (server->count >= server->limits.max_connections && !evict_oldest_idle(server, 0)) {
        // Every connection is busy: the oldest event stream makes room, or the cap is
        // passed briefly rather than an answer cut.
        server->callbacks.evict_stream(server->context);
    }
    if (!rg_connection_open(server, fd)) close(fd);
}

static void sweep(evutil_socket_t fd, short what, void *argument) {
    (void)fd;
    (void)what;
    struct rg_http_server *server = argument;
    uint64_t now = rg_coarse_now_nanoseconds(), timeout = server->limits.timeout_nanoseconds;
    uint64_t linger = timeout < LINGER_NANOSECONDS ? timeout : LINGER_NANOSECONDS;
    struct rg_http_connection *next;
    for (struct rg_http_connection *c = server->oldest; c; c = next) {
        next = c->newer;
        switch (c->state) {
        case READING:
            if (c->first_byte != 0) {
                // A request must arrive whole within the timeout of its first byte,
                // however busy its trickle.
                if (now - c->first_byte <= timeout) break;
                server->callbacks.note(RG_HTTP_LATE_REQUEST, server->context);
                rg_connection_close(c);
            } else if (now - c->last_progress > timeout) {
                rg_connection_close(c);  // idle
            }
            break;
        case WRITING:
        case STREAMING:
            if (rg_connection_unsent(c) > 0 && now - c->last_progress > timeout) rg_connection_close(c);
            break;
        case LINGERING:
            if (now - c->last_progress > linger) rg_connection_close(c);
            break;
        default:
            break;  // a request being served: the client waits for us
        }
    }
}

struct rg_http_server *rg_http_server_new(struct event_base *base, struct evconnlistener *listener,
                                          struct rg_http_limits limits, struct rg_http_callbacks callbacks,
                                          void *context) {
    rg_memory_count_libevent();
    struct rg_http_server *server = rg_counted_malloc(sizeof *server);
    if (!server) return NULL;
    memset(server, 0, sizeof *server);
    server->base = base;
    server->listener = listener;
    server->limits = limits;
    server->callbacks = callbacks;
    server->context = context;
    // A quarter of the timeout, between 50 ms and 1 s: a connection is closed at most that
    // much past its deadline.
    uint64_t quarter = limits.timeout_nanoseconds / 4;
    if (quarter < 50000000u) quarter = 50000000u;
    if (quarter > 1000000000u) quarter = 1000000000u;
    server->sweep = event_new(base, -1, EV_PERSIST, sweep, server);
    struct timeval interval = {(time_t)(quarter / 1000000000u), (suseconds_t)(quarter % 1000000000u / 1000)};
    if (!server->sweep || event_add(server->sweep, &interval) != 0) {
        if (server->sweep) event_free(server->sweep);
        rg_counted_free(server);
        return NULL;
    }
    server->resume = event_new(base, -1, 0, rg_connection_resume_all, server);
    if (!server->resume) {
        event_free(server->sweep);
        rg_counted_free(server);
        return NULL;
    }
    evconnlistener_set_cb(listener, on_accept, server);
    return server;
}

void rg_http_server_stop_accepting(struct rg_http_server *server) {
    if (!server->listener) return;
    evconnlistener_free(server->listener);
    server->listener = NULL;
}

void rg_http_server_free(struct rg_http_server *server) {
    rg_http_server_stop_accepting(server);
    while (server->oldest) rg_connection_close(server->oldest);
    event_free(server->sweep);
    event_free(server->resume);
    rg_counted_free(server);
    rg_input_pool_drain();
}

int rg_http_server_busy(const struct rg_http_server *server) {
    for (const struct rg_http_connection *c = server->oldest; c; c = c->newer) {
        if (c->state == SERVING || c->state == WRITING || c->state == STREAMING) return 1;
    }
    return 0;
}

struct stuck {
    size_t held;
    struct rg_http_connection *connection;
};

static int most_first(const void *a, const void *b) {
    size_t x = ((const struct stuck *)a)->held, y = ((const struct stuck *)b)->held;
    return x < y ? 1 : x > y ? -1 : 0;
}

size_t rg_http_server_shed(struct rg_http_server *server, size_t bytes, size_t max_unsent) {
    int64_t before = rg_memory_thread_bytes();
    size_t closed = 0;
#define FREED() ((size_t)(before - rg_memory_thread_bytes() > 0 ? before - rg_memory_thread_bytes() : 0))
    // First the connections stuck with unsent bytes (an answer the socket would not take,
    // a stream whose client is more than `max_unsent` behind): they stop reading, and
    // those holding the most are closed.
    size_t count = 0;
    for (struct rg_http_connection *c = server->oldest; c; c = c->newer) {
        if (c->state == WRITING || (c->state == STREAMING && rg_connection_unsent(c) > max_unsent)) count++;
    }
    struct stuck *stuck = count ? malloc(count * sizeof *stuck) : NULL;
    size_t n = 0;
    for (struct rg_http_connection *c = server->oldest; c && stuck; c = c->newer) {
        if (!(c->state == WRITING || (c->state == STREAMING && rg_connection_unsent(c) > max_unsent))) continue;
        rg_connection_stop_reading(c);
        stuck[n++] = (struct stuck){rg_connection_unsent(c) + rg_connection_input_length(c), c};
    }
    qsort(stuck, n, sizeof *stuck, most_first);
    for (size_t i = 0; i < n && FREED() < bytes; i++, closed++) rg_connection_close(stuck[i].connection);
    free(stuck);
    // Then, oldest first, those still sending a request (its head and body are held),
    // then idle ones answered before, unless their next request waits unread. A request
    // being served, a stream whose client reads, and a connection never served (it holds
    // only itself, and its client may be asking right now) are never cut.
    for (int pass = 0; pass < 2 && FREED() < bytes; pass++) {
        struct rg_http_connection *next;
        for (struct rg_http_connection *c = server->oldest; c && FREED() < bytes; c = next) {
            next = c->newer;
            int take = pass == 0 ? is_receiving(c)
                                 : (c->state == READING && !is_receiving(c) && c->served && unread_bytes(c) == 0);
            if (!take) continue;
            rg_connection_close(c);
            closed++;
        }
    }
#undef FREED
    return closed;
}

// The accept-failure handler of the listener run by this thread (one per worker loop).
static _Thread_local rg_accept_failure_handler accept_failure_handler;
static _Thread_local void *accept_failure_context;

static void on_accept_error(struct evconnlistener *listener, void *argument) {
    (void)listener;
    (void)argument;
    int error = errno;  // libevent calls this right after the failed accept()
    if (accept_failure_handler) accept_failure_handler(error, accept_failure_context);
}

void rg_listener_on_accept_failure(struct evconnlistener *listener, rg_accept_failure_handler handler,
                                   void *context) {
    accept_failure_handler = handler;
    accept_failure_context = context;
    evconnlistener_set_error_cb(listener, handler ? on_accept_error : NULL);
}
