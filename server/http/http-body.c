/* Request bodies. A body is an rf_strbuf bounded by max_body_bytes (and by Content-Length, when
 * announced), so it grows geometrically and never past either. A Content-Length above the cap is
 * answered 413 before any body byte is read; chunked bodies keep a running total, are discarded
 * once over the cap (up to RF_HTTP_DISCARD_MAX more bytes, then the connection is closed) and
 * answered 413 at their end. The bodies held at once share a budget over every server of the
 * process (the smallest max_buffered_bytes of a running server applies): a Content-Length is
 * reserved whole before the body is read, a chunked body as its buffer grows; beyond it 503 with
 * Retry-After. Runs on MHD's threads; shared state: the budget's byte count (atomic). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <microhttpd.h>

#include "server/http/bufpool.h"
#include "server/http/http-private.h"

/* Bytes of request bodies held (or reserved) by every server of the process. */
static atomic_llong buffered_bytes;

/* Take bytes more of the body budget for r (all or nothing). */
bool
rf_http_budget_take(struct rf_http_server *s, struct req *r, long long bytes)
{
	long long cur = atomic_load(&buffered_bytes);
	do {
		if (s->max_buffered > 0 && cur + bytes > s->max_buffered)
			return false;
	} while (!atomic_compare_exchange_weak(&buffered_bytes, &cur, cur + bytes));
	r->reserved += bytes;
	return true;
}

void
rf_http_budget_release(struct req *r)
{
	if (r->reserved)
		atomic_fetch_sub(&buffered_bytes, r->reserved);
	r->reserved = 0;
}

/* A body announced by Content-Length: over the cap it is answered 413 before any byte is read
 * (MHD then refuses the body and closes the connection); it reserves its share of the budget
 * whole (503 beyond it); its buffer is sized for it. */
enum MHD_Result
rf_http_body_expect(struct rf_http_server *s, struct MHD_Connection *conn, struct req *r,
		    const char *url, const char *method, unsigned long long n)
{
	if (n > s->max_body) {
		char detail[256];
		snprintf(detail, sizeof(detail),
			 "Content-Length %llu exceeds server.maxBodyBytes (%zu bytes)", n,
			 s->max_body);
		return rf_http_send_error(conn, r, method, url, MHD_HTTP_CONTENT_TOO_LARGE,
					  "request body too large", detail, NULL);
	}
	if (n > 0 && !rf_http_budget_take(s, r, (long long)n + 1))
		return rf_http_send_busy(conn, r, method, url);
	size_t whole = (size_t)n + 1;
	if (n > 0 && whole >= RF_BUFPOOL_MIN && whole <= RF_BUFPOOL_MAX) {
		/* Node objects: the whole body at once in a kept buffer (bufpool.h: no page
		 * faults, no growth), even before a byte arrives; the budget above bounds what
		 * announced bodies hold. Its cap is the body's, whatever the buffer has (the
		 * budget holds n + 1). */
		size_t cap;
		char *buf = rf_bufpool_get(whole, &cap);
		if (buf) {
			rf_strbuf_adopt(&r->body, buf, whole, (size_t)n);
			return MHD_YES;
		}
	}
	if (n > 0) {
		/* Buffers grow with the bytes that really arrive (a client announcing a big
		 * body and sending nothing costs little), but never past the announced
		 * size; a wrong Content-Length is MHD's to reject. A first buffer that
		 * cannot be had is tried again with the first bytes. */
		size_t first = (size_t)n + 1;
		if (first > RF_HTTP_FIRST_BUFFER_MAX)
			first = RF_HTTP_FIRST_BUFFER_MAX;
		r->body.max = (size_t)n;
		rf_strbuf_reserve(&r->body, first - 1);
		if (r->body.oom)
			r->body = (struct rf_strbuf){ .max = (size_t)n };
	}
	return MHD_YES;
}

void
rf_http_body_release(struct req *r)
{
	if (!r->body.fixed)
		rf_bufpool_put(r->body.s);
	r->body = (struct rf_strbuf){ 0 };
}

/* Append body bytes: the buffer starts at RF_HTTP_INITIAL_BUFFER (or at the size
 * rf_http_body_expect() gave it) and doubles, never past its max + 1 (room for the NUL). */
void
rf_http_body_append(struct rf_http_server *s, struct req *r, const char *data, size_t n)
{
	if (r->overflow || r->oom || r->over_budget) {
		r->discarded += n;
		return;
	}
	if (n > s->max_body - r->body.len) {
		r->overflow = true;
		r->discarded += n;
		rf_strbuf_release(&r->body);
		return;
	}
	if (!r->body.cap) {
		if (!r->body.max)
			r->body.max = s->max_body;
		size_t first = RF_HTTP_INITIAL_BUFFER - 1;
		rf_strbuf_reserve(&r->body, first < r->body.max ? first : r->body.max);
	}
	rf_strbuf_putn(&r->body, data, n);
	if (r->body.oom) {
		r->oom = true;
		r->discarded += n;
		rf_strbuf_release(&r->body);
		return;
	}
	/* A chunked body holds the budget as its buffer grows (a Content-Length reserved it
	 * whole); past the budget it is discarded and answered 503. */
	if ((long long)r->body.cap > r->reserved &&
	    !rf_http_budget_take(s, r, (long long)r->body.cap - r->reserved)) {
		r->over_budget = true;
		r->discarded += r->body.len;
		rf_strbuf_release(&r->body);
		rf_http_budget_release(r);
	}
}
