#ifndef RG_BUFFER_WRITE_H
#define RG_BUFFER_WRITE_H

struct bufferevent;

/// Writes what `bufferevent`'s output holds to its socket now, as far as the socket takes
/// it, the way libevent's own write callback does (the buffer's front frozen between its
/// writes). Internal to this target: the answers written at once and the streams flushed
/// before an eviction share it.
void rg_bufferevent_write_now(struct bufferevent *bufferevent);

#endif
