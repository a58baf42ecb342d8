// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CLibevent/shim.h).
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <stdlib.h>

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "CRedisEvents.h"

typedef struct rg_redis_events {
    redisAsyncContext *context;
    struct event *read;   // persistent EV_READ
    struct event *write;  // persistent EV_WRITE: while connecting, or when the socket was full
    struct event *flush;  // no descriptor: activated to write at the end of this loop pass
    int reading, writing, flush_pending;
} rg_redis_events;

// The events whose flush is running on this thread: hiredis asks for writability from
// inside that write only when the socket did not take everything.
static __thread rg_redis_events *flushing;

static void on_read(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    redisAsyncHandleRead(((rg_redis_events *)arg)->context);
}

static void on_write(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    redisAsyncHandleWrite(((rg_redis_events *)arg)->context);
}

static void on_flush(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    rg_redis_events *events = arg;
    events->flush_pending = 0;
    flushing = events;
    // May free the context and `events` (a failed write disconnects): not touched after.
    redisAsyncHandleWrite(events->context);
    flushing = NULL;
}

static void add_read(void *data) {
    rg_redis_events *events = data;
    if (events->reading) return;
    events->reading = 1;
    event_add(events->read, NULL);
}

static void del_read(void *data) {
    rg_redis_events *events = data;
    if (!events->reading) return;
    events->reading = 0;
    event_del(events->read);
}

static void add_write(void *data) {
    rg_redis_events *events = data;
    // Waiting for writability already (connecting, or the socket was full): a flush now
    // would only meet EAGAIN.
    if (events->writing) return;
    if ((events->context->c.flags & REDIS_CONNECTED) && flushing != events) {
        if (events->flush_pending) return;
        events->flush_pending = 1;
        event_active(events->flush, EV_WRITE, 0);
        return;
    }
    // Connecting (hiredis learns of the connection on writability), or the socket is full.
    events->writing = 1;
    event_add(events->write, NULL);
}

static void del_write(void *data) {
    rg_redis_events *events = data;
    if (!events->writing) return;
    events->writing = 0;
    event_del(events->write);
}

static void cleanup(void *data) {
    rg_redis_events *events = data;
    if (flushing == events) flushing = NULL;
    event_free(events->read);
    event_free(events->write);
    event_free(events->flush);
    free(events);
}

int rg_redis_attach(struct redisAsyncContext *context, struct event_base *base) {
    if (context == NULL || base == NULL || context->ev.data != NULL) return -1;
    rg_redis_events *events = calloc(1, sizeof(*events));
    if (events == NULL) return -1;
    events->context = context;
    const int fd = context->c.fd;
    events->read = event_new(base, fd, EV_READ | EV_PERSIST, on_read, events);
    events->write = event_new(base, fd, EV_WRITE | EV_PERSIST, on_write, events);
    events->flush = event_new(base, -1, 0, on_flush, events);
    if (events->read == NULL || events->write == NULL || events->flush == NULL) {
        if (events->read) event_free(events->read);
        if (events->write) event_free(events->write);
        if (events->flush) event_free(events->flush);
        free(events);
        return -1;
    }
    context->ev.addRead = add_read;
    context->ev.delRead = del_read;
    context->ev.addWrite = add_write;
    context->ev.delWrite = del_write;
    context->ev.cleanup = cleanup;
    context->ev.data = events;
    // As hiredis's adapter: read and wait for the connection to complete.
    add_read(events);
    add_write(events);
    return 0;
}
