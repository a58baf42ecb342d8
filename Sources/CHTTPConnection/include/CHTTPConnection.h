#ifndef RESENDGATE_CHTTPCONNECTION_H
#define RESENDGATE_CHTTPCONNECTION_H

#include <stddef.h>
#include <stdint.h>

#include "CHTTPServer.h"

struct event;
struct evconnlistener;

/// Called on the listener's loop thread when accept() fails with an error libevent does
/// not retry by itself (EMFILE, ENFILE, ENOBUFS, ENOMEM, ...), with that errno.
typedef void (*rg_accept_failure_handler)(int error, void *context);

/// Sets what happens when accept() fails on `listener`. Without it libevent logs a
/// line per failed call and retries on every loop pass while the connection waits in
/// the backlog: out of descriptors, a busy loop that floods stderr. One listener per
/// thread: the handler is kept per thread (libevent passes an error callback no
/// argument of its own), so call this on the loop thread that runs `listener`.
void rg_listener_on_accept_failure(struct evconnlistener *listener, rg_accept_failure_handler handler,
                                   void *context);

/// What the calling thread's connections and libevent hold, in bytes: on a worker's loop
/// thread, everything its clients make it keep (connections, request buffers, unsent
/// answers and stream frames, libevent's events). Counted from the first
/// rg_http_server_new on, which makes libevent allocate through the same counting
/// wrappers of malloc, realloc and free as the connections.
int64_t rg_memory_thread_bytes(void);

/// On the calling thread: once what is held passes `limit` bytes, `pressure` is
/// made active and the loop is told to go on to it as soon as the running callback
/// returns (give it a higher priority than every other event), once until
/// rg_memory_rearm. NULL stops watching; call that before freeing `pressure`.
void rg_memory_watch(struct event *pressure, int64_t limit);

/// After `pressure` ran: the next crossing of the limit activates it again.
void rg_memory_rearm(void);

#endif
