/* `railfit gen-cluster`: a synthetic cluster of HGX H100 nodes (DGX wiring of
 * reference/dra-examples/README.md) with a share of the GPUs allocated through ResourceClaims held
 * by Running pods (one per GPU, or with --pods-per-node fewer pods holding two GPUs each).
 * Deterministic for a seed: the usage spread comes from a splitmix64 stream, names, UIDs, UUIDs and
 * MACs from hashes of (seed, object). Pure; any thread. */
#include "alloc/gen/gen_cluster.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc/gen/gen_private.h"

#define GPUS_PER_NODE 8u

/* One claim to place: a GPU, maybe a NIC; GEN_TWO_PAIRS: two GPUs and their NICs. */
struct plan {
	unsigned node;
	enum gen_shape shape;
	int gpu, nic;
	int gpu2, nic2; /* GEN_TWO_PAIRS only */
};

/* How the claims of one shape are grouped into Jobs. */
struct job_state {
	unsigned id, size, next_worker;
	bool open;
};

static double
clamp_used(double used)
{
	if (!(used > 0.0)) /* also NaN */
		return 0.0;
	return used > 1.0 ? 1.0 : used;
}

/* How many GPUs are used on each node: exactly @p target overall, spread so that some nodes are
 * full, some empty and some partial. The nodes are visited in the (random) @p order. */
static void
spread_usage(struct gen_rng *rng, unsigned nodes, const unsigned *order, unsigned long target,
	     unsigned *ret_used)
{
	unsigned long remaining = target;

	for (unsigned pos = 0; pos < nodes; pos++) {
		unsigned long after = (unsigned long)(nodes - pos - 1) * GPUS_PER_NODE;
		unsigned lo = remaining > after ? (unsigned)(remaining - after) : 0;
		unsigned hi = remaining < GPUS_PER_NODE ? (unsigned)remaining : GPUS_PER_NODE;
		unsigned roll = gen_rng_below(rng, 10), k;
		if (roll < 3)
			k = hi; /* full (as far as the target allows) */
		else if (roll < 5)
			k = lo; /* empty (as far as the remaining nodes allow) */
		else
			k = lo + gen_rng_below(rng, hi - lo + 1);
		ret_used[order[pos]] = k;
		remaining -= k;
	}
}

