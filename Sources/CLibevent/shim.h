#ifndef RESENDGATE_CLIBEVENT_SHIM_H
#define RESENDGATE_CLIBEVENT_SHIM_H

// System headers first: libevent's event-config.h defines _GNU_SOURCE, and if it
// comes first fd_set is seen two ways ("fds_bits ... not present in fd_set").
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
// malloc_trim, for the server's MemoryTrim (Swift's Glibc module leaves malloc.h out).
#include <malloc.h>

#include <event2/event.h>
#include <event2/thread.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/http_struct.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/util.h>

#endif
