/* Growing text buffer (see strbuf.h). Single-threaded per buffer. */
#include "server/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
rf_strbuf_printf(struct rf_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
		char *ns = realloc(b->s, ncap);
		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = ncap;
	}
}

char *
rf_strbuf_steal(struct rf_strbuf *b)
{
	char *s = b->oom ? NULL : b->s;
	if (!s && !b->oom)
		s = calloc(1, 1);
	if (b->oom)
		free(b->s);
	memset(b, 0, sizeof(*b));
	return s;
}