static void
shuffle(struct gen_rng *rng, unsigned *v, unsigned n)
{
	for (unsigned i = n; i > 1; i--) {
		unsigned j = gen_rng_below(rng, i), t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Which @p k GPUs of a node are used: a random choice, in @p ret_gpus[0..k) (shuffled order) and
 * @p ret_chosen. */
static void
choose_gpus(struct gen_rng *rng, unsigned k, unsigned ret_gpus[static GPUS_PER_NODE],
	    bool ret_chosen[static GPUS_PER_NODE])
{
	for (unsigned i = 0; i < GPUS_PER_NODE; i++) {
		ret_gpus[i] = i;
		ret_chosen[i] = false;
	}
	shuffle(rng, ret_gpus, GPUS_PER_NODE);
	for (unsigned i = 0; i < k; i++)
		ret_chosen[ret_gpus[i]] = true;
}

/* One-GPU claims for the @p chosen GPUs of node @p ni: how they were claimed, and which NICs they
 * took besides those already in @p nic_taken; appends to @p plans. */
static unsigned
plan_singles(struct gen_rng *rng, const struct gen_hw *hw, unsigned ni, const bool *chosen,
	     bool *nic_taken, struct plan *plans)
{
	unsigned n = 0;
	enum gen_shape shape[GPUS_PER_NODE];

	/* mostly aligned pairs; some GPU-only claims leave their NIC free; some unconstrained
	 * claims took a NIC on another root, leaving a free GPU whose NIC is taken */
	for (unsigned gi = 0; gi < GPUS_PER_NODE; gi++) {
		unsigned roll = chosen[gi] ? gen_rng_below(rng, 100) : 0;
		shape[gi] = roll < 70 ? GEN_PAIR : roll < 85 ? GEN_GPU_ONLY : GEN_LOOSE;
	}
	for (unsigned gi = 0; gi < GPUS_PER_NODE; gi++) {
		int nic = gen_hw_nic_on_root(hw, gi);
		if (chosen[gi] && shape[gi] == GEN_PAIR) {
			if (nic >= 0 && !nic_taken[nic])
				nic_taken[nic] = true;
			else
				shape[gi] = GEN_GPU_ONLY;
		}
	}
	for (unsigned gi = 0; gi < GPUS_PER_NODE; gi++) {
		int own = gen_hw_nic_on_root(hw, gi), cand[GEN_MAX_NICS], nc = 0, nic = -1;
		if (!chosen[gi])
			continue;
		if (shape[gi] == GEN_LOOSE) {
			for (unsigned i = 0; i < hw->n_nics; i++)
				if (hw->nics[i].kind != GEN_NIC_ETH && !nic_taken[i] &&
				    (int)i != own)
					cand[nc++] = (int)i;
			if (nc > 0)
				nic = cand[gen_rng_below(rng, (unsigned)nc)];
			else if (own >= 0 && !nic_taken[own])
				nic = own;
			if (nic >= 0)
				nic_taken[nic] = true;
			else
				shape[gi] = GEN_GPU_ONLY;
		} else if (shape[gi] == GEN_PAIR) {
			nic = own;
		}
		plans[n++] =
			(struct plan){ .node = ni, .shape = shape[gi], .gpu = (int)gi, .nic = nic };
	}
	return n;
}

/* Chooses which GPUs of node @p ni are used and how they were claimed, one claim per GPU; appends
 * to @p plans. */
static unsigned
plan_node(struct gen_rng *rng, const struct gen_hw *hw, unsigned ni, unsigned k, struct plan *plans)
{
	unsigned gpus[GPUS_PER_NODE];
	bool chosen[GPUS_PER_NODE], nic_taken[GEN_MAX_NICS] = { false };

	choose_gpus(rng, k, gpus, chosen);
	return plan_singles(rng, hw, ni, chosen, nic_taken, plans);
}

/* Fleet shape: like plan_node(), but first up to @p max_two used GPUs on one NUMA node (by their
 * rail NIC) are paired into GEN_TWO_PAIRS claims, in the random order of the choice. Sets
 * @p ret_two to the number of such claims. */
static unsigned
plan_node_fleet(struct gen_rng *rng, const struct gen_hw *hw, unsigned ni, unsigned k,
		unsigned max_two, struct plan *plans, unsigned *ret_two)
{
	unsigned gpus[GPUS_PER_NODE], n = 0, two = 0;
	bool chosen[GPUS_PER_NODE], nic_taken[GEN_MAX_NICS] = { false };
	int waiting[2] = { -1, -1 }; /* per NUMA node: a used GPU without a partner yet */

	choose_gpus(rng, k, gpus, chosen);
	for (unsigned pos = 0; pos < k && two < max_two; pos++) {
		int gi = (int)gpus[pos], nic = gen_hw_nic_on_root(hw, (unsigned)gi), numa;
		if (nic < 0 || hw->nics[nic].numa < 0 || hw->nics[nic].numa > 1)
			continue;
		numa = hw->nics[nic].numa;
		if (waiting[numa] < 0) {
			waiting[numa] = gi;
			continue;
		}
		int other = waiting[numa], other_nic = gen_hw_nic_on_root(hw, (unsigned)other);
		int lo = other < gi ? other : gi, hi = other < gi ? gi : other;
		int lo_nic = other < gi ? other_nic : nic, hi_nic = other < gi ? nic : other_nic;
		plans[n++] = (struct plan){ .node = ni,
					    .shape = GEN_TWO_PAIRS,
					    .gpu = lo,
					    .nic = lo_nic,
					    .gpu2 = hi,
					    .nic2 = hi_nic };
		chosen[lo] = chosen[hi] = false;
		nic_taken[lo_nic] = nic_taken[hi_nic] = true;
		waiting[numa] = -1;
		two++;
	}
	*ret_two = two;
	return n + plan_singles(rng, hw, ni, chosen, nic_taken, plans + n);
}

static const char *
template_of(enum gen_shape s)
{
	switch (s) {
	case GEN_PAIR:
		return "gpu-nic-aligned";
	case GEN_LOOSE:
		return "gpu-nic";
	case GEN_GPU_ONLY:
		return "gpu-only";
	case GEN_NIC_ONLY:
		return "rdma-nic-only";
	case GEN_TWO_PAIRS:
		return "two-aligned-pairs";
	}
	return "gpu-only";
}

json_t *
rf_gen_cluster(const struct rf_gen_options *o)
{
	struct gen g;
	struct gen_rng rng;
	struct gen_node *nodes = NULL;
	struct plan *plans = NULL;
	unsigned *used = NULL, *order = NULL, n, nplans = 0;
	struct job_state jobs[GEN_TWO_PAIRS + 1] = { { 0 } };
	unsigned next_job = 0, next_standalone = 0;
	unsigned long target, two_wanted = 0, two_done = 0, used_so_far = 0;
	bool fleet;

	assert(o != NULL);
	n = o->nodes;
	fleet = o->pods_per_node > 0.0;
	gen_init(&g, o->seed);
	gen_add_device_classes(&g);
	if (o->cpu_slices)
		gen_add_cpu_class(&g);
	if (n == 0)
		return gen_finish(&g);
	nodes = calloc(n, sizeof(*nodes));
	used = calloc(n, sizeof(*used));
	order = calloc(n, sizeof(*order));
	plans = calloc((size_t)n * GPUS_PER_NODE, sizeof(*plans));
	if (!nodes || !used || !order || !plans) {
		g.oom = true;
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		char name[GEN_NAME_MAX];
		snprintf(name, sizeof(name), "hgx-%03u", i + 1);
		gen_node_init(&nodes[i], name, i, &gen_hw_hgx_h100, o->seed);
		if (o->blocks) {
			unsigned b = (unsigned)((unsigned long long)i * o->blocks / n);
			snprintf(nodes[i].block, sizeof(nodes[i].block), "block-%u", b);
			snprintf(nodes[i].spine, sizeof(nodes[i].spine), "spine-%u", b / 4);
		}
		nodes[i].cpu_slice = o->cpu_slices;
		order[i] = i;
	}

	gen_rng_seed(&rng, o->seed, 0);
	target = (unsigned long)llround(clamp_used(o->used) * (double)n * GPUS_PER_NODE);
	shuffle(&rng, order, n);
	spread_usage(&rng, n, order, target, used);
	if (fleet) {
		/* every two-GPU claim is one pod less than one claim per GPU */
		double pods = o->pods_per_node * (double)n;
		if (pods < (double)target)
			two_wanted = target - (unsigned long)llround(pods);
		if (two_wanted > target / 2)
			two_wanted = target / 2;
	}
	/* in node order, so that pods and jobs are numbered along the nodes */
	for (unsigned i = 0; i < n; i++) {
		struct gen_rng node_rng;
		gen_rng_seed(&node_rng, o->seed, (uint64_t)i + 1);
		if (!fleet) {
			nplans +=
				plan_node(&node_rng, &gen_hw_hgx_h100, i, used[i], plans + nplans);
			continue;
		}
		/* spread the two-GPU claims along the nodes in proportion to their used GPUs; a
		 * node that cannot take its share (odd count, one per NUMA node) passes it on */
		unsigned two = 0;
		unsigned long due;
		used_so_far += used[i];
		due = target ? (unsigned long)llround((double)two_wanted * (double)used_so_far /
						      (double)target)
			     : 0;
		nplans += plan_node_fleet(&node_rng, &gen_hw_hgx_h100, i, used[i],
					  due > two_done ? (unsigned)(due - two_done) : 0,
					  plans + nplans, &two);
		two_done += two;
	}

	for (unsigned i = 0; i < nplans && !g.oom; i++) {
		const struct plan *p = &plans[i];
		struct job_state *js = &jobs[p->shape];
		char job[GEN_NAME_MAX], pod[GEN_NAME_MAX];
		bool two = p->shape == GEN_TWO_PAIRS;
		if (fleet && gen_rng_below(&rng, 2) == 0) {
			/* a standalone pod (serving, notebooks): no Job */
			snprintf(pod, sizeof(pod), "serve-%u", next_standalone++);
			gen_add_running(&g, &nodes[p->node],
					&(struct gen_running){
						.ns = "ml-serve",
						.pod = pod,
						.app = "triton",
						.template_name = template_of(p->shape),
						.image = "nvcr.io/nvidia/tritonserver:25.10-py3",
						.shape = p->shape,
						.gpu = { p->gpu, two ? p->gpu2 : -1 },
						.nic = { p->nic, two ? p->nic2 : -1 } });
			continue;
		}
		if (!js->open || js->next_worker >= js->size) {
			js->open = true;
			js->id = next_job++;
			js->size = p->shape == GEN_PAIR || (fleet && two)
					   ? 2 + gen_rng_below(&rng, 15)
					   : 1 + gen_rng_below(&rng, 4);
			js->next_worker = 0;
		}
		snprintf(job, sizeof(job), "job-%u", js->id);
		snprintf(pod, sizeof(pod), "job-%u-worker-%u", js->id, js->next_worker++);
		gen_add_running(&g, &nodes[p->node],
				&(struct gen_running){ .ns = "ml-train",
						       .pod = pod,
						       .job = job,
						       .template_name = template_of(p->shape),
						       .image = "nvcr.io/nvidia/pytorch:25.10-py3",
						       .shape = p->shape,
						       .gpu = { p->gpu, two ? p->gpu2 : -1 },
						       .nic = { p->nic, two ? p->nic2 : -1 } });
	}
	for (unsigned i = 0; i < n && !g.oom; i++)
		gen_add_node(&g, &nodes[i]);
out:
	free(plans);
	free(order);
	free(used);
	free(nodes);
	return gen_finish(&g);
}
