#include <string.h>
#include <time.h>

#include "Connection.h"

// The Date header's value, made once a second per thread (RFC 9110 §5.6.7, IMF-fixdate).
static const char *http_date(void) {
    static _Thread_local time_t made;
    static _Thread_local char text[32];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (now.tv_sec != made || text[0] == 0) {
        struct tm parts;
        gmtime_r(&now.tv_sec, &parts);
        strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &parts);
        made = now.tv_sec;
    }
    return text;
}

struct writer {
    char *at, *end;
};

static void put(struct writer *w, const void *bytes, size_t length) {
    if (!w->at) return;
    if ((size_t)(w->end - w->at) < length) { w->at = NULL; return; }
    memcpy(w->at, bytes, length);
    w->at += length;
}

static void put_text(struct writer *w, const char *text) {
    put(w, text, strlen(text));
}

static void put_decimal(struct writer *w, uint64_t value) {
    char digits[24];
    size_t n = sizeof digits;
    do { digits[--n] = (char)('0' + value % 10); value /= 10; } while (value);
    put(w, digits + n, sizeof digits - n);
}

size_t rg_response_head(char *buffer, size_t capacity, int status, const char *reason, const char *content_type,
                        int64_t content_length, const char *connection, int chunked,
                        const uint8_t *extra, size_t extra_length) {
    struct writer w = {buffer, buffer + capacity};
    put_text(&w, "HTTP/1.1 ");
    put_decimal(&w, (uint64_t)status);
    put_text(&w, " ");
    put_text(&w, reason);
    put_text(&w, "\r\nDate: ");
    put_text(&w, http_date());
    put_text(&w, "\r\n");
    if (content_type) {
        put_text(&w, "Content-Type: ");
        put_text(&w, content_type);
        put_text(&w, "\r\n");
    }
    if (content_length >= 0) {
        put_text(&w, "Content-Length: ");
        put_decimal(&w, (uint64_t)content_length);
        put_text(&w, "\r\n");
    }
    if (chunked) put_text(&w, "Transfer-Encoding: chunked\r\n");
    if (connection) {
        put_text(&w, "Connection: ");
        put_text(&w, connection);
        put_text(&w, "\r\n");
    }
    put(&w, extra, extra_length);
    put_text(&w, "\r\n");
    return w.at ? (size_t)(w.at - buffer) : 0;
}
