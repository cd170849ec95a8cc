/* A growing text buffer for the human-readable tables of /debug and `railfit explain`. OOM is
 * sticky: after a failed growth every call is a no-op and rf_strbuf_steal() returns NULL. */
#ifndef RF_SERVER_STRBUF_H
#define RF_SERVER_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct rf_strbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

void rf_strbuf_printf(struct rf_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** The text (malloc'd, NUL-terminated, never NULL unless OOM); the buffer is emptied. */
char *rf_strbuf_steal(struct rf_strbuf *b);

#endif
