#ifndef RESENDGATE_CHTTPCONNECTION_H
#define RESENDGATE_CHTTPCONNECTION_H

#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct event;
struct evconnlistener;
struct evhttp_request;
struct timeval;

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

/// Call once on each connection's bufferevent as it is made: bounds what the connection
/// may hold of what its client sent to RG_HTTP_READ_AHEAD_LIMIT bytes, whatever evhttp is
/// doing with it. evhttp 2.1 keeps reading a connection while it writes an answer or a
/// stream (to notice a close), and kept all it read: a client that sends and never reads
/// filled memory. Past the limit the connection is not read until evhttp takes what it
/// holds (its next request, once the answer is written); a connection stuck that way with
/// an unwritten answer is closed by the write timeout (--connection-timeout).
void rg_http_limit_input(struct bufferevent *bufferevent);

/// What the answer on `request`'s connection still has to write (bytes evhttp holds, not
/// counting what the kernel's socket buffer took); 0 when it has no connection.
size_t rg_http_unsent_bytes(struct evhttp_request *request);

/// Call from the request callback, before the answer is known. evhttp 2.1 stops
/// reading a connection while its request is served and starts again once the
/// answer is written: on epoll that removes the descriptor and adds it back, two
/// epoll_ctl calls per request. This keeps it registered: what arrives meanwhile
/// waits in the connection's buffer (evhttp reads it once the answer is written), up
/// to RG_HTTP_READ_AHEAD_LIMIT bytes (past that, reading stops until then). A reset
/// is seen as it happens and drops the connection; an end of input (a client that
/// half-closed after its request, or one that left) only stops reading, and writing
/// the answer tells which. The connection's timeouts are off while its request is
/// served (the client is waiting for us, not silent): the answer puts them back
/// (rg_http_send_reply, or rg_http_restore_timeout before evhttp_send_reply_start).
void rg_http_keep_reading(struct evhttp_request *request);

/// What a connection may hold of its client's bytes at any time: a pipelined request or
/// two. Above evhttp's own header limit (4 x 8 KiB), so a request line or header block
/// that evhttp refuses is always seen whole before reading stops.
#define RG_HTTP_READ_AHEAD_LIMIT (64 * 1024)

/// Puts back the connection's read and write timeouts (evhttp's one connection
/// timeout) before an answer is started.
void rg_http_restore_timeout(struct evhttp_request *request, const struct timeval *timeout);

/// rg_http_restore_timeout, evhttp_send_reply, then the answer is written to the
/// socket at once where evhttp would wait for epoll to report the socket writable
/// (one more loop pass and two more epoll_ctl calls). If the socket takes it all, the
/// request is finished as evhttp finishes it after a write, and this returns 1;
/// otherwise the rest is left to evhttp and this returns 0, and until the answer has
/// drained the connection reads no more than 4 KiB ahead (instead of 64 KiB): a crowd
/// of clients that ask and never read costs little each. `request` may be freed
/// before this returns: the caller must not use it again.
int rg_http_send_reply(struct evhttp_request *request, int status, const char *reason,
                       const struct timeval *timeout);

/// Whether the connection of `bufferevent` has an answer the socket would not take
/// whole (rg_http_send_reply returned 0) still unsent: its client is slow or reads
/// nothing. (An answer the socket took, or a stream's frames, waits only for the loop.)
int rg_http_answer_waits(struct bufferevent *bufferevent);

/// rg_http_restore_timeout, then evhttp_send_reply_start for an event stream; the
/// connection then reads no more than 4 KiB of whatever its client sends.
void rg_http_start_stream(struct evhttp_request *request, int status, const char *reason,
                          const struct timeval *timeout);

/// Makes libevent allocate through counting wrappers of malloc, realloc and free (once
/// per process; call before serving). From then on each thread knows how many bytes
/// libevent holds for it: on a worker's loop thread, everything its clients make
/// evhttp keep (connections, requests, parsed headers, bodies, buffers), which no
/// per-buffer count sees (1 500 header lines of 5 bytes take about 170 KB).
void rg_memory_count_libevent(void);

/// What libevent holds, in bytes, for the calling thread (counted since
/// rg_memory_count_libevent).
int64_t rg_memory_thread_bytes(void);

/// On the calling thread: once what libevent holds passes `limit` bytes, `pressure` is
/// made active and the loop is told to go on to it as soon as the running callback
/// returns (give it a higher priority than every other event), once until
/// rg_memory_rearm. NULL stops watching; call that before freeing `pressure`.
void rg_memory_watch(struct event *pressure, int64_t limit);

/// After `pressure` ran: the next crossing of the limit activates it again.
void rg_memory_rearm(void);

#include "CHTTPEviction.h"  // stream eviction and request deadlines

#endif
