/* ResourceClaim specs: requests (exactly / firstAvailable), selectors compiled through the CEL
 * cache, constraints. Anything railfit cannot evaluate marks the claim unsupported with a reason
 * instead of guessing (DESIGN section 6). Pure logic. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

#define MAX_COUNT 32 /* AllocationResultsMaxSize */

/* Strings the claim keeps are copied into its arena: the model keeps no pointer into the claim
 * objects it was built from (the server may pack them once the generation is built). NULL stays
 * NULL; *oom is set on failure. */
static const char *
dup(struct rf_arena *a, const char *s, bool *oom)
{
	char *d;
	if (!s)
		return NULL;
	if (!(d = rf_arena_strdup(a, s)))
		*oom = true;
	return d;
}

static void
unsupported(struct rf_arena *a, struct rf_claim *cl, const char *why)
{
	if (!cl->unsupported)
		cl->unsupported = rf_arena_strdup(a, why);
}

static int
parse_alt(struct rf_arena *a, const struct rf_cluster *c, struct rf_claim *cl,
	  struct rf_request_alt *alt, const char *name, const json_t *ex, bool sub)
{
	char buf[512];
	bool oom = false;

	alt->name = name;
	alt->class_name = dup(a, rf_jstr(ex, "deviceClassName"), &oom);
	if (oom)
		return -ENOMEM;
	if (!alt->class_name || !alt->class_name[0]) {
		snprintf(buf, sizeof(buf), "request %s: no deviceClassName", name);
		unsupported(a, cl, buf);
		return 0;
	}
	const char *mode = rf_jstr(ex, "allocationMode");
	alt->all = mode && strcmp(mode, "All") == 0;
	if (mode && !alt->all && strcmp(mode, "ExactCount") != 0) {
		snprintf(buf, sizeof(buf), "request %s: unknown allocationMode %s", name, mode);
		unsupported(a, cl, buf);
	}
	alt->count = alt->all ? 0 : rf_jint(ex, "count", 1);
	/* a subrequest asking more than an allocation holds is only skipped by the allocator (the
	 * claim's limit applies to its smallest alternative: rf_claim_parse_spec) */
	if (!alt->all && (alt->count < 1 || alt->count > (sub ? INT32_MAX : MAX_COUNT))) {
		snprintf(buf, sizeof(buf), "request %s: count %lld is outside 1..%ld", name,
			 (long long)alt->count, sub ? (long)INT32_MAX : (long)MAX_COUNT);
		unsupported(a, cl, buf);
	}
	alt->admin_access = !sub && rf_jbool(ex, "adminAccess", false);

	const json_t *sels = json_object_get(ex, "selectors");
	size_t ns = json_array_size(sels);
	alt->selectors = rf_arena_calloc(a, ns ? ns : 1, sizeof(*alt->selectors));
	alt->selector_texts = rf_arena_calloc(a, ns ? ns : 1, sizeof(char *));
	if (!alt->selectors || !alt->selector_texts)
		return -ENOMEM;
	for (size_t i = 0; i < ns; i++) {
		const char *expr =
			json_string_value(rf_jpath(json_array_get(sels, i), "cel.expression"));
		struct rf_cel_error err = { 0 };
		if (!expr) {
			snprintf(buf, sizeof(buf),
				 "request %s: selector #%zu has no cel.expression", name, i);
			unsupported(a, cl, buf);
			continue;
		}
		int r = rf_cluster_selector(c, expr, &alt->selectors[alt->n_selectors], &err);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			snprintf(buf, sizeof(buf), "request %s: selector %s: %s", name, expr,
				 err.msg);
			unsupported(a, cl, buf);
			continue;
		}
		if (!(alt->selector_texts[alt->n_selectors++] = dup(a, expr, &oom)))
			return -ENOMEM;
	}

	const json_t *tols = json_object_get(ex, "tolerations");
	size_t nt = json_array_size(tols);
	if (nt) {
		alt->tolerations = rf_arena_calloc(a, nt, sizeof(*alt->tolerations));
		if (!alt->tolerations)
			return -ENOMEM;
		for (size_t i = 0; i < nt; i++) {
			const json_t *t = json_array_get(tols, i);
			alt->tolerations[i].key = dup(a, rf_jstr(t, "key"), &oom);
			alt->tolerations[i].op = dup(a, rf_jstr(t, "operator"), &oom);
			alt->tolerations[i].value = dup(a, rf_jstr(t, "value"), &oom);
			alt->tolerations[i].effect = dup(a, rf_jstr(t, "effect"), &oom);
			if (oom)
				return -ENOMEM;
		}
		alt->n_tolerations = nt;
	}

	const json_t *creq = rf_jpath(ex, "capacity.requests");
	size_t nc = json_object_size(creq);
	if (nc) {
		alt->cap_request_names = rf_arena_calloc(a, nc, sizeof(char *));
		alt->cap_request_values = rf_arena_calloc(a, nc, sizeof(struct rf_quantity));
		if (!alt->cap_request_names || !alt->cap_request_values)
			return -ENOMEM;
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)creq, k, v) {
			const char *qs = json_string_value(v);
			if (!qs || rf_quantity_parse(
					   qs, &alt->cap_request_values[alt->n_cap_requests]) < 0) {
				snprintf(buf, sizeof(buf),
					 "request %s: capacity.requests[%s] is not a quantity",
					 name, k);
				unsupported(a, cl, buf);
				continue;
			}
			if (!(alt->cap_request_names[alt->n_cap_requests++] = dup(a, k, &oom)))
				return -ENOMEM;
		}
	}
	return 0;
}

