/* Pod demand resolution (see demand.h). */
#include "alloc/demand.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc-private.h"

const char *
rf_demand_kind_name(enum rf_demand_kind k)
{
	switch (k) {
	case RF_DEMAND_NONE:
		return "none";
	case RF_DEMAND_KNOWN:
		return "known";
	case RF_DEMAND_UNKNOWN:
		return "unknown";
	}
	return "?";
}

static void __attribute__((format(printf, 2, 3)))
set_unknown(struct rf_demand *d, const char *fmt, ...)
{
	va_list ap;
	if (d->kind == RF_DEMAND_UNKNOWN)
		return;
	d->kind = RF_DEMAND_UNKNOWN;
	va_start(ap, fmt);
	vsnprintf(d->unknown_reason, sizeof(d->unknown_reason), fmt, ap);
	va_end(ap);
	rf_utf8_trim(d->unknown_reason);
}

static void
bw_annotation(struct rf_demand *d, const json_t *ann, const char *key, bool *has,
	      struct rf_quantity *q)
{
	const char *v = rf_jstr(ann, key);
	struct rf_quantity tmp;
	if (!v)
		return;
	if (rf_quantity_parse(v, &tmp) < 0 || rf_quantity_cmp(tmp, rf_quantity_from_int(0)) < 0) {
		if (!d->bad_annotation[0])
			snprintf(
				d->bad_annotation, sizeof(d->bad_annotation),
				"annotation %s: expected a non-negative quantity such as 100G, got "
				"\"%.64s\"; not counted",
				key, v);
		rf_utf8_trim(d->bad_annotation);
		return;
	}
	*has = true;
	*q = tmp;
}

static const struct rf_class *
alt_class(const struct rf_cluster *c, const struct rf_request_alt *alt)
{
	return alt->class_name ? rf_cluster_class(c, alt->class_name) : NULL;
}

/* A claim whose selectors reference a missing class, or that railfit cannot evaluate. */
static const char *
claim_problem(const struct rf_cluster *c, const struct rf_claim *cl, char *buf, size_t len)
{
	if (cl->unsupported)
		return cl->unsupported;
	for (size_t r = 0; r < cl->n_requests; r++)
		for (size_t a = 0; a < cl->requests[r].n_alts; a++) {
			const struct rf_request_alt *alt = &cl->requests[r].alts[a];
			const struct rf_class *cls = alt_class(c, alt);
			if (!cls) {
				snprintf(buf, len, "request %s: deviceclass %s does not exist",
					 alt->name, alt->class_name);
				return buf;
			}
			if (cls->unsupported)
				return cls->unsupported;
		}
	return NULL;
}

static size_t
n_alts(const struct rf_claim *cl)
{
	size_t n = 0;
	for (size_t r = 0; cl && r < cl->n_requests; r++)
		n += cl->requests[r].n_alts;
	return n;
}

/* The classes of cl's alternatives, looked up in c (once per claim). */
static void
resolve_claim_classes(const struct rf_cluster *c, struct rf_demand *d, const struct rf_claim *cl)
{
	if (!cl || rf_demand_classes(d, cl) ||
	    d->n_classes_of == sizeof(d->classes_of) / sizeof(d->classes_of[0]))
		return;
	d->classes_of[d->n_classes_of++] = (struct rf_claim_classes){ cl, d->n_alt_classes };
	for (size_t r = 0; r < cl->n_requests; r++)
		for (size_t a = 0; a < cl->requests[r].n_alts; a++)
			d->alt_classes[d->n_alt_classes++] = alt_class(c, &cl->requests[r].alts[a]);
}

/* The classes of every claim the demand may search for, in the generation it is resolved in:
 * once here, not per node or device. */
static int
resolve_classes(const struct rf_cluster *c, struct rf_demand *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n_claims; i++)
		n += n_alts(d->claims[i]);
	for (size_t m = 1; d->n_ext && m < ((size_t)1 << d->n_ext); m++)
		n += n_alts(d->ext_variants[m]);
	if (!(d->alt_classes = malloc((n + 1) * sizeof(*d->alt_classes))))
		return -ENOMEM;
	for (size_t i = 0; i < d->n_claims; i++)
		resolve_claim_classes(c, d, d->claims[i]);
	for (size_t m = 1; d->n_ext && m < ((size_t)1 << d->n_ext); m++)
		resolve_claim_classes(c, d, d->ext_variants[m]);
	return 0;
}

