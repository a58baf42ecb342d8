// System headers first: libevent's event-config.h defines _GNU_SOURCE (see CHiredis/shim.h).
#include <sys/types.h>
#include <sys/time.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <event2/event.h>

#include "CHTTPConnection.h"
#include "Connection.h"

// What glibc spends on a block besides its usable size (the chunk's size field): small
// blocks (a parsed header's 2-byte name) cost that much more than they hold.
#define CHUNK_OVERHEAD 8

// Bytes libevent has allocated on this thread and not freed (a worker's loop runs on
// its own thread, so this is what that worker's connections, requests, headers,
// bodies and buffers hold). Blocks allocated before counting began and freed after
// make it drift slightly below the truth; it is never above it.
static _Thread_local int64_t thread_bytes;
static _Thread_local int64_t thread_limit = INT64_MAX;
static _Thread_local struct event *thread_pressure;
static _Thread_local int thread_armed;

static inline void note(int64_t delta) {
    thread_bytes += delta;
    if (thread_bytes > thread_limit && thread_armed) {
        // Once per crossing. The pressure event has the loop's higher priority, and the
        // loop goes on to it as soon as the callback that allocated returns, before
        // any other connection is read (one loop pass may read hundreds).
        thread_armed = 0;
        event_active(thread_pressure, EV_TIMEOUT, 1);
        event_base_loopcontinue(event_get_base(thread_pressure));
    }
}

void *rg_counted_malloc(size_t size) {
    void *block = malloc(size);
    if (block) note((int64_t)malloc_usable_size(block) + CHUNK_OVERHEAD);
    return block;
}

void *rg_counted_realloc(void *old, size_t size) {
    int64_t before = old ? (int64_t)malloc_usable_size(old) + CHUNK_OVERHEAD : 0;
    void *block = realloc(old, size);
    if (block) {
        note((int64_t)malloc_usable_size(block) + CHUNK_OVERHEAD - before);
    } else if (size == 0) {
        thread_bytes -= before;  // glibc's realloc(p, 0) frees p
    }
    return block;
}

void rg_counted_free(void *block) {
    if (block) thread_bytes -= (int64_t)malloc_usable_size(block) + CHUNK_OVERHEAD;
    free(block);
}

static void install(void) {
    event_set_mem_functions(rg_counted_malloc, rg_counted_realloc, rg_counted_free);
}

void rg_memory_count_libevent(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
}

int64_t rg_memory_thread_bytes(void) {
    return thread_bytes > 0 ? thread_bytes : 0;
}

void rg_memory_watch(struct event *pressure, int64_t limit) {
    thread_pressure = pressure;
    thread_limit = pressure ? limit : INT64_MAX;
    thread_armed = pressure != NULL;
}

void rg_memory_rearm(void) {
    thread_armed = thread_pressure != NULL;
}
