/* Fuzz target: the watch stream splitter and event decoder (server/watch_stream.c). The input is a
 * watch response body; its first byte picks a chunk size. The same bytes are fed once whole and
 * once in chunks: both must yield exactly the same events and the same outcome (event boundaries
 * are independent of chunk boundaries), never crash, leak or read out of bounds. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/kube/watch_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct trace {
	char *log;
	size_t len, cap;
	int n;
};

static void
trace_add(struct trace *t, const char *s, size_t n)
{
	if (t->len + n + 2 > t->cap) {
		size_t ncap = (t->cap ? t->cap * 2 : 4096) + n;
		char *nl = realloc(t->log, ncap);
		if (!nl)
			abort();
		t->log = nl;
		t->cap = ncap;
	}
	memcpy(t->log + t->len, s, n);
	t->len += n;
	t->log[t->len++] = '\n';
	t->log[t->len] = 0;
}

static int
on_event(void *ud, struct rf_watch_event *ev)
{
	struct trace *t = ud;
	if ((unsigned)ev->type >= RF_WATCH_TYPE_COUNT || !json_is_object(ev->object))
		abort();
	char *s = json_dumps(ev->object, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	const char *type = rf_watch_type_name(ev->type);
	trace_add(t, type, strlen(type));
	if (s) {
		trace_add(t, s, strlen(s));
		free(s);
	}
	rf_watch_event_release(ev);
	/* the callback can stop the stream */
	return ++t->n == 1000 ? -5 : 0;
}

static int
run(const uint8_t *data, size_t size, size_t chunk, size_t max, struct trace *t)
{
	struct rf_watch_stream ws;
	char err[256];
	int r = 0;
	rf_watch_stream_init(&ws, max);
	for (size_t off = 0; off < size && r == 0; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		r = rf_watch_stream_feed(&ws, (const char *)data + off, n, on_event, t, err,
					 sizeof(err));
		if (r < 0 && strlen(err) >= sizeof(err))
			abort();
	}
	size_t pending = rf_watch_stream_pending(&ws);
	if (pending > max)
		abort();
	char p[48];
	snprintf(p, sizeof(p), "end %d pending %zu", r, r == 0 ? pending : 0);
	trace_add(t, p, strlen(p));
	/* a failed stream stays failed until reset, and works again after */
	if (r < 0 && rf_watch_stream_feed(&ws, "\n", 1, on_event, t, err, sizeof(err)) != -EPROTO)
		abort();
	rf_watch_stream_reset(&ws);
	rf_watch_stream_release(&ws);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = (size_t)data[0] % 17 + 1;
	size_t max = data[0] & 0x80 ? 256 : 65536;
	data++;
	size--;
	struct trace whole = { 0 }, pieces = { 0 };
	run(data, size, size ? size : 1, max, &whole);
	run(data, size, chunk, max, &pieces);
	if (whole.len != pieces.len || (whole.len && memcmp(whole.log, pieces.log, whole.len) != 0))
		abort();
	free(whole.log);
	free(pieces.log);

	/* the decoder alone, on the whole input as one line */
	struct rf_watch_event ev;
	char err[256];
	if (rf_watch_event_decode((const char *)data, size, &ev, err, sizeof(err)) == 0)
		rf_watch_event_release(&ev);
	return 0;
}
