/* A growing text buffer with sticky failure, the one every layer writes text into (tables,
 * /metrics, Go-compatible JSON, log lines). After a failed growth (out of memory, or past the
 * optional size cap) every append is a no-op, oom stays true, and rf_strbuf_steal() returns
 * NULL; the caller checks once at the end. A buffer belongs to one thread at a time. */
#ifndef RF_CONFIG_STRBUF_H
#define RF_CONFIG_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Zero-initialised ({ 0 }) it is empty, unbounded and owns nothing. */
struct rf_strbuf {
	char *s;    /* the text, NUL-terminated once anything was written; else may be NULL */
	size_t len; /* bytes of text, without the NUL */
	size_t cap; /* bytes allocated at s */
	size_t max; /* 0: unbounded; else len never exceeds max (growing past it fails) */
	bool oom;   /* sticky: a growth failed */
	bool fixed; /* s is the caller's storage (rf_strbuf_init_with), never freed here */
};

/**
 * Start b on the caller's storage buf[size] (size >= 1, e.g. on the stack), moving to the heap
 * when the text outgrows it; max as in struct rf_strbuf. Free with rf_strbuf_release().
 */
void rf_strbuf_init_with(struct rf_strbuf *b, char *buf, size_t size, size_t max);

/**
 * Start b on a malloc'd buffer s of cap bytes (cap >= 1), which b now owns: grown with realloc,
 * freed by rf_strbuf_release(), handed over by rf_strbuf_steal(); max as in struct rf_strbuf.
 */
void rf_strbuf_adopt(struct rf_strbuf *b, char *s, size_t cap, size_t max);

/** Make room for more bytes beyond the current text now (fewer, larger growths later). */
void rf_strbuf_reserve(struct rf_strbuf *b, size_t more);

/** Whether more bytes and the NUL fit without growing, within the size cap: then a writer may
 * put them at b->s + b->len itself (and add them to len, NUL-terminated). */
static inline bool
rf_strbuf_fits(const struct rf_strbuf *b, size_t more)
{
	return !b->oom && more < b->cap - b->len && (!b->max || more <= b->max - b->len);
}

/** Append n bytes of s (which may hold NULs). */
void rf_strbuf_putn(struct rf_strbuf *b, const char *s, size_t n);
void rf_strbuf_puts(struct rf_strbuf *b, const char *s);
void rf_strbuf_putc(struct rf_strbuf *b, char c);
void rf_strbuf_printf(struct rf_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rf_strbuf_vprintf(struct rf_strbuf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/** The text (malloc'd, NUL-terminated, "" when nothing was written), or NULL after a failed
 * growth or on OOM; the buffer is emptied either way. */
char *rf_strbuf_steal(struct rf_strbuf *b);

/** Free what b holds and empty it (accepts an empty buffer). */
void rf_strbuf_release(struct rf_strbuf *b);

#endif
