/* Fuzz target: extender request decoding (filter/prioritize, preempt and bind bodies) and, when a
 * body decodes, encoding of every result shape. Must never crash, leak or read out of bounds.
 * ExtenderArgs are decoded twice, by the fast scanner-based decoder and by the jansson reference
 * decoder, which must agree; the text writers must print exactly the Go dump of the tree results.
 * Any disagreement aborts. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config/strbuf.h"
#include "server/http/extender.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
dump_and_free(json_t *j)
{
	if (!j)
		return;
	size_t len = 0;
	char *s = rf_json_dump_go(j, &len);
	if (s && strlen(s) > len)
		abort(); /* the length must cover the whole string */
	free(s);
	json_decref(j);
}

/* The text writers print exactly the Go dump of the tree results (or fail where those fail). */
static void
writers_agree(const struct rf_extender_args *a, const enum rf_filter_outcome *oc,
	      const char *const *msgs, const char *error, const int *scores)
{
	json_t *tree = rf_extender_filter_result(a, oc, msgs, error);
	struct rf_strbuf b = { 0 };
	int r = rf_extender_write_filter_result(a, oc, msgs, error, &b);
	if (tree) {
		size_t len = 0;
		char *want = rf_json_dump_go(tree, &len);
		if (want && (r != 0 || b.len != len || memcmp(b.s, want, len) != 0))
			abort();
		free(want);
		json_decref(tree);
	} else if (r == 0) {
		abort();
	}
	rf_strbuf_release(&b);
	tree = rf_extender_priority_list(a, scores);
	r = rf_extender_write_priority_list(a, scores, &b);
	if (tree) {
		size_t len = 0;
		char *want = rf_json_dump_go(tree, &len);
		if (want && (r != 0 || b.len != len || memcmp(b.s, want, len) != 0))
			abort();
		free(want);
		json_decref(tree);
	}
	rf_strbuf_release(&b);
}

/* The fast decoder (server/jscan.h, no tree of the body) and the jansson reference decoder give
 * the same result, error message, names, Node texts and Pod. */
static void
decoders_agree(const char *body, size_t size, const struct rf_extender_args *a, int r,
	       const char *err)
{
	struct rf_extender_args t;
	char terr[256];
	int rt = rf_extender_args_parse_tree(body, size, &t, terr, sizeof(terr));
	if (rt == -ENOMEM || r == -ENOMEM)
		goto out;
	if (rt != r)
		abort();
	if (r < 0) {
		if (strcmp(err, terr) != 0)
			abort();
		return;
	}
	if (a->cache_mode != t.cache_mode || a->n_nodes != t.n_nodes || !json_equal(a->pod, t.pod))
		abort();
	for (size_t i = 0; i < a->n_nodes; i++) {
		if (strcmp(a->node_names[i], t.node_names[i]) != 0)
			abort();
		if ((a->node_objs[i] == NULL) != (t.node_objs[i] == NULL))
			abort();
		if (a->node_objs[i] &&
		    (a->node_obj_lens[i] != t.node_obj_lens[i] ||
		     memcmp(a->node_objs[i], t.node_objs[i], a->node_obj_lens[i])))
			abort();
	}
out:
	if (rt == 0)
		rf_extender_args_release(&t);
}