int
rf_claim_parse_spec(struct rf_arena *a, const struct rf_cluster *c, struct rf_claim *cl,
		    const json_t *spec)
{
	const json_t *reqs = rf_jpath(spec, "devices.requests");
	size_t n = json_array_size(reqs);
	char buf[512];

	cl->requests = rf_arena_calloc(a, n ? n : 1, sizeof(*cl->requests));
	if (!cl->requests)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *rj = json_array_get(reqs, i);
		struct rf_request *rq = &cl->requests[cl->n_requests];
		bool oom = false;
		rq->name = dup(a, rf_jstr(rj, "name"), &oom);
		if (oom)
			return -ENOMEM;
		if (!rq->name) {
			unsupported(a, cl, "a request has no name");
			continue;
		}
		const json_t *ex = json_object_get(rj, "exactly");
		const json_t *fa = json_object_get(rj, "firstAvailable");
		if (json_is_object(ex)) {
			rq->alts = rf_arena_calloc(a, 1, sizeof(*rq->alts));
			if (!rq->alts)
				return -ENOMEM;
			rq->n_alts = 1;
			if (parse_alt(a, c, cl, &rq->alts[0], rq->name, ex, false) < 0)
				return -ENOMEM;
		} else if (json_array_size(fa) > 0) {
			size_t ns = json_array_size(fa);
			rq->first_available = true;
			rq->alts = rf_arena_calloc(a, ns, sizeof(*rq->alts));
			if (!rq->alts)
				return -ENOMEM;
			for (size_t s = 0; s < ns; s++) {
				const json_t *sj = json_array_get(fa, s);
				const char *sn = rf_jstr(sj, "name");
				if (!sn) {
					snprintf(buf, sizeof(buf),
						 "request %s: a firstAvailable entry has no name",
						 rq->name);
					unsupported(a, cl, buf);
					continue;
				}
				char *full = rf_arena_printf(a, "%s/%s", rq->name, sn);
				if (!full)
					return -ENOMEM;
				if (parse_alt(a, c, cl, &rq->alts[rq->n_alts++], full, sj, true) <
				    0)
					return -ENOMEM;
			}
		} else if (json_is_object(rj) && rf_jstr(rj, "deviceClassName")) {
			/* the pre-v1 flat shape (v1beta1): treat as exactly */
			rq->alts = rf_arena_calloc(a, 1, sizeof(*rq->alts));
			if (!rq->alts)
				return -ENOMEM;
			rq->n_alts = 1;
			if (parse_alt(a, c, cl, &rq->alts[0], rq->name, rj, false) < 0)
				return -ENOMEM;
		} else {
			snprintf(buf, sizeof(buf), "request %s: neither exactly nor firstAvailable",
				 rq->name);
			unsupported(a, cl, buf);
			continue;
		}
		cl->n_requests++;
	}

	const json_t *cons = rf_jpath(spec, "devices.constraints");
	size_t nc = json_array_size(cons);
	cl->constraints = rf_arena_calloc(a, nc ? nc : 1, sizeof(*cl->constraints));
	if (!cl->constraints)
		return -ENOMEM;
	for (size_t i = 0; i < nc; i++) {
		const json_t *cj = json_array_get(cons, i);
		struct rf_constraint *co = &cl->constraints[cl->n_constraints];
		bool oom = false;
		co->match_attribute = dup(a, rf_jstr(cj, "matchAttribute"), &oom);
		co->distinct_attribute = dup(a, rf_jstr(cj, "distinctAttribute"), &oom);
		if (oom)
			return -ENOMEM;
		if (!co->match_attribute && !co->distinct_attribute) {
			/* a constraint kind from a newer API: the allocator fails such a claim */
			snprintf(buf, sizeof(buf),
				 "constraint #%zu: empty constraint (unsupported "
				 "constraint type?)",
				 i);
			unsupported(a, cl, buf);
			continue;
		}
		const json_t *rn = json_object_get(cj, "requests");
		size_t nr = json_array_size(rn);
		co->requests = rf_arena_calloc(a, nr ? nr : 1, sizeof(char *));
		if (!co->requests)
			return -ENOMEM;
		for (size_t r = 0; r < nr; r++) {
			const char *s = json_string_value(json_array_get(rn, r));
			if (s && !(co->requests[co->n_requests++] = dup(a, s, &oom)))
				return -ENOMEM;
		}
		cl->n_constraints++;
	}
	if (n == 0)
		unsupported(a, cl, "the claim has no requests");
	/* the allocator refuses a claim whose smallest choice is more devices than an allocation
	 * result holds (All counts as none: its size is known only on a node) */
	int64_t min_devices = 0;
	for (size_t i = 0; i < cl->n_requests; i++) {
		int64_t least = INT64_MAX;
		for (size_t k = 0; k < cl->requests[i].n_alts; k++)
			if (cl->requests[i].alts[k].count < least)
				least = cl->requests[i].alts[k].count;
		if (least != INT64_MAX)
			min_devices += least;
	}
	if (min_devices > MAX_COUNT) {
		snprintf(buf, sizeof(buf),
			 "number of requested devices %lld exceeds the claim limit of %d",
			 (long long)min_devices, MAX_COUNT);
		unsupported(a, cl, buf);
	}
	return 0;
}

