/* The judges beyond the NIC (issue 15): min-gpu-alignment between a pod's GPUs and
 * min-alignment of its DRA CPUs against its GPUs' NUMA nodes, with the hints that name the
 * better free set. Steps of the pipeline in evaluate.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/evaluate-private.h"

/* "gpu-0 + gpu-1": the whole GPUs of an assignment */
static void
describe_gpus(const struct rf_assignment *a, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < a->n && off < len; i++)
		if (rf_eval_is_whole_gpu(a->picks[i].dev))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " + " : "",
						a->picks[i].dev->name);
}

/* The constraint that keeps a claim's GPUs at `want` or better, where DRA can say it. */
static const char *
gpu_constraint_hint(const struct rf_assignment *a, enum rf_level want, char *buf, size_t len)
{
	const struct rf_pick *g1 = NULL, *g2 = NULL;
	for (size_t i = 0; i < a->n && !g2; i++) {
		if (!rf_eval_is_whole_gpu(a->picks[i].dev))
			continue;
		if (!g1)
			g1 = &a->picks[i];
		else
			g2 = &a->picks[i];
	}
	if (!g2)
		return "";
	if (want == RF_LEVEL_NVL) {
		snprintf(
			buf, len,
			"; no DRA attribute names NVLink domains, so no claim constraint can ask for "
			"NVL");
		return buf;
	}
	const char *attr = NULL;
	if (rf_level_at_least(want, RF_LEVEL_PHB))
		attr = "resource.kubernetes.io/pcieRoot";
	else if (want == RF_LEVEL_NODE && g1->dev->numa_source && strchr(g1->dev->numa_source, '/'))
		attr = g1->dev->numa_source;
	if (!attr)
		return "";
	if (g1->claim != g2->claim) {
		snprintf(
			buf, len,
			": the GPUs are in different claims (%s/%s and %s/%s) and constraints only "
			"apply within one claim; put requests %s and %s in one claim with constraint "
			"matchAttribute %s",
			g1->claim->ns, g1->claim->name, g2->claim->ns, g2->claim->name, g1->request,
			g2->request, attr);
		return buf;
	}
	for (size_t k = 0; k < g1->claim->n_constraints; k++) {
		const struct rf_constraint *co = &g1->claim->constraints[k];
		if (co->match_attribute && strcmp(co->match_attribute, attr) == 0)
			return ""; /* already constrained: the free set is the problem */
	}
	if (strcmp(g1->request, g2->request) == 0)
		snprintf(buf, len,
			 ": add constraint matchAttribute %s over request [%s] to claim %s/%s",
			 attr, g1->request, g1->claim->ns, g1->claim->name);
	else
		snprintf(buf, len,
			 ": add constraint matchAttribute %s over requests [%s %s] to claim %s/%s",
			 attr, g1->request, g2->request, g1->claim->ns, g1->claim->name);
	return buf;
}

static double
gpu_score_fn(const struct rf_assignment *a, void *userdata)
{
	const struct score_ctx *sc = userdata;
	double pts = 0;
	if (!rf_assignment_gpu_alignment(sc->node, sc->cfg, a, NULL, &pts, NULL))
		return 0;
	return pts;
}

/* The best GPU-to-GPU level the search finds (ignore_usage: with every device free). */
static int
best_gpu_level(struct pipeline *p, bool ignore_usage, struct rf_assignment *best,
	       enum rf_level *ret_level, bool *ret_found, bool *ret_exhaustive)
{
	struct score_ctx sc = { p->n, p->cfg };
	bool found = false, exh = false;
	p->sr.ignore_usage = ignore_usage;
	int r = rf_predict_best(&p->sr, gpu_score_fn, &sc, best, &found, &exh);
	p->sr.ignore_usage = false;
	if (r < 0)
		return r;
	*ret_level = RF_LEVEL_UNKNOWN;
	if (found && !rf_assignment_gpu_alignment(p->n, p->cfg, best, ret_level, NULL, NULL))
		*ret_level = RF_LEVEL_UNKNOWN;
	*ret_found = found;
	*ret_exhaustive = exh;
	return 0;
}

/* railfit.io/min-gpu-alignment: the worst pair of predicted GPUs against the pod's minimum, with
 * the same hints as min-alignment. */