const struct rf_class *const *
rf_demand_classes(const struct rf_demand *d, const struct rf_claim *cl)
{
	for (size_t i = 0; i < d->n_classes_of; i++)
		if (d->classes_of[i].claim == cl)
			return d->alt_classes + d->classes_of[i].at;
	return NULL;
}

int
rf_demand_resolve(const struct rf_cluster *c, const json_t *pod, struct rf_demand *d)
{
	const struct rf_config *cfg = rf_cluster_config(c);
	const json_t *ann = rf_jpath(pod, "metadata.annotations");
	const json_t *labels = rf_jpath(pod, "metadata.labels");
	const char *name = json_string_value(rf_jpath(pod, "metadata.name"));
	const char *ns = json_string_value(rf_jpath(pod, "metadata.namespace"));
	char buf[384];

	memset(d, 0, sizeof(*d));
	if (!ns || !ns[0])
		ns = "default";
	snprintf(d->ns_buf, sizeof(d->ns_buf), "%s", ns);
	snprintf(d->pod_key, sizeof(d->pod_key), "%s/%s", ns, name ? name : "");
	rf_utf8_trim(d->pod_key);
	rf_utf8_trim(d->ns_buf);
	d->pod_ns = d->ns_buf;
	const char *slash = strchr(d->pod_key, '/');
	d->pod_name = slash ? slash + 1 : "";
	d->min_alignment = cfg->filter.min_alignment;

	bw_annotation(d, ann, "railfit.io/nic-bandwidth", &d->has_nic_bw, &d->nic_bw);
	bw_annotation(d, ann, "kubernetes.io/egress-bandwidth", &d->has_egress, &d->egress);
	bw_annotation(d, ann, "kubernetes.io/ingress-bandwidth", &d->has_ingress, &d->ingress);

	const char *g = rf_jstr(ann, "railfit.io/group");
	for (size_t l = 0; !g && l < cfg->groups.labels.n; l++)
		g = rf_jstr(labels, cfg->groups.labels.v[l]);
	if (g && g[0]) {
		snprintf(d->group, sizeof(d->group), "%s/%s", ns, g);
		d->rail_group = rf_cluster_group(c, d->group); /* once, not per node */
		rf_rail_target_init(&d->rail_target, c, d->rail_group);
		rf_cluster_group_places(c, d->group, &d->places);
	}

	const json_t *entries = rf_jpath(pod, "spec.resourceClaims");
	size_t n = json_array_size(entries);
	bool ext_done = false;
	int xr;
	if (n == 0 && !d->has_egress && !d->has_ingress && !d->has_nic_bw) {
		/* no claims: railfit's business only through extended resources backed by DRA */
		if ((xr = rf_demand_add_extended(c, pod, d, buf, sizeof(buf))) < 0) {
			rf_demand_release(d);
			return xr;
		}
		if (xr == 0 && !d->n_claims && !d->n_pinned)
			return 0; /* not railfit's business: RF_DEMAND_NONE */
		d->kind = RF_DEMAND_KNOWN;
		if (xr == 1)
			set_unknown(d, "%s", buf);
		ext_done = true;
	}
	d->kind = d->kind == RF_DEMAND_UNKNOWN ? d->kind : RF_DEMAND_KNOWN;

	const char *ma = rf_jstr(ann, "railfit.io/min-alignment");
	if (ma) {
		enum rf_level l;
		if (rf_level_parse(ma, &l) < 0 || l == RF_LEVEL_UNKNOWN)
			set_unknown(
				d,
				"annotation railfit.io/min-alignment: expected one of PIX, PXB, "
				"PHB, NODE, SYS, got \"%.64s\"",
				ma);
		else {
			d->min_alignment = l;
			d->min_alignment_from_pod = true;
		}
	}
	const char *mg = rf_jstr(ann, "railfit.io/min-gpu-alignment");
	if (mg) {
		enum rf_level l;
		if (rf_level_parse_gpu(mg, &l) < 0 || l == RF_LEVEL_UNKNOWN)
			set_unknown(
				d,
				"annotation railfit.io/min-gpu-alignment: expected one of NVL, PIX, "
				"PXB, PHB, NODE, SYS, got \"%.64s\"",
				mg);
		else {
			d->min_gpu_alignment = l;
			d->has_min_gpu_alignment = true;
		}
	}
	const char *ms = rf_jstr(ann, "railfit.io/max-spread");
	if (ms) {
		if (strcmp(ms, "block") == 0)
			d->max_spread = RF_SPREAD_BLOCK;
		else if (strcmp(ms, "spine") == 0)
			d->max_spread = RF_SPREAD_SPINE;
		else
			set_unknown(
				d,
				"annotation railfit.io/max-spread: expected block or spine, got "
				"\"%.64s\"",
				ms);
	}
	if (n > RF_MAX_POD_CLAIMS) {
		set_unknown(d, "the pod has more than %d resourceClaims", RF_MAX_POD_CLAIMS);
		return 0;
	}
	for (size_t i = 0; i < n && d->kind != RF_DEMAND_UNKNOWN; i++) {
		const json_t *e = json_array_get(entries, i);
		const char *entry = rf_jstr(e, "name");
		const char *cn = rf_pod_claim_name(pod, e);
		const struct rf_claim *cl = NULL;
		if (!cn && rf_pod_claim_not_needed(pod, e))
			continue;
		if (cn) {
			cl = rf_cluster_claim(c, ns, cn);
			if (!cl) {
				set_unknown(
					d, "resourceclaim %s/%s (pod claim %s) is not in the cache",
					ns, cn, entry);
				break;
			}
		} else {
			/* the controller has not created the claim yet: read the template */
			const char *tn = rf_jstr(e, "resourceClaimTemplateName");
			const json_t *t = tn ? rf_cluster_template(c, ns, tn) : NULL;
			const char *why = "unknown";
			if (!tn) {
				set_unknown(d,
					    "pod claim %s names neither resourceClaimName nor "
					    "resourceClaimTemplateName",
					    entry);
				break;
			}
			if (!t) {
				set_unknown(
					d,
					"pod claim %s: its ResourceClaim from template %s/%s has "
					"not been created yet",
					entry, ns, tn);
				break;
			}
			struct rf_claim *own =
				rf_claim_from_template(c, ns, name ? name : "pod", entry, t, &why);
			if (!own) {
				if (strcmp(why, "unknown") == 0) {
					rf_demand_release(d);
					return -ENOMEM;
				}
				set_unknown(d, "pod claim %s: template %s: %s", entry, tn, why);
				break;
			}
			d->owned[d->n_owned++] = own;
			cl = own;
		}
		if (cl->allocated) {
			d->pinned[d->n_pinned++] = cl;
			continue;
		}
		const char *problem = claim_problem(c, cl, buf, sizeof(buf));
		if (problem) {
			set_unknown(d, "resourceclaim %s/%s: %s", cl->ns, cl->name, problem);
			break;
		}
		d->claims[d->n_claims++] = cl;
	}
	/* the extended-resource claim comes after the pod's own claims */
	if (!ext_done && d->kind == RF_DEMAND_KNOWN) {
		if ((xr = rf_demand_add_extended(c, pod, d, buf, sizeof(buf))) < 0) {
			rf_demand_release(d);
			return xr;
		}
		if (xr == 1)
			set_unknown(d, "%s", buf);
	}
	if (d->kind == RF_DEMAND_KNOWN && !d->n_claims && !d->n_pinned && !d->has_egress &&
	    !d->has_ingress && !d->has_nic_bw)
		d->kind = RF_DEMAND_NONE; /* every claim entry turned out not to be needed */
	if (d->kind == RF_DEMAND_KNOWN && resolve_classes(c, d) < 0) {
		rf_demand_release(d);
		return -ENOMEM;
	}
	return 0;
}

void
rf_demand_release(struct rf_demand *d)
{
	for (size_t i = 0; i < d->n_owned; i++)
		rf_claim_free(d->owned[i]);
	d->n_owned = 0;
	free(d->alt_classes);
	d->alt_classes = NULL;
	d->n_alt_classes = d->n_classes_of = 0;
}
