/* Verdicts remembered per demand shape (alloc/memo.h) and the rail-group index: a remembered
 * judgement equals a fresh evaluation, failure messages name the asking pod's own claims, and
 * nothing is reused across a different shape or different group rails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "alloc/demand.h"
#include "alloc/evaluate.h"
#include "alloc/memo.h"
#include "alloc/model/json_get.h"
#include "alloc/model/slice.h"
#include "alloc/rail_target.h"
#include "test/unit/alloc/alloc_fixture.h"

Suite *memo_suite(void);

/* a: all free; c: only GPUs 6,7 free and the NICs on their roots held */
static void
cluster(struct fixture *f)
{
	fixture_init(f);
	fixture_add_hgx(f, "a");
	fixture_add_hgx(f, "c");
	const char *c_held[] = {
		"gpu.nvidia.com:gpu-0",     "gpu.nvidia.com:gpu-1",     "gpu.nvidia.com:gpu-2",
		"gpu.nvidia.com:gpu-3",     "gpu.nvidia.com:gpu-4",     "gpu.nvidia.com:gpu-5",
		"dra.net:pci-0000-ce-00-0", "dra.net:pci-0000-dc-00-0", NULL
	};
	fixture_add_claim(f, "ml", "c-used", SPEC_GPU_ONLY, "c", c_held);
	fixture_add_claim(f, "ml", "first", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_add_claim(f, "ml", "second", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_add_claim(f, "ml", "loose", SPEC_GPU_NIC_LOOSE, NULL, NULL);
	fixture_build(f);
}

struct judged {
	struct rf_judgement j;
	char msg[RF_REASON_LEN];
	struct rf_memo_pick picks[RF_MAX_PICKS];
};

/* Judge through the memo; *ret_hit says whether it was remembered before. */
static void
judge(struct fixture *f, json_t *p, const char *node, bool need_msg, struct judged *ret,
      bool *ret_hit)
{
	struct rf_demand d;
	struct rf_judge_ctx ctx;
	struct rf_node_eval *e = malloc(sizeof(*e));
	struct rf_judge_scratch *scratch = malloc(sizeof(*scratch));
	struct rf_judgement probe;
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(scratch);
	ck_assert_int_eq(rf_demand_resolve(f->c, p, &d), 0);
	ck_assert_int_eq(rf_judge_begin(f->c, &d, &ctx), 0);
	ck_assert_ptr_nonnull(ctx.shape);
	const struct rf_node *n = rf_cluster_node(f->c, node);
	/* a node not in the cache is never remembered */
	*ret_hit = n && rf_memo_lookup(ctx.shape, n->idx, rf_node_use(f->c, n)->fp, n->rev, 0,
				       ctx.ident, need_msg, &probe);
	ck_assert_int_eq(rf_judge_node(&ctx, node, need_msg, scratch, &ret->j), 0);
	/* the failure message as filter sends it, remembered or not */
	char *fm = ret->j.filter_msg ? NULL : rf_filter_message(ret->j.msg ? ret->j.msg : "");
	snprintf(ret->msg, sizeof(ret->msg), "%s", ret->j.filter_msg ? ret->j.filter_msg : fm);
	free(fm);
	for (size_t i = 0; i < ret->j.n_picks; i++)
		ret->picks[i] = ret->j.picks[i];
	ret->j.picks = ret->picks;
	/* the same node evaluated afresh gives the same judgement */
	ck_assert_int_eq(rf_evaluate_node(f->c, &d, node, false, e), 0);
	ck_assert_int_eq(ret->j.verdict, e->verdict);
	ck_assert_int_eq(ret->j.score, e->score);
	if (need_msg && e->verdict != RF_VERDICT_PASS) {
		char *want = rf_filter_message(e->reasons[0]);
		ck_assert_str_eq(ret->msg, want);
		free(want);
	}
	ck_assert_uint_eq(ret->j.n_picks, e->predicted.n);
	for (size_t i = 0; i < ret->j.n_picks; i++)
		ck_assert_ptr_eq(ret->j.picks[i].dev, e->predicted.picks[i].dev);
	rf_judge_end(&ctx);
	rf_demand_release(&d);
	free(scratch);
	free(e);
}

START_TEST(test_memo_shared_by_same_shape)
{
	struct fixture f;
	struct judged *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	bool hit;
	cluster(&f);
	json_t *p1 = fixture_pod("w1", "first", NULL), *p2 = fixture_pod("w2", "second", NULL);
	judge(&f, p1, "a", true, a, &hit);
	ck_assert(!hit);
	ck_assert_int_eq(a->j.verdict, RF_VERDICT_PASS);
	/* another pod, another claim, the same spec: remembered */
	judge(&f, p2, "a", true, b, &hit);
	ck_assert(hit);
	ck_assert_int_eq(b->j.score, a->j.score);
	json_decref(p1);
	json_decref(p2);
	free(a);
	free(b);
	fixture_release(&f);
}
END_TEST

START_TEST(test_memo_failure_names_own_claim)
{
	struct fixture f;
	struct judged *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	bool hit;
	cluster(&f);
	json_t *p1 = fixture_pod("w1", "first", NULL), *p2 = fixture_pod("w2", "second", NULL);
	judge(&f, p1, "c", true, a, &hit);
	ck_assert_int_ne(a->j.verdict, RF_VERDICT_PASS);
	ck_assert_msg(strstr(a->msg, "ml/first"), "%s", a->msg);
	/* the failure message of the first pod is not reused for the second */
	judge(&f, p2, "c", true, b, &hit);
	ck_assert(!hit);
	ck_assert_msg(strstr(b->msg, "ml/second") && !strstr(b->msg, "ml/first"), "%s", b->msg);
	/* prioritize needs no message: the verdict is shared */
	judge(&f, p2, "c", false, b, &hit);
	ck_assert(hit);
	ck_assert_int_eq(b->j.verdict, a->j.verdict);
	ck_assert_ptr_null(b->j.msg);
	ck_assert_ptr_null(b->j.filter_msg);
	/* the latest pod's message is the one remembered: the second pod again hits, the first
	 * is judged again and its message names its own claim */
	judge(&f, p2, "c", true, b, &hit);
	ck_assert(hit);
	ck_assert_msg(strstr(b->msg, "ml/second"), "%s", b->msg);
	judge(&f, p1, "c", true, b, &hit);
	ck_assert(!hit);
	ck_assert_str_eq(b->msg, a->msg);
	json_decref(p1);
	json_decref(p2);
	free(a);
	free(b);
	fixture_release(&f);
}
END_TEST

START_TEST(test_memo_shapes_differ)
{
	struct fixture f;
	cluster(&f);
	const char *annotations[] = { NULL, "\"railfit.io/min-alignment\":\"PIX\"",
				      "\"railfit.io/nic-bandwidth\":\"100G\"",
				      "\"kubernetes.io/egress-bandwidth\":\"10G\"" };
	char *shapes[5], *ident;
	struct rf_demand d;
	for (size_t i = 0; i < 4; i++) {
		json_t *p = fixture_pod("w", "first", annotations[i]);
		ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
		ck_assert_int_eq(rf_demand_shape(&d, &shapes[i], &ident), 0);
		free(ident);
		rf_demand_release(&d);
		json_decref(p);
	}
	json_t *p = fixture_pod("w", "loose", NULL);
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	ck_assert_int_eq(rf_demand_shape(&d, &shapes[4], &ident), 0);
	free(ident);
	rf_demand_release(&d);
	json_decref(p);
	for (size_t i = 0; i < 5; i++)
		for (size_t k = i + 1; k < 5; k++)
			ck_assert_msg(strcmp(shapes[i], shapes[k]) != 0, "%zu == %zu", i, k);
	/* the same spec under another name is the same shape */
	p = fixture_pod("w2", "second", NULL);
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	char *again;
	ck_assert_int_eq(rf_demand_shape(&d, &again, &ident), 0);
	ck_assert_str_eq(again, shapes[0]);
	ck_assert(strstr(ident, "second"));
	free(again);
	free(ident);
	rf_demand_release(&d);
	json_decref(p);
	for (size_t i = 0; i < 5; i++)
		free(shapes[i]);
	fixture_release(&f);
}
END_TEST

/* Nodes that fail alike share one copy of the failure message in the shape; another pod's
 * (naming its own claim) is another text, and each is what a fresh evaluation says. */
START_TEST(test_memo_failure_messages_shared)
{
	struct fixture f;
	fixture_init(&f);
	const char *held[] = {
		"gpu.nvidia.com:gpu-0",     "gpu.nvidia.com:gpu-1",     "gpu.nvidia.com:gpu-2",
		"gpu.nvidia.com:gpu-3",     "gpu.nvidia.com:gpu-4",     "gpu.nvidia.com:gpu-5",
		"dra.net:pci-0000-ce-00-0", "dra.net:pci-0000-dc-00-0", NULL
	};
	const char *names[] = { "c", "d", "e" };
	for (size_t i = 0; i < 3; i++) {
		char claim[16];
		fixture_add_hgx(&f, names[i]);
		snprintf(claim, sizeof(claim), "%s-used", names[i]);
		fixture_add_claim(&f, "ml", claim, SPEC_GPU_ONLY, names[i], held);
	}
	fixture_add_claim(&f, "ml", "first", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_add_claim(&f, "ml", "second", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	fixture_build(&f);
	struct rf_judge_scratch *scratch = malloc(sizeof(*scratch));
	struct rf_node_eval *e = malloc(sizeof(*e));
	ck_assert(scratch && e);
	const char *shared[2] = { NULL, NULL };
	const char *claims[2] = { "first", "second" };
	for (size_t p = 0; p < 2; p++) {
		json_t *pod = fixture_pod("w", claims[p], NULL);
		struct rf_demand d;
		struct rf_judge_ctx ctx;
		struct rf_judgement j;
		ck_assert_int_eq(rf_demand_resolve(f.c, pod, &d), 0);
		ck_assert_int_eq(rf_judge_begin(f.c, &d, &ctx), 0);
		for (size_t i = 0; i < 3; i++) { /* evaluated and remembered */
			ck_assert_int_eq(rf_judge_node(&ctx, names[i], true, scratch, &j), 0);
			ck_assert(j.name_fp == rf_fingerprint(names[i], NULL, NULL));
		}
		for (size_t i = 0; i < 3; i++) {
			ck_assert_int_eq(rf_judge_node(&ctx, names[i], true, scratch, &j), 0);
			ck_assert(j.picks != scratch->picks); /* remembered */
			ck_assert(j.name_fp == rf_fingerprint(names[i], NULL, NULL));
			ck_assert_int_ne(j.verdict, RF_VERDICT_PASS);
			ck_assert_ptr_nonnull(j.filter_msg);
			ck_assert_int_eq(rf_evaluate_node(f.c, &d, names[i], false, e), 0);
			char *want = rf_filter_message(e->reasons[0]);
			ck_assert_str_eq(j.filter_msg, want);
			free(want);
			if (!shared[p])
				shared[p] = j.filter_msg;
			ck_assert_ptr_eq(j.filter_msg, shared[p]); /* one copy */
		}
		ck_assert_msg(strstr(shared[p], claims[p]), "%s", shared[p]);
		rf_judge_end(&ctx);
		rf_demand_release(&d);
		json_decref(pod);
	}
	ck_assert_str_ne(shared[0], shared[1]);
	free(scratch);
	free(e);
	fixture_release(&f);
}
END_TEST

START_TEST(test_memo_keyed_by_group_rails)
{
	struct fixture f;
	struct rf_demand d;
	struct rf_judge_ctx ctx;
	struct rf_judgement j;
	cluster(&f);
	json_t *p = fixture_pod("w", "first", NULL);
	ck_assert_int_eq(rf_demand_resolve(f.c, p, &d), 0);
	ck_assert_int_eq(rf_judge_begin(f.c, &d, &ctx), 0);
	struct rf_judge_scratch *e = malloc(sizeof(*e));
	ck_assert_int_eq(rf_judge_node(&ctx, "a", true, e, &j), 0);
	const struct rf_node *a = rf_cluster_node(f.c, "a");
	ck_assert(rf_memo_lookup(ctx.shape, a->idx, rf_node_use(f.c, a)->fp, a->rev, 0, ctx.ident,
				 true, &j));
	ck_assert(!rf_memo_lookup(ctx.shape, a->idx, rf_node_use(f.c, a)->fp, a->rev, 1, ctx.ident,
				  true, &j));
	/* a node that is not in the cache is never remembered, and fails */
	ck_assert_int_eq(rf_judge_node(&ctx, "nosuch", true, e, &j), 0);
	ck_assert_int_eq(j.verdict, RF_VERDICT_FAIL);
	rf_judge_end(&ctx);
	rf_demand_release(&d);
	json_decref(p);
	free(e);
	fixture_release(&f);
}
END_TEST

/* Pods of group g hold NICs: on a the NIC of rail ra, on b the NICs of rails ra and rb. */
START_TEST(test_group_rails_index)
{
	struct fixture f;
	fixture_init(&f);
	fixture_add_hgx(&f, "a");
	fixture_add_hgx(&f, "b");
	fixture_add_hgx(&f, "c");
	fixture_build(&f);
	const struct rf_node *na = rf_cluster_node(f.c, "a");
	int rail[2] = { -1, -1 };
	const char *nic[2] = { NULL, NULL };
	for (size_t i = 0, k = 0; i < na->n_devices && k < 2; i++)
		if (na->devices[i]->kind == RF_DEV_NIC && na->devices[i]->rail >= 0) {
			rail[k] = na->devices[i]->rail;
			nic[k++] = na->devices[i]->name;
		}
	ck_assert(rail[0] >= 0 && rail[1] >= 0 && rail[0] != rail[1]);
	char held0[128], held1[128], buf[512];
	snprintf(held0, sizeof(held0), "dra.net:%s", nic[0]);
	snprintf(held1, sizeof(held1), "dra.net:%s", nic[1]);
	const char *on_a[] = { held0, NULL }, *on_b[] = { held0, held1, NULL };
	fixture_add_claim(&f, "ml", "ca", SPEC_GPU_ONLY, "a", on_a);
	fixture_add_claim(&f, "ml", "cb", SPEC_GPU_ONLY, "b", on_b);
	const char *pods[][2] = { { "pa", "a" }, { "pb", "b" } };
	for (size_t i = 0; i < 2; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\","
			 "\"uid\":\"u-%s\",\"labels\":{\"railfit.io/group\":\"g\"}},\"spec\":{"
			 "\"nodeName\":\"%s\",\"resourceClaims\":[{\"name\":\"c\","
			 "\"resourceClaimName\":\"c%s\"}]},\"status\":{\"phase\":\"Running\"}}",
			 pods[i][0], pods[i][0], pods[i][1], pods[i][1]);
		fixture_add_json(&f, buf);
	}
	fixture_build(&f);
	uint64_t ra = UINT64_C(1) << rail[0], rb = UINT64_C(1) << rail[1];
	/* from a: b's rails; from b: a's rail; from c: both; other groups: none */
	ck_assert_uint_eq(rf_cluster_group_rails(f.c, "ml/g", "a"), ra | rb);
	ck_assert_uint_eq(rf_cluster_group_rails(f.c, "ml/g", "b"), ra);
	ck_assert_uint_eq(rf_cluster_group_rails(f.c, "ml/g", "c"), ra | rb);
	ck_assert_uint_eq(rf_cluster_group_rails(f.c, "ml/h", "c"), 0);
	ck_assert_uint_eq(rf_cluster_group_rails(f.c, "other/g", "a"), 0);
	fixture_release(&f);
}
END_TEST

/* The generation after a claim event (rf_cluster_build_next): it shares the layout and the
 * unchanged claims, the node the event touched is judged again, the others keep their remembered
 * verdicts, and every judgement equals that of a generation built from scratch. */
START_TEST(test_next_generation_keeps_untouched_verdicts)
{
	struct fixture f;
	struct judged *j = malloc(sizeof(*j));
	bool hit;
	cluster(&f);
	struct rf_cluster *g1 = NULL, *g2 = NULL, *full = NULL;
	ck_assert_int_eq(rf_cluster_build_next(NULL, &f.objs, &f.cfg, f.cel, false, &g1), 0);
	rf_cluster_unref(f.c);
	f.c = g1;
	json_t *p = fixture_pod("w", "first", NULL);
	judge(&f, p, "a", true, j, &hit);
	ck_assert(!hit);
	ck_assert_int_eq(j->j.verdict, RF_VERDICT_PASS);
	judge(&f, p, "c", true, j, &hit);
	ck_assert(!hit);

	/* a claim event: GPUs 0-3 of node a allocated */
	const char *a_held[] = { "gpu.nvidia.com:gpu-0", "gpu.nvidia.com:gpu-1",
				 "gpu.nvidia.com:gpu-2", "gpu.nvidia.com:gpu-3", NULL };
	fixture_add_claim(&f, "ml", "a-used", SPEC_GPU_ONLY, "a", a_held);
	ck_assert_int_eq(rf_cluster_build_next(g1, &f.objs, &f.cfg, f.cel, true, &g2), 0);
	ck_assert_ptr_eq(rf_cluster_node(g2, "a"), rf_cluster_node(g1, "a"));
	ck_assert_ptr_eq(rf_cluster_claim(g2, "ml", "first"), rf_cluster_claim(g1, "ml", "first"));
	ck_assert_ptr_nonnull(rf_cluster_claim(g2, "ml", "a-used"));
	ck_assert_ptr_null(rf_cluster_claim(g1, "ml", "a-used"));
	const struct rf_node *a = rf_cluster_node(g2, "a"), *c = rf_cluster_node(g2, "c");
	ck_assert_uint_eq(rf_node_use(g1, a)->n_gpus_free, 8);
	ck_assert_uint_eq(rf_node_use(g2, a)->n_gpus_free, 4);
	ck_assert(rf_node_use(g1, a)->fp != rf_node_use(g2, a)->fp);
	ck_assert(rf_node_use(g1, c)->fp == rf_node_use(g2, c)->fp);
	ck_assert_ptr_eq(rf_cluster_memo(g2), rf_cluster_memo(g1));

	f.c = g2; /* judge() compares with a fresh evaluation on the same generation */
	judge(&f, p, "c", true, j, &hit);
	ck_assert(hit);
	judge(&f, p, "a", true, j, &hit);
	ck_assert(!hit);
	struct judged incremental = *j;

	/* the same objects built from scratch decide the same */
	ck_assert_int_eq(rf_cluster_build(&f.objs, &f.cfg, f.cel, &full), 0);
	ck_assert(rf_cluster_node(full, "a") != a);
	f.c = full;
	judge(&f, p, "a", true, j, &hit);
	ck_assert(!hit);
	ck_assert_int_eq(j->j.verdict, incremental.j.verdict);
	ck_assert_int_eq(j->j.score, incremental.j.score);
	ck_assert_str_eq(j->msg, incremental.msg);
	ck_assert_uint_eq(j->j.n_picks, incremental.j.n_picks);
	for (size_t i = 0; i < j->j.n_picks; i++)
		ck_assert(j->picks[i].fp == incremental.picks[i].fp);

	/* a node or slice change: the layout is built anew, the claims and pods parsed for the
	 * old one are relinked to it (copies pointing at the new devices), not parsed again */
	struct rf_cluster *g3 = NULL;
	ck_assert_int_eq(rf_cluster_build_next(g2, &f.objs, &f.cfg, f.cel, false, &g3), 0);
	ck_assert(rf_cluster_node(g3, "a") != a);
	ck_assert(rf_cluster_memo(g3) != rf_cluster_memo(g2));
	const struct rf_claim *old = rf_cluster_claim(g2, "ml", "a-used");
	const struct rf_claim *rel = rf_cluster_claim(g3, "ml", "a-used");
	ck_assert_ptr_nonnull(rel);
	ck_assert(rel != old);
	ck_assert_str_eq(rel->uid ? rel->uid : "", old->uid ? old->uid : "");
	ck_assert_uint_eq(rel->n_results, 4);
	for (size_t r = 0; r < rel->n_results; r++) {
		ck_assert_ptr_nonnull(rel->results[r].dev);
		ck_assert(rel->results[r].dev != old->results[r].dev);
		ck_assert_str_eq(rel->results[r].dev->name, old->results[r].dev->name);
		ck_assert_str_eq(rel->results[r].dev->pool->node, "a");
	}
	const struct rf_node *a3 = rf_cluster_node(g3, "a");
	ck_assert_uint_eq(rf_node_use(g3, a3)->n_gpus_free, 4);
	/* what was relinked must not point into what goes now */
	rf_cluster_unref(g2);
	rf_cluster_unref(g1);
	g1 = g2 = NULL;
	f.c = g3;
	judge(&f, p, "a", true, j, &hit);
	ck_assert(!hit);
	ck_assert_int_eq(j->j.verdict, incremental.j.verdict);
	ck_assert_int_eq(j->j.score, incremental.j.score);
	ck_assert_str_eq(j->msg, incremental.msg);
	f.c = full;
	rf_cluster_unref(g3);
	rf_cluster_unref(g1);
	json_decref(p);
	free(j);
	fixture_release(&f); /* drops full */
}
END_TEST

/* The group's rail set on other nodes (the rail part's target): node by node, the set most of
 * them use, not the union. Group g: a and b use rails {r0, r1}, c uses {r2, r3}. */
START_TEST(test_group_rail_target)
{
	struct fixture f;
	fixture_init(&f);
	const char *names[] = { "a", "b", "c", "d" };
	for (int i = 0; i < 4; i++)
		fixture_add_hgx(&f, names[i]);
	fixture_build(&f);
	const struct rf_node *na = rf_cluster_node(f.c, "a");
	int rail[4];
	const char *nic[4];
	size_t k = 0;
	for (size_t i = 0; i < na->n_devices && k < 4; i++)
		if (na->devices[i]->kind == RF_DEV_NIC && na->devices[i]->rail >= 0) {
			rail[k] = na->devices[i]->rail;
			nic[k++] = na->devices[i]->name;
		}
	ck_assert_uint_eq(k, 4);
	char held[4][128], buf[512];
	for (int i = 0; i < 4; i++)
		snprintf(held[i], sizeof(held[i]), "dra.net:%s", nic[i]);
	const char *lo[] = { held[0], held[1], NULL }, *hi[] = { held[2], held[3], NULL };
	fixture_add_claim(&f, "ml", "ca", SPEC_GPU_ONLY, "a", lo);
	fixture_add_claim(&f, "ml", "cb", SPEC_GPU_ONLY, "b", lo);
	fixture_add_claim(&f, "ml", "cc", SPEC_GPU_ONLY, "c", hi);
	const char *pods[][2] = { { "pa", "a" }, { "pb", "b" }, { "pc", "c" } };
	for (size_t i = 0; i < 3; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\","
			 "\"uid\":\"u-%s\",\"labels\":{\"railfit.io/group\":\"g\"}},\"spec\":{"
			 "\"nodeName\":\"%s\",\"resourceClaims\":[{\"name\":\"c\","
			 "\"resourceClaimName\":\"c%s\"}]},\"status\":{\"phase\":\"Running\"}}",
			 pods[i][0], pods[i][0], pods[i][1], pods[i][1]);
		fixture_add_json(&f, buf);
	}
	fixture_build(&f);
	na = rf_cluster_node(f.c, "a"); /* the new generation's */
	uint64_t low = (UINT64_C(1) << rail[0]) | (UINT64_C(1) << rail[1]);
	uint64_t high = (UINT64_C(1) << rail[2]) | (UINT64_C(1) << rail[3]);
	const struct rf_group *g = rf_cluster_group(f.c, "ml/g");
	ck_assert_ptr_nonnull(g);
	/* from d: a and b agree on low; the union would be low | high */
	ck_assert_uint_eq(rf_cluster_group_rails(f.c, "ml/g", "d"), low | high);
	struct rf_rail_target t, none;
	rf_rail_target_init(&t, f.c, g);
	rf_rail_target_init(&none, f.c, NULL);
	ck_assert_uint_eq(rf_rail_target_for(&t, f.c, rf_cluster_node(f.c, "d")), low);
	ck_assert_uint_eq(rf_rail_target_for(&t, f.c, rf_cluster_node(f.c, "c")), low);
	ck_assert_uint_eq(rf_rail_target_for(&t, f.c, NULL), low);
	/* from a: b (low) and c (high) tie: the smaller set */
	ck_assert_uint_eq(rf_rail_target_for(&t, f.c, na), low < high ? low : high);
	/* from b the same tie */
	ck_assert_uint_eq(rf_rail_target_for(&t, f.c, rf_cluster_node(f.c, "b")),
			  low < high ? low : high);
	ck_assert_uint_eq(rf_rail_target_for(&none, f.c, na), 0);
	fixture_release(&f);
}
END_TEST

/* ---- the table carried across patched layouts: nodes joining and leaving, DeviceClasses ---- */

/* The fixture's objects handed over as the live store does: new arrays sharing the objects that
 * stay, slices parsed once into records (a layout from records is patched, not built anew). */
struct live {
	struct fixture f;
	const json_t **keys; /* the slice objects recs were parsed from */
	struct rf_slice **recs;
	size_t n_recs;
};

/* New arrays of the same objects: what the next change edits (the previous generation holds the
 * old ones). */
static void
live_arrays(struct live *l)
{
	json_t **arrs[] = { &l->f.objs.nodes,      &l->f.objs.pods,    &l->f.objs.slices,
			    &l->f.objs.claims,     &l->f.objs.classes, &l->f.objs.templates,
			    &l->f.objs.taint_rules };
	for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++) {
		json_t *copy = json_copy(*arrs[i]); /* shallow: the same elements */
		ck_assert_ptr_nonnull(copy);
		json_decref(*arrs[i]);
		*arrs[i] = copy;
	}
}

/* The next generation from the current one (f.c; none: the first), its slices' records the
 * previous ones for the same objects. */
static struct rf_cluster *
live_next(struct live *l)
{
	size_t n = json_array_size(l->f.objs.slices);
	const json_t **keys = calloc(n + 1, sizeof(*keys));
	struct rf_slice **recs = calloc(n + 1, sizeof(*recs));
	ck_assert(keys && recs);
	for (size_t i = 0; i < n; i++) {
		keys[i] = json_array_get(l->f.objs.slices, i);
		for (size_t k = 0; k < l->n_recs && !recs[i]; k++)
			if (l->keys[k] == keys[i]) {
				recs[i] = l->recs[k];
				l->recs[k] = NULL;
			}
		if (!recs[i])
			ck_assert_int_eq(rf_slice_parse(keys[i], &l->f.cfg, &recs[i]), 0);
	}
	for (size_t k = 0; k < l->n_recs; k++)
		rf_slice_unref(l->recs[k]);
	free(l->recs);
	free(l->keys);
	l->recs = recs;
	l->keys = keys;
	l->n_recs = n;
	struct rf_cluster_objects o = l->f.objs;
	o.slice_recs = recs;
	o.n_slice_recs = n;
	struct rf_cluster *g = NULL;
	ck_assert_int_eq(rf_cluster_build_next(l->f.c, &o, &l->f.cfg, l->f.cel, false, &g), 0);
	return g;
}

/* The next generation becomes the fixture's; @return whether it carried the previous table. */
#define live_step(l) live_step_at(l, __LINE__)
static bool
live_step_at(struct live *l, int line)
{
	struct rf_cluster *g = live_next(l);
	bool carried = l->f.c && rf_cluster_memo(g) == rf_cluster_memo(l->f.c);
	ck_assert_msg(!l->f.c || rf_cluster_layout_patched(g), "line %d: built in full", line);
	rf_cluster_unref(l->f.c);
	l->f.c = g;
	return carried;
}

static void
live_release(struct live *l)
{
	for (size_t k = 0; k < l->n_recs; k++)
		rf_slice_unref(l->recs[k]);
	free(l->recs);
	free(l->keys);
	fixture_release(&l->f);
}

/* The index of the element of arr whose metadata.name is name. */
static size_t
named(const json_t *arr, const char *name)
{
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *o = json_array_get(arr, i);
		if (strcmp(json_string_value(rf_jpath(o, "metadata.name")), name) == 0)
			return i;
	}
	ck_abort_msg("no %s", name);
	return 0;
}