int
rf_judge_gpu_alignment(struct pipeline *p)
{
	struct rf_node_eval *e = p->e;
	const struct rf_demand *d = p->d;
	char picked[RF_REASON_LEN / 2], bb[RF_REASON_LEN / 2], hint[RF_REASON_LEN];

	if (e->gpu_applies || e->n_gpus >= 2) {
		describe_gpus(&e->predicted, picked, sizeof(picked));
		if (e->gpu_applies)
			note(e, "GPUs %s: %s (%s)", picked, rf_level_name(e->gpu_level),
			     rf_level_source_name(e->gpu_source));
	}
	if (!d->has_min_gpu_alignment)
		return 0;
	const char *want = rf_level_name(d->min_gpu_alignment);
	if (e->n_gpus < 2) {
		note(e, "min-gpu-alignment %s: the pod gets %u GPU%s here, no pair to check", want,
		     e->n_gpus, e->n_gpus == 1 ? "" : "s");
		return 0;
	}
	if (!e->gpu_applies) {
		if (d->min_gpu_alignment != RF_LEVEL_SYS)
			rf_eval_fail(
				e, RF_VERDICT_FAIL,
				"min-gpu-alignment %s cannot be checked: the level between %s is unknown "
				"(no pcieRoot/NUMA attributes in the ResourceSlices and no usable %s "
				"annotation)",
				want, picked, p->cfg->devices.topology_annotation);
		return 0;
	}
	enum rf_level check = e->gpu_level;
	if (!rf_level_at_least(p->worst_gpu_level, check))
		check = p->worst_gpu_level;
	if (rf_level_at_least(check, d->min_gpu_alignment))
		return 0;

	struct rf_assignment *best = malloc(sizeof(*best));
	enum rf_level bl, il;
	bool found, exh;
	int r = -ENOMEM;
	if (!best)
		return r;
	if ((r = best_gpu_level(p, false, best, &bl, &found, &exh)) < 0)
		goto out;
	if (found && bl != RF_LEVEL_UNKNOWN && rf_level_at_least(bl, d->min_gpu_alignment)) {
		describe_gpus(best, bb, sizeof(bb));
		rf_eval_fail(
			e, RF_VERDICT_FAIL,
			"min-gpu-alignment %s: allocator would pick %s (%s); %s (%s) are free%s",
			want, picked, rf_level_name(check), bb, rf_level_name(bl),
			gpu_constraint_hint(best, d->min_gpu_alignment, hint, sizeof(hint)));
		goto out;
	}
	if ((r = best_gpu_level(p, true, best, &il, &found, &exh)) < 0)
		goto out;
	bool never = exh && (!found || (il != RF_LEVEL_UNKNOWN &&
					!rf_level_at_least(il, d->min_gpu_alignment)));
	rf_eval_fail(
		e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
		"min-gpu-alignment %s: allocator would pick %s (%s) and no free set is better; best "
		"on this node %s: %s",
		want, picked, rf_level_name(check),
		never ? "even with every device free" : "once devices are freed",
		found ? rf_level_name(il) : "none");
out:
	free(best);
	return r;
}

/* "cpudevnuma001 (NUMA 1)": the CPU devices of an assignment */
static void
describe_cpus(const struct rf_assignment *a, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < a->n && off < len; i++) {
		const struct rf_device *d = a->picks[i].dev;
		if (d->kind != RF_DEV_CPU)
			continue;
		if (d->loc.numa >= 0)
			off += (size_t)snprintf(buf + off, len - off, "%s%s (NUMA %d)",
						off ? " + " : "", d->name, d->loc.numa);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " + " : "",
						d->name);
	}
}

static void
describe_mask(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < 64 && off < len; i++)
		if ((mask >> i) & 1)
			off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "", i);
}

/* The constraint that puts a claim's CPUs on its NIC's NUMA node: dranet NICs and the CPU driver
 * both publish dra.net/numaNode (GPU drivers publish no NUMA attribute). */
static const char *
cpu_constraint_hint(const struct rf_assignment *a, char *buf, size_t len)
{
	const struct rf_pick *cpu = NULL, *nic = NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct rf_pick *pk = &a->picks[i];
		const bool has = rf_attr_find(pk->dev->attrs, pk->dev->n_attrs, "dra.net/numaNode");
		if (pk->dev->kind == RF_DEV_CPU && has && !cpu)
			cpu = pk;
		else if (pk->dev->kind == RF_DEV_NIC && has && !nic)
			nic = pk;
	}
	if (!cpu || !nic)
		return "";
	if (cpu->claim != nic->claim)
		snprintf(
			buf, len,
			": the CPUs (claim %s/%s) and the NIC (claim %s/%s) are in different claims "
			"and constraints only apply within one claim; put requests %s and %s in one "
			"claim with constraint matchAttribute dra.net/numaNode",
			cpu->claim->ns, cpu->claim->name, nic->claim->ns, nic->claim->name,
			cpu->request, nic->request);
	else
		snprintf(
			buf, len,
			": add constraint matchAttribute dra.net/numaNode over requests [%s %s] to "
			"claim %s/%s",
			nic->request, cpu->request, cpu->claim->ns, cpu->claim->name);
	return buf;
}

