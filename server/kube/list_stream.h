/* A List's body taken apart as it streams in: each item of its top-level "items" array is handed
 * out once complete, and only the rest (kind, apiVersion, metadata and `"items":[]`) is kept: the
 * list's skeleton, for the usual parse. The largest list (an API server answers a list at
 * resourceVersion 0 from its cache whole, limit or not: 10,000 ResourceSlices are 64 MB of text)
 * never sits in memory at once.
 *
 * Only the plain shape is split (an "items" key written without escapes, objects separated by
 * commas); at anything else the rest of the body goes to the skeleton as it is, from the item
 * where the splitter stopped, so the usual parse sees and judges it (same items, same errors).
 * Pure: no I/O, no locks. */
#ifndef RF_KUBE_LIST_STREAM_H
#define RF_KUBE_LIST_STREAM_H

#include <stdbool.h>
#include <stddef.h>

/** An item's text (an object, complete): 0 when taken, 1 to leave it and the rest of the list to
 * the skeleton, or a negative errno to fail the stream. */
typedef int rf_list_item_cb(void *arg, const char *text, size_t len);

struct rf_list_stream {
	rf_list_item_cb *on_item;
	void *arg;
	char *buf; /* bytes received and not yet handed out or moved to the skeleton */
	size_t len, cap, pos;
	char *skel; /* the skeleton, NUL-terminated */
	size_t skel_len, skel_cap;
	int state;
	unsigned depth; /* nesting at pos (in the skeleton's part, or within the item) */
	bool in_str, esc;
	bool key_next;  /* at depth 1: the next string is a key */
	bool items_key; /* the last key at depth 1 was "items" */
	char key[8];
	size_t key_len; /* of the key being read; > 5: not "items" */
	size_t item_start;
	size_t items; /* items handed out */
	int err;
};

void rf_list_stream_init(struct rf_list_stream *s, rf_list_item_cb *on_item, void *arg);
void rf_list_stream_release(struct rf_list_stream *s);

/** Feed the next bytes. @return 0, or the negative errno on_item returned (or -ENOMEM); sticky. */
int rf_list_stream_feed(struct rf_list_stream *s, const char *data, size_t len);

/** The body ended: what remains goes to the skeleton. @return 0 or -ENOMEM; then s->skel and
 * s->skel_len hold the skeleton. */
int rf_list_stream_finish(struct rf_list_stream *s);

#endif