static void
fuzz_args(const char *body, size_t size)
{
	struct rf_extender_args a;
	char err[256];
	int r = rf_extender_args_parse(body, size, &a, err, sizeof(err));
	decoders_agree(body, size, &a, r, err);
	if (r != 0)
		return;
	size_t n = a.n_nodes;
	enum rf_filter_outcome *oc = calloc(n ? n : 1, sizeof(*oc));
	const char **msgs = calloc(n ? n : 1, sizeof(*msgs));
	int *scores = calloc(n ? n : 1, sizeof(*scores));
	if (oc && msgs && scores) {
		for (size_t i = 0; i < n; i++) {
			oc[i] = (enum rf_filter_outcome)(i % 3);
			msgs[i] = i % 2 ? a.node_names[i] : NULL;
			scores[i] = (int)(i % 11);
		}
		dump_and_free(rf_extender_filter_result(&a, oc, msgs, NULL));
		dump_and_free(rf_extender_filter_result(&a, oc, msgs, "fuzz error <&>"));
		dump_and_free(rf_extender_priority_list(&a, scores));
		writers_agree(&a, oc, msgs, NULL, scores);
		writers_agree(&a, oc, msgs, "fuzz error <&>", scores);
		/* node names as messages: any text a name can hold */
		for (size_t i = 0; i < n; i++)
			msgs[i] = a.node_names[n - 1 - i];
		writers_agree(&a, oc, msgs, n ? a.node_names[0] : NULL, scores);
	}
	/* The borrowed pieces stay readable until release. */
	if (a.pod && !json_is_object(a.pod))
		abort();
	for (size_t i = 0; i < n; i++)
		if (!a.node_names[i] || (a.cache_mode != (a.node_objs[i] == NULL)))
			abort();
	free(oc);
	free(msgs);
	free(scores);
	rf_extender_args_release(&a);
}

static void
fuzz_preempt(const char *body, size_t size)
{
	struct rf_extender_preempt_args p;
	char err[256];
	if (rf_extender_preempt_args_parse(body, size, &p, err, sizeof(err)) != 0)
		return;
	bool *keep = calloc(p.n_nodes ? p.n_nodes : 1, sizeof(*keep));
	if (keep) {
		for (size_t i = 0; i < p.n_nodes; i++) {
			keep[i] = i % 2 == 0;
			if (i > 0 && strcmp(p.nodes[i - 1].node, p.nodes[i].node) > 0)
				abort(); /* must be sorted */
			for (size_t j = 0; j < p.nodes[i].n_pods; j++)
				if (!p.nodes[i].uids[j])
					abort();
		}
		dump_and_free(rf_extender_preempt_result(&p, keep));
		memset(keep, 1, p.n_nodes ? p.n_nodes : 1);
		dump_and_free(rf_extender_preempt_result(&p, keep));
	}
	free(keep);
	rf_extender_preempt_args_release(&p);
}

static void
fuzz_bind(const char *body, size_t size)
{
	struct rf_extender_bind_args b;
	char err[256];
	if (rf_extender_bind_args_parse(body, size, &b, err, sizeof(err)) != 0)
		return;
	if (!b.pod_name || !b.pod_namespace || !b.pod_uid || !b.node)
		abort();
	dump_and_free(rf_extender_bind_result(b.pod_name));
	rf_extender_bind_args_release(&b);
}

/* a as parsed normally, b parsed with JSON_DECODE_INT_AS_REAL. */
static bool
same_value(const json_t *a, const json_t *b)
{
	if (json_is_number(a))
		return json_is_real(b) && (double)json_number_value(a) == json_real_value(b);
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!same_value(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	if (json_is_object(a)) {
		if (json_object_size(a) != json_object_size(b))
			return false;
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)a, k, v) {
			json_t *w = json_object_get(b, k);
			if (!w || !same_value(v, w))
				return false;
		}
		return true;
	}
	return json_equal(a, b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	fuzz_args(body, size);
	fuzz_preempt(body, size);
	fuzz_bind(body, size);
	/* Any JSON the parser accepts round-trips through the Go serialiser. */
	json_t *j = json_loadb(body, size, JSON_DECODE_ANY, NULL);
	if (j) {
		(void)rf_json_get_ci(j, "NodeNames");
		size_t len = 0;
		char *s = rf_json_dump_go(j, &len);
		if (s) {
			/* The Go-style text parses back to an equal value. Go prints integral reals
			 * without a fraction (1.0 -> 1, 1e20 -> 100000000000000000000), so numbers
			 * are read back as reals and compared by value. */
			json_t *back =
				json_loadb(s, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, NULL);
			if (!back || !same_value(j, back))
				abort();
			json_decref(back);
			free(s);
		}
		json_decref(j);
	}
	return 0;
}
