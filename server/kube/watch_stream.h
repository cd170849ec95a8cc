/* The watch stream decoder (reference/kube-watch.md section 4): splits the de-chunked body of a
 * `?watch=true` response into newline-delimited events with a bounded buffer, whatever the chunk
 * boundaries, and decodes each into a typed event. Pure logic, no I/O, no logging: the reflector
 * feeds it from libcurl's write callback (fuzzed by test/fuzz/fuzz_watch.c).
 *
 * Failure model, as client-go's stream watcher: a line that is not a JSON object with a known
 * `type` and an `object` mapping is garbage (the watch is broken and the caller relists); a line
 * longer than the limit is rejected without being buffered in full; bytes left without a newline
 * when the stream ends are a truncated event, never applied (the caller re-watches from the last
 * resourceVersion, which makes the server send that event again). */
#ifndef RF_SERVER_WATCH_STREAM_H
#define RF_SERVER_WATCH_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "config/strbuf.h"

/** Default bound of one event (bytes). etcd objects are at most ~1.5 MiB; JSON adds little. */
#define RF_WATCH_MAX_EVENT ((size_t)16 * 1024 * 1024)

enum rf_watch_type {
	RF_WATCH_ADDED = 0,
	RF_WATCH_MODIFIED,
	RF_WATCH_DELETED,
	RF_WATCH_BOOKMARK,
	RF_WATCH_ERROR,
	RF_WATCH_TYPE_COUNT
};

/** "ADDED", "MODIFIED", ... */
const char *rf_watch_type_name(enum rf_watch_type t);

struct rf_watch_event {
	enum rf_watch_type type;
	json_t *object; /* the event's object (a Status for ERROR); owned by the event */
	const char *rv; /* object.metadata.resourceVersion, borrowed from object, or NULL */
	/* ERROR events: the Status fields (borrowed from object; code 0 when absent) */
	int code;
	const char *reason, *message;
};

/** Release an event's object; accepts a zeroed event. */
void rf_watch_event_release(struct rf_watch_event *ev);

/**
 * Decode one event line (without its newline). Duplicate keys are rejected.
 * @return 0 and *ret (the caller releases it), or -EPROTO with a message in err (not JSON, not an
 * object, unknown or missing type, object missing or not a mapping), or -ENOMEM.
 */
int rf_watch_event_decode(const char *line, size_t len, struct rf_watch_event *ret, char *err,
			  size_t errlen);

/**
 * Called for every decoded event, in stream order. The callback takes ownership of ev->object
 * (release the event or steal the reference). A negative return stops the feed and is passed on.
 */
typedef int rf_watch_event_cb(void *userdata, struct rf_watch_event *ev);

struct rf_watch_stream {
	struct rf_strbuf line; /* the incomplete line, bounded by max */
	size_t max;            /* longest accepted event line */
	size_t events;         /* events decoded since the last reset */
	bool failed;           /* a previous feed failed: the stream must be reset */
};

/** Initialise with a line limit (0 = RF_WATCH_MAX_EVENT). Allocates nothing yet. */
void rf_watch_stream_init(struct rf_watch_stream *s, size_t max_event);
/** Free the buffer. */
void rf_watch_stream_release(struct rf_watch_stream *s);
/** Forget buffered bytes for a new connection (keeps the buffer's memory). */
void rf_watch_stream_reset(struct rf_watch_stream *s);

/**
 * Feed bytes of the response body. Complete lines are decoded and passed to cb at once; blank
 * lines are skipped; a partial line is kept for the next feed.
 * @return 0, -EMSGSIZE (a line exceeds the limit), -EPROTO (garbage, message in err), -ENOMEM, or
 * the callback's negative value. After an error the stream stays failed until reset.
 */
int rf_watch_stream_feed(struct rf_watch_stream *s, const char *data, size_t len,
			 rf_watch_event_cb *cb, void *userdata, char *err, size_t errlen);

/** Bytes of an incomplete event still buffered (non-zero at the end of a stream = truncated). */
size_t rf_watch_stream_pending(const struct rf_watch_stream *s);

#endif
