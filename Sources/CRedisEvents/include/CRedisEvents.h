#ifndef RESENDGATE_CREDISEVENTS_H
#define RESENDGATE_CREDISEVENTS_H

struct redisAsyncContext;
struct event_base;

/// Attaches an async hiredis context to a libevent loop, in place of hiredis's own
/// adapter (adapters/libevent.h), with two changes for a busy connection:
/// - the read event stays registered, where hiredis's one-shot event cost a removal
///   and an addition (two epoll_ctl calls) for every batch of replies;
/// - once connected, the commands queued during a loop pass are written at the end of
///   that pass (an activated event without a descriptor), not after epoll reports the
///   socket writable; only a write the socket cannot take whole waits for writability.
/// Returns 0, or -1 when the context already has an adapter or memory ran out.
int rg_redis_attach(struct redisAsyncContext *context, struct event_base *base);

#endif
