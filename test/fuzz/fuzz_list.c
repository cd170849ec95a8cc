/* Fuzz target: a List's body as it streams into a reflector (server/kube/list_stream.c), in
 * chunks of a size the input picks, each item slimmed from its text (rf_slim_text()). Checked,
 * not just run: an item slimmed from its text equals the slim copy of jansson's tree of it, and
 * the skeleton's parse plus the items handed out is the parse of the whole body (an error exactly
 * when the body is not valid JSON). Must never crash, hang or leak. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/kube/list_stream.h"
#include "server/snapshot/slim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct got {
	enum rf_slim_kind kind;
	json_t *items;
};

static void
same_or_abort(json_t *a, json_t *b)
{
	char *x = json_dumps(a, JSON_COMPACT), *y = json_dumps(b, JSON_COMPACT);
	bool same = json_equal(a, b) && x && y && strcmp(x, y) == 0;
	free(x);
	free(y);
	if (!same)
		abort();
}

static int
take(void *arg, const char *text, size_t len)
{
	struct got *g = arg;
	json_t *slim = NULL;
	int r = rf_slim_text(g->kind, text, len, NULL, NULL, &slim);
	if (r != 0)
		return r == -EINVAL ? 1 : r;
	json_t *tree = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!tree)
		abort(); /* the scanner took what jansson refuses */
	json_t *want = rf_slim_object(g->kind, tree, NULL, NULL);
	if (want)
		same_or_abort(slim, want);
	json_decref(want);
	json_decref(slim);
	json_array_append_new(g->items, tree);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t chunk = 1 + data[0] % 64;
	struct got g = { (enum rf_slim_kind)(data[1] % RF_SLIM_COUNT), json_array() };
	const char *text = (const char *)data + 2;
	size_t n = size - 2;
	struct rf_list_stream s;
	rf_list_stream_init(&s, take, &g);
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i += chunk)
		r = rf_list_stream_feed(&s, text + i, i + chunk > n ? n - i : chunk);
	if (r == 0 && g.items && rf_list_stream_finish(&s) == 0) {
		json_t *whole = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
		json_t *skel = json_loadb(s.skel, s.skel_len, JSON_REJECT_DUPLICATES, NULL);
		if (!whole != !skel)
			abort();
		if (whole && skel) {
			json_t *its = json_object_get(skel, "items");
			if (json_is_array(its))
				json_array_extend(g.items, its);
			if (json_array_size(g.items) || json_is_array(its))
				json_object_set(skel, "items", g.items);
			if (!json_equal(whole, skel))
				abort();
		}
		json_decref(whole);
		json_decref(skel);
	}
	json_decref(g.items);
	rf_list_stream_release(&s);
	return 0;
}
