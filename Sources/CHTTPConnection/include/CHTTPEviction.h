#ifndef RESENDGATE_CHTTPEVICTION_H
#define RESENDGATE_CHTTPEVICTION_H

#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct evhttp_connection;

/// Writes what `connection` holds unsent (its last event, say) straight to
/// its socket, as far as the socket takes it now, without waiting: a stream about to be
/// closed to free its descriptor gets its final frame if its client reads at all.
void rg_http_flush_now(struct evhttp_connection *connection);

/// When the request a connection is receiving began: the time its first byte arrived.
struct rg_arrival_clock;

/// Starts noting when bytes arrive on `bufferevent`'s input (not when evhttp takes them
/// out): the first arrival after a rearm is kept. NULL if out of memory.
struct rg_arrival_clock *rg_http_watch_arrivals(struct bufferevent *bufferevent);

/// The rg_coarse_now_nanoseconds() of the first arrival since the last rearm; 0 if none.
uint64_t rg_http_first_arrival(const struct rg_arrival_clock *clock);

/// A request was taken whole: what arrives from now on belongs to the next one (now, if
/// some of it already waits in the input).
void rg_http_rearm_arrivals(struct rg_arrival_clock *clock, struct bufferevent *bufferevent);

/// Undoes rg_http_watch_arrivals and frees `clock` (the connection is closing).
void rg_http_stop_watching_arrivals(struct bufferevent *bufferevent, struct rg_arrival_clock *clock);

/// Bytes the client sent that wait in the socket, not yet read by libevent (FIONREAD);
/// 0 when there are none or the socket cannot tell.
size_t rg_http_unread_bytes(struct bufferevent *bufferevent);

/// A coarse monotonic clock in nanoseconds (CLOCK_MONOTONIC_COARSE: a few ms of
/// resolution, no system call), never 0.
uint64_t rg_coarse_now_nanoseconds(void);

#endif