struct owned_claim {
	struct rf_claim claim; /* first: rf_claim_free casts back */
	struct rf_arena *arena;
	json_t *spec;
};

struct rf_claim *
rf_claim_from_template(const struct rf_cluster *c, const char *ns, const char *pod_name,
		       const char *entry_name, const json_t *tmpl, const char **ret_err)
{
	const json_t *spec = rf_jpath(tmpl, "spec.spec");
	struct owned_claim *oc;

	if (!json_is_object(spec)) {
		*ret_err = "the ResourceClaimTemplate has no spec.spec";
		return NULL;
	}
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return NULL;
	oc->arena = rf_arena_new();
	oc->spec = json_deep_copy(spec);
	if (!oc->arena || !oc->spec)
		goto fail;
	oc->claim.ns = rf_arena_strdup(oc->arena, ns);
	oc->claim.name = rf_arena_printf(oc->arena, "%s-%s", pod_name, entry_name);
	oc->claim.from_template = true;
	if (!oc->claim.ns || !oc->claim.name ||
	    rf_claim_parse_spec(oc->arena, c, &oc->claim, oc->spec) < 0)
		goto fail;
	return &oc->claim;
fail:
	rf_claim_free(&oc->claim);
	return NULL;
}

void
rf_claim_free(struct rf_claim *claim)
{
	if (!claim)
		return;
	struct owned_claim *oc = (struct owned_claim *)claim;
	rf_arena_free(oc->arena);
	json_decref(oc->spec);
	free(oc);
}
