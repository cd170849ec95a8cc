/* Growing text buffer with sticky failure (see strbuf.h). No shared state: a buffer is used by
 * one thread at a time. */
#include "config/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
rf_strbuf_init_with(struct rf_strbuf *b, char *buf, size_t size, size_t max)
{
	*b = (struct rf_strbuf){ .s = buf, .cap = size, .max = max, .fixed = true };
	buf[0] = '\0';
}

void
rf_strbuf_adopt(struct rf_strbuf *b, char *s, size_t cap, size_t max)
{
	*b = (struct rf_strbuf){ .s = s, .cap = cap, .max = max };
	s[0] = '\0';
}

/* Room for more bytes of text plus the NUL; false (and oom) when it cannot be had. */
static bool
reserve(struct rf_strbuf *b, size_t more)
{
	if (b->oom)
		return false;
	if (more > SIZE_MAX - 1 - b->len || (b->max && b->len + more > b->max)) {
		b->oom = true;
		return false;
	}
	size_t want = b->len + more + 1;
	if (want <= b->cap)
		return true;
	size_t ncap = b->cap ? b->cap : 256;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2) {
			ncap = want;
			break;
		}
		ncap *= 2;
	}
	if (b->max && ncap > b->max + 1)
		ncap = b->max + 1;
	char *ns = b->fixed ? malloc(ncap) : realloc(b->s, ncap);
	if (!ns) {
		b->oom = true;
		return false;
	}
	if (b->fixed && b->len)
		memcpy(ns, b->s, b->len);
	b->s = ns;
	b->cap = ncap;
	b->fixed = false;
	return true;
}

void
rf_strbuf_reserve(struct rf_strbuf *b, size_t more)
{
	(void)reserve(b, more);
}

void
rf_strbuf_putn(struct rf_strbuf *b, const char *s, size_t n)
{
	if (!rf_strbuf_fits(b, n) && !reserve(b, n))
		return;
	if (n)
		memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
rf_strbuf_puts(struct rf_strbuf *b, const char *s)
{
	rf_strbuf_putn(b, s, strlen(s));
}

void
rf_strbuf_putc(struct rf_strbuf *b, char c)
{
	if (!rf_strbuf_fits(b, 1) && !reserve(b, 1))
		return;
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void
rf_strbuf_vprintf(struct rf_strbuf *b, const char *fmt, va_list ap)
{
	if (b->oom)
		return;
	va_list again;
	va_copy(again, ap);
	size_t room = b->s ? b->cap - b->len : 0;
	int n = vsnprintf(room ? b->s + b->len : NULL, room, fmt, ap);
	if (n < 0) {
		b->oom = true;
	} else if ((size_t)n < room) {
		b->len += (size_t)n;
	} else if (reserve(b, (size_t)n)) {
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, again);
		b->len += (size_t)n;
	} else if (room) {
		b->s[b->len] = '\0'; /* undo the cut-off attempt */
	}
	va_end(again);
}

void
rf_strbuf_printf(struct rf_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rf_strbuf_vprintf(b, fmt, ap);
	va_end(ap);
}

char *
rf_strbuf_steal(struct rf_strbuf *b)
{
	char *s = NULL;
	if (!b->oom) {
		if (b->s && !b->fixed) {
			s = b->s;
			b->s = NULL;
		} else {
			s = malloc(b->len + 1);
			if (s) {
				if (b->len)
					memcpy(s, b->s, b->len);
				s[b->len] = '\0';
			}
		}
	}
	rf_strbuf_release(b);
	return s;
}

void
rf_strbuf_release(struct rf_strbuf *b)
{
	if (!b->fixed)
		free(b->s);
	*b = (struct rf_strbuf){ 0 };
}