static double
cpu_score_fn(const struct rf_assignment *a, void *userdata)
{
	const struct score_ctx *sc = userdata;
	unsigned known, aligned;
	if (!rf_eval_cpu_alignment(sc->node, a, NULL, &known, &aligned, NULL))
		return 0;
	return (double)aligned / (double)known;
}

/* GPU to CPU: explain says where the CPUs come from; a min-alignment (the pod's or
 * filter.minAlignment) of NODE or better covers its DRA CPUs: they must sit on its GPUs' NUMA
 * node. */
int
rf_judge_cpu_alignment(struct pipeline *p)
{
	struct rf_node_eval *e = p->e;
	const struct rf_demand *d = p->d;
	char cpus[RF_REASON_LEN / 2], numa[96], bb[RF_REASON_LEN / 2], hint[RF_REASON_LEN];

	if (!e->n_cpus) {
		if (e->n_gpus)
			note(e,
			     "CPUs: from kubelet (the pod claims no %s devices): railfit cannot see "
			     "the cpuset kubelet's CPU manager gives it, so GPU-to-CPU alignment is "
			     "not scored",
			     p->cfg->devices.cpu_drivers.n ? p->cfg->devices.cpu_drivers.v[0]
							   : "DRA CPU");
		return 0;
	}
	describe_cpus(&e->predicted, cpus, sizeof(cpus));
	describe_mask(e->accel_numa, numa, sizeof(numa));
	if (!e->cpu_applies) {
		note(e, "CPUs %s: the NUMA node of the CPUs or of the GPUs and NICs is unknown",
		     cpus);
		return 0;
	}
	note(e, "CPUs %s: %u of %u on NUMA node %s of the pod's %s", cpus, e->n_cpus_aligned,
	     e->n_cpus_known, numa, e->n_gpus ? "GPUs" : "NICs");
	if (!rf_level_at_least(d->min_alignment, RF_LEVEL_NODE) ||
	    e->n_cpus_aligned == e->n_cpus_known)
		return 0;

	struct score_ctx sc = { p->n, p->cfg };
	struct rf_assignment *best = malloc(sizeof(*best));
	bool found = false, exh = false;
	unsigned known = 0, aligned = 0;
	int r = -ENOMEM;
	if (!best)
		return r;
	r = rf_predict_best(&p->sr, cpu_score_fn, &sc, best, &found, &exh);
	if (r < 0)
		goto out;
	if (found && rf_eval_cpu_alignment(p->n, best, NULL, &known, &aligned, NULL) &&
	    aligned == known) {
		describe_cpus(best, bb, sizeof(bb));
		rf_eval_fail(
			e, RF_VERDICT_FAIL,
			"min-alignment %s: allocator would pick CPUs %s off NUMA node %s of the pod's "
			"%s; %s are free%s",
			rf_level_name(d->min_alignment), cpus, numa, e->n_gpus ? "GPUs" : "NICs",
			bb, cpu_constraint_hint(best, hint, sizeof(hint)));
		goto out;
	}
	p->sr.ignore_usage = true;
	r = rf_predict_best(&p->sr, cpu_score_fn, &sc, best, &found, &exh);
	p->sr.ignore_usage = false;
	if (r < 0)
		goto out;
	bool never =
		exh && !(found && rf_eval_cpu_alignment(p->n, best, NULL, &known, &aligned, NULL) &&
			 aligned == known);
	rf_eval_fail(
		e, never ? RF_VERDICT_UNRESOLVABLE : RF_VERDICT_FAIL,
		"min-alignment %s: allocator would pick CPUs %s off NUMA node %s of the pod's %s, and "
		"no free set is better%s",
		rf_level_name(d->min_alignment), cpus, numa, e->n_gpus ? "GPUs" : "NICs",
		never ? " even with every device free" : "");
out:
	free(best);
	return r;
}