/* The slices of node (by spec.nodeName) taken out of the objects, as new references. */
static size_t
take_slices(struct live *l, const char *node, json_t **out)
{
	size_t n = 0;
	for (size_t i = json_array_size(l->f.objs.slices); i-- > 0;) {
		json_t *s = json_array_get(l->f.objs.slices, i);
		const char *sn = json_string_value(rf_jpath(s, "spec.nodeName"));
		if (sn && strcmp(sn, node) == 0) {
			out[n++] = json_incref(s);
			json_array_remove(l->f.objs.slices, i);
		}
	}
	return n;
}

/* Judge node for pod p on the current generation (judge() compares it with a fresh evaluation
 * there): whether it was remembered, and its verdict. */
static bool
remembered(struct live *l, json_t *p, const char *node, enum rf_verdict *ret_verdict)
{
	struct judged *j = malloc(sizeof(*j));
	bool hit;
	ck_assert_ptr_nonnull(j);
	judge(&l->f, p, node, true, j, &hit);
	if (ret_verdict)
		*ret_verdict = j->j.verdict;
	free(j);
	return hit;
}

/* a and c as in cluster() (c mostly held) and six more nodes (so that the holes a node leaves
 * stay below the patch's bound), the first generation built for DRA version v */
static void
live_cluster(struct live *l, enum rf_dra_version v)
{
	memset(l, 0, sizeof(*l));
	fixture_init(&l->f);
	l->f.cfg.kube.dra_version = v;
	l->f.cfg.kube.dra_patch = -1;
	const char *names[] = { "a", "c", "d", "e", "f", "g", "h", "i" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fixture_add_hgx(&l->f, names[i]);
	const char *c_held[] = {
		"gpu.nvidia.com:gpu-0",     "gpu.nvidia.com:gpu-1",     "gpu.nvidia.com:gpu-2",
		"gpu.nvidia.com:gpu-3",     "gpu.nvidia.com:gpu-4",     "gpu.nvidia.com:gpu-5",
		"dra.net:pci-0000-ce-00-0", "dra.net:pci-0000-dc-00-0", NULL
	};
	fixture_add_claim(&l->f, "ml", "c-used", SPEC_GPU_ONLY, "c", c_held);
	fixture_add_claim(&l->f, "ml", "first", SPEC_GPU_NIC_ALIGNED, NULL, NULL);
	live_step(l);
}

/* A node joins (its Node object, then its drivers' slices), leaves (its slices, then its Node
 * object: a hole at its index) and returns under the same name, each step a patched layout that
 * keeps the table: the other nodes' verdicts stay remembered, and the node that changed is
 * judged again every time, equal to a fresh evaluation (judge()): a verdict remembered for it
 * before (without devices, with them) is never served after. */
START_TEST(test_memo_carried_across_node_join_and_leave)
{
	struct live l;
	enum rf_verdict v;
	json_t *sl[4];
	live_cluster(&l, RF_DRA_1_37);
	json_t *p = fixture_pod("w", "first", NULL);
	json_t *pe = fixture_pod("pe", NULL, "\"kubernetes.io/egress-bandwidth\":\"150G\"");
	ck_assert(!remembered(&l, pe, "a", NULL));
	ck_assert(!remembered(&l, p, "a", &v));
	ck_assert_int_eq(v, RF_VERDICT_PASS);
	ck_assert(!remembered(&l, p, "c", &v));
	ck_assert_int_ne(v, RF_VERDICT_PASS);
	const struct rf_memo *m0 = rf_cluster_memo(l.f.c);
	size_t n0 = rf_cluster_n_nodes(l.f.c);

	for (int round = 0; round < 2; round++) {
		/* b's Node object: a new index, no devices yet */
		live_arrays(&l);
		fixture_add_hgx(&l.f, "b");
		ck_assert_uint_eq(take_slices(&l, "b", sl), 2);
		ck_assert(live_step(&l));
		const struct rf_node *b = rf_cluster_node(l.f.c, "b");
		ck_assert_ptr_nonnull(b);
		ck_assert_uint_eq(b->idx, n0 + (size_t)round); /* after every index, holes too */
		ck_assert(remembered(&l, p, "a", NULL));
		ck_assert(remembered(&l, p, "c", NULL));
		ck_assert(!remembered(&l, p, "b", &v));
		ck_assert_int_ne(v, RF_VERDICT_PASS);
		ck_assert(remembered(&l, p, "b", NULL));
		/* a pod asking front-end egress: b has no NIC for it, until its annotation says
		 * how much it has (b copied at its index, the same usage: only its rev tells) */
		ck_assert(!remembered(&l, pe, "b", &v));
		ck_assert_int_ne(v, RF_VERDICT_PASS);
		live_arrays(&l);
		json_t *nj =
			json_deep_copy(json_array_get(l.f.objs.nodes, named(l.f.objs.nodes, "b")));
		json_t *meta = json_object_get(nj, "metadata");
		json_object_set_new(meta, "annotations",
				    json_pack("{s:s}", "railfit.io/frontend-bandwidth", "400G"));
		json_array_set_new(l.f.objs.nodes, named(l.f.objs.nodes, "b"), nj);
		ck_assert(live_step(&l));
		ck_assert_uint_eq(rf_cluster_node(l.f.c, "b")->idx, n0 + (size_t)round);
		ck_assert(!remembered(&l, pe, "b", &v));
		ck_assert_int_eq(v, RF_VERDICT_PASS);
		ck_assert(remembered(&l, pe, "a", NULL));
		/* its drivers publish: b rebuilt, judged again, and fits */
		live_arrays(&l);
		for (size_t i = 0; i < 2; i++)
			json_array_append_new(l.f.objs.slices, sl[i]);
		ck_assert(live_step(&l));
		ck_assert(remembered(&l, p, "a", NULL));
		ck_assert(!remembered(&l, p, "b", &v));
		ck_assert_int_eq(v, RF_VERDICT_PASS);
		ck_assert(remembered(&l, p, "b", NULL));
		/* b leaves: its slices go (b judged again: fails), then its Node object */
		live_arrays(&l);
		ck_assert_uint_eq(take_slices(&l, "b", sl), 2);
		json_decref(sl[0]);
		json_decref(sl[1]);
		ck_assert(live_step(&l));
		ck_assert(!remembered(&l, p, "b", &v));
		ck_assert_int_ne(v, RF_VERDICT_PASS);
		live_arrays(&l);
		json_array_remove(l.f.objs.nodes, named(l.f.objs.nodes, "b"));
		ck_assert(live_step(&l));
		ck_assert_ptr_null(rf_cluster_node(l.f.c, "b"));
		ck_assert_uint_eq(rf_cluster_n_nodes(l.f.c), n0); /* listed without holes */
		ck_assert(remembered(&l, p, "a", &v));
		ck_assert_int_eq(v, RF_VERDICT_PASS);
		ck_assert(remembered(&l, p, "c", NULL));
		/* a node not in the cache: not remembered, fails */
		ck_assert(!remembered(&l, p, "b", &v));
		ck_assert_int_ne(v, RF_VERDICT_PASS);
	}
	/* one table all along */
	ck_assert_ptr_eq(rf_cluster_memo(l.f.c), m0);
	json_decref(pe);
	json_decref(p);
	live_release(&l);
}
END_TEST

/* More nodes join than the table has room for (rf_memo_slots): a new table, and every node,
 * the ones past the old table's room included, judged and then remembered. */
START_TEST(test_memo_new_table_past_its_room)
{
	struct live l;
	enum rf_verdict v;
	live_cluster(&l, RF_DRA_1_37);
	json_t *p = fixture_pod("w", "first", NULL);
	ck_assert(!remembered(&l, p, "a", NULL));
	const struct rf_memo *m0 = rf_cluster_memo(l.f.c);
	size_t room = rf_memo_slots(m0), n = rf_cluster_n_nodes(l.f.c);
	ck_assert_uint_gt(room, n);
	live_arrays(&l);
	char name[32];
	for (size_t i = 0; n + i < room; i++) {
		snprintf(name, sizeof(name), "n%03zu", i);
		fixture_add_node(&l.f, name, NULL, NULL);
	}
	ck_assert(live_step(&l)); /* room for exactly these */
	ck_assert(remembered(&l, p, "a", NULL));
	live_arrays(&l);
	fixture_add_node(&l.f, "zz-one-more", NULL, NULL);
	ck_assert(!live_step(&l));
	ck_assert_uint_eq(rf_cluster_n_nodes(l.f.c), room + 1);
	ck_assert_uint_gt(rf_memo_slots(rf_cluster_memo(l.f.c)), room + 1);
	ck_assert(!remembered(&l, p, "a", &v));
	ck_assert_int_eq(v, RF_VERDICT_PASS);
	ck_assert(!remembered(&l, p, "zz-one-more", &v));
	ck_assert_int_ne(v, RF_VERDICT_PASS);
	ck_assert(remembered(&l, p, "zz-one-more", NULL));
	ck_assert(remembered(&l, p, "a", NULL));
	json_decref(p);
	live_release(&l);
}
END_TEST

static json_t *
gpu_class(const char *name, const char *expr, const char *ern, const char *created)
{
	json_t *c =
		json_pack("{s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "kind", "DeviceClass", "metadata",
			  "name", name, "spec", "selectors", "cel", "expression", expr);
	ck_assert_ptr_nonnull(c);
	if (ern)
		json_object_set_new(json_object_get(c, "spec"), "extendedResourceName",
				    json_string(ern));
	if (created)
		json_object_set_new(json_object_get(c, "metadata"), "creationTimestamp",
				    json_string(created));
	return c;
}

/* The class at name becomes c (NULL: removed; no such class: added). */
static void
put_class_obj(struct live *l, const char *name, json_t *c)
{
	live_arrays(l);
	json_t *arr = l->f.objs.classes;
	for (size_t i = 0; i < json_array_size(arr); i++)
		if (strcmp(json_string_value(rf_jpath(json_array_get(arr, i), "metadata.name")),
			   name) == 0) {
			if (c)
				json_array_set_new(arr, i, c);
			else
				json_array_remove(arr, i);
			return;
		}
	ck_assert_ptr_nonnull(c);
	json_array_append_new(arr, c);
}

/* DeviceClasses change under a carried table: the class the pod's claim names changed (its
 * verdicts judged again, never the old class's), changed back (the old class's verdicts hold
 * again: the same selectors), removed (the demand is unknown: nothing remembered) and added
 * back, an unrelated class added (verdicts kept); and the class serving an extended resource
 * replaced by a newer one selecting other devices. Every judgement equals a fresh evaluation. */
START_TEST(test_memo_carried_across_class_changes)
{
	struct live l;
	enum rf_verdict v;
	struct rf_demand d;
	live_cluster(&l, RF_DRA_1_37);
	const struct rf_memo *m0 = rf_cluster_memo(l.f.c);
	json_t *p = fixture_pod("w", "first", NULL);
	json_t *gpu = json_incref(
		json_array_get(l.f.objs.classes, named(l.f.objs.classes, "gpu.nvidia.com")));
	ck_assert(!remembered(&l, p, "a", &v));
	ck_assert_int_eq(v, RF_VERDICT_PASS);

	/* the GPU class selects nothing: a judged again, fails */
	put_class_obj(&l, "gpu.nvidia.com",
		      gpu_class("gpu.nvidia.com", "device.driver == 'no-such-driver'", NULL, NULL));
	ck_assert(live_step(&l));
	ck_assert(!remembered(&l, p, "a", &v));
	ck_assert_int_ne(v, RF_VERDICT_PASS);
	ck_assert(remembered(&l, p, "a", NULL));
	/* back as it was: the first verdicts hold again */
	put_class_obj(&l, "gpu.nvidia.com", json_deep_copy(gpu));
	ck_assert(live_step(&l));
	ck_assert(remembered(&l, p, "a", &v));
	ck_assert_int_eq(v, RF_VERDICT_PASS);
	/* removed: the demand is unknown, nothing to remember */
	put_class_obj(&l, "gpu.nvidia.com", NULL);
	ck_assert(live_step(&l));
	ck_assert_int_eq(rf_demand_resolve(l.f.c, p, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_UNKNOWN);
	rf_demand_release(&d);
	/* added back, selecting the NICs only: judged again, fails */
	put_class_obj(&l, "gpu.nvidia.com",
		      gpu_class("gpu.nvidia.com", "device.driver == 'dra.net'", NULL, NULL));
	ck_assert(live_step(&l));
	ck_assert(!remembered(&l, p, "a", &v));
	ck_assert_int_ne(v, RF_VERDICT_PASS);
	put_class_obj(&l, "gpu.nvidia.com", json_deep_copy(gpu));
	ck_assert(live_step(&l));
	ck_assert(remembered(&l, p, "a", &v));
	ck_assert_int_eq(v, RF_VERDICT_PASS);
	/* an unrelated class added: kept */
	put_class_obj(&l, "extra", gpu_class("extra", "device.driver == 'x'", NULL, NULL));
	ck_assert(live_step(&l));
	ck_assert(remembered(&l, p, "a", NULL));

	/* a pod asking nvidia.com/gpu: 1, served by the GPU class */
	put_class_obj(&l, "gpu.nvidia.com",
		      gpu_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com'",
				"nvidia.com/gpu", "2020-01-01T00:00:00Z"));
	ck_assert(live_step(&l));
	json_t *xp = json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}]}}", "metadata",
			       "name", "x", "namespace", "ml", "uid", "x-uid", "spec", "containers",
			       "name", "main", "resources", "limits", "nvidia.com/gpu", "1");
	ck_assert_ptr_nonnull(xp);
	struct judged *j = malloc(sizeof(*j));
	bool hit;
	judge(&l.f, xp, "a", true, j, &hit);
	ck_assert(!hit);
	ck_assert_int_eq(j->j.verdict, RF_VERDICT_PASS);
	ck_assert_uint_eq(j->j.n_picks, 1);
	ck_assert_int_eq(j->j.picks[0].dev->kind, RF_DEV_GPU);
	judge(&l.f, xp, "a", true, j, &hit);
	ck_assert(hit);
	/* a newer class names the resource and selects NICs: it serves it now */
	put_class_obj(&l, "zz-newer",
		      gpu_class("zz-newer", "device.driver == 'dra.net'", "nvidia.com/gpu",
				"2030-01-01T00:00:00Z"));
	ck_assert(live_step(&l));
	judge(&l.f, xp, "a", true, j, &hit);
	ck_assert(!hit);
	ck_assert_uint_eq(j->j.n_picks, 1);
	ck_assert_int_eq(j->j.picks[0].dev->kind, RF_DEV_NIC);
	/* and gone again: the GPU class's verdict holds again */
	put_class_obj(&l, "zz-newer", NULL);
	ck_assert(live_step(&l));
	judge(&l.f, xp, "a", true, j, &hit);
	ck_assert(hit);
	ck_assert_int_eq(j->j.picks[0].dev->kind, RF_DEV_GPU);
	/* the extended resource no class serves: not railfit's business */
	put_class_obj(&l, "gpu.nvidia.com", NULL);
	ck_assert(live_step(&l));
	ck_assert_int_eq(rf_demand_resolve(l.f.c, xp, &d), 0);
	ck_assert_int_eq(d.kind, RF_DEMAND_NONE);
	rf_demand_release(&d);

	ck_assert_ptr_eq(rf_cluster_memo(l.f.c), m0);
	free(j);
	json_decref(xp);
	json_decref(gpu);
	json_decref(p);
	live_release(&l);
}
END_TEST

Suite *
memo_suite(void)
{
	Suite *s = suite_create("memo");
	TCase *tc = tcase_create("memo");
	tcase_add_test(tc, test_memo_shared_by_same_shape);
	tcase_add_test(tc, test_memo_failure_names_own_claim);
	tcase_add_test(tc, test_memo_shapes_differ);
	tcase_add_test(tc, test_memo_keyed_by_group_rails);
	tcase_add_test(tc, test_memo_failure_messages_shared);
	tcase_add_test(tc, test_group_rails_index);
	tcase_add_test(tc, test_group_rail_target);
	tcase_add_test(tc, test_next_generation_keeps_untouched_verdicts);
	tcase_add_test(tc, test_memo_carried_across_node_join_and_leave);
	tcase_add_test(tc, test_memo_new_table_past_its_room);
	tcase_add_test(tc, test_memo_carried_across_class_changes);
	suite_add_tcase(s, tc);
	return s;
}
