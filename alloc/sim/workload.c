/* Synthetic workloads: parse the SPEC (see workload.h), then build the objects. */
#include "alloc/sim/workload.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/level.h"
#include "config/quantity.h"

struct item {
	char text[64]; /* the item as written, for messages and names */
	unsigned count;
	bool loader;
	unsigned gpus, nics;
	bool nics_given;
	unsigned pairs;
	unsigned job;  /* pods per Job, 0 = standalone */
	unsigned cpus; /* DRA CPUs (devices.cpuDrivers, grouped mode), 0 = none */
	char bw[32], egress[32], ingress[32];
	char min[8];
};

static int __attribute__((format(printf, 3, 4))) bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal number from lo to hi at *p; advances p. */
static bool
number(const char **p, unsigned lo, unsigned hi, unsigned *ret)
{
	char *end;
	if (**p < '0' || **p > '9')
		return false;
	unsigned long v = strtoul(*p, &end, 10);
	if (v < lo || v > hi)
		return false;
	*p = end;
	*ret = (unsigned)v;
	return true;
}

static int
parse_shape(const char *s, size_t len, struct item *it, char *err, size_t errlen)
{
	char buf[64];
	if (len >= sizeof(buf))
		goto fail;
	memcpy(buf, s, len);
	buf[len] = 0;
	const char *p = buf;
	if (strcmp(buf, "loader") == 0) {
		it->loader = true;
		return 0;
	}
	unsigned n;
	if (!number(&p, 1, 16, &n))
		goto fail;
	if (strcmp(p, "pair") == 0 && n <= 8) {
		it->pairs = n;
		return 0;
	}
	if (strncmp(p, "gpu", 3) != 0)
		goto fail;
	it->gpus = n;
	p += 3;
	if (!*p)
		return 0;
	if (!number(&p, 0, 16, &it->nics) || strcmp(p, "nic") != 0)
		goto fail;
	it->nics_given = true;
	return 0;
fail:
	return bad(err, errlen,
		   "--workload item '%s': shape '%.*s': expected <g>gpu, <g>gpu<n>nic (g 1..16, n "
		   "0..16), <p>pair (1..8) or loader",
		   it->text, (int)len, s);
}

static int
parse_quantity(const char *v, char *dst, size_t dstlen, const struct item *it, const char *mod,
	       char *err, size_t errlen)
{
	struct rf_quantity q;
	if (!*v || strlen(v) >= dstlen || rf_quantity_parse(v, &q) < 0 ||
	    rf_quantity_cmp(q, rf_quantity_from_int(0)) <= 0)
		return bad(err, errlen,
			   "--workload item '%s': %s%s: expected a positive quantity such as 100G",
			   it->text, mod, v);
	snprintf(dst, dstlen, "%s", v);
	return 0;
}

static int
parse_mod(const char *s, size_t len, struct item *it, char *err, size_t errlen)
{
	char buf[64];
	if (len >= sizeof(buf))
		return bad(err, errlen, "--workload item '%s': modifier too long", it->text);
	memcpy(buf, s, len);
	buf[len] = 0;
	const char *p;
	if (strncmp(buf, "job", 3) == 0) {
		p = buf + 3;
		if (!number(&p, 1, 1000, &it->job) || *p)
			return bad(err, errlen,
				   "--workload item '%s': %s: expected job<k>, k from 1 to 1000",
				   it->text, buf);
		return 0;
	}
	if (strncmp(buf, "cpu", 3) == 0) {
		p = buf + 3;
		if (!number(&p, 1, 4096, &it->cpus) || *p)
			return bad(err, errlen,
				   "--workload item '%s': %s: expected cpu<k>, k from 1 to 4096",
				   it->text, buf);
		return 0;
	}
	if (strncmp(buf, "bw", 2) == 0)
		return parse_quantity(buf + 2, it->bw, sizeof(it->bw), it, "bw", err, errlen);
	if (strncmp(buf, "egress", 6) == 0)
		return parse_quantity(buf + 6, it->egress, sizeof(it->egress), it, "egress", err,
				      errlen);
	if (strncmp(buf, "ingress", 7) == 0)
		return parse_quantity(buf + 7, it->ingress, sizeof(it->ingress), it, "ingress", err,
				      errlen);
	if (strncmp(buf, "min", 3) == 0) {
		enum rf_level l;
		if (rf_level_parse(buf + 3, &l) < 0 || l > RF_LEVEL_NODE)
			return bad(err, errlen,
				   "--workload item '%s': %s: expected min<LEVEL>, LEVEL one of "
				   "PIX, PXB, PHB, NODE",
				   it->text, buf);
		snprintf(it->min, sizeof(it->min), "%s", rf_level_name(l));
		return 0;
	}
	return bad(err, errlen,
		   "--workload item '%s': unknown modifier '%s' (expected job<k>, cpu<k>, bw<Q>, "
		   "min<LEVEL>, egress<Q> or ingress<Q>)",
		   it->text, buf);
}

static int
parse_item(const char *s, size_t len, struct item *it, char *err, size_t errlen)
{
	memset(it, 0, sizeof(*it));
	snprintf(it->text, sizeof(it->text), "%.*s", (int)(len < 63 ? len : 63), s);
	const char *p = it->text, *x = strchr(it->text, 'x');
	if (len >= sizeof(it->text) || !x || !number(&p, 1, RF_WORKLOAD_MAX_PODS, &it->count) ||
	    p != x)
		return bad(err, errlen,
			   "--workload item '%s': expected COUNTxSHAPE such as 200x1gpu1nic "
			   "(COUNT from 1 to %d)",
			   it->text, RF_WORKLOAD_MAX_PODS);
	p = x + 1;
	const char *dash = strchr(p, '-');
	size_t slen = dash ? (size_t)(dash - p) : strlen(p);
	int r = parse_shape(p, slen, it, err, errlen);
	while (r == 0 && dash) {
		p = dash + 1;
		dash = strchr(p, '-');
		r = parse_mod(p, dash ? (size_t)(dash - p) : strlen(p), it, err, errlen);
	}
	if (r == 0 && it->job && !it->nics_given && it->gpus)
		it->nics = it->gpus; /* a multi-node job's GPUs each need their rail */
	return r;
}

/* ---- objects ---- */

static json_t *
selector_class(const char *name, const struct rf_strv *drivers, const char *attr, const char *value)
{
	char expr[2048];
	size_t off = 0;
	for (size_t i = 0; i < drivers->n && off < sizeof(expr); i++)
		off += (size_t)snprintf(expr + off, sizeof(expr) - off,
					"%s(device.driver == '%s' && (!has(device.attributes['%s']."
					"%s) || device.attributes['%s'].%s == %s))",
					i ? " || " : "", drivers->v[i], drivers->v[i], attr,
					drivers->v[i], attr, value);
	if (!drivers->n)
		snprintf(expr, sizeof(expr), "false");
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name", name,
			 "spec", "selectors", "cel", "expression", expr);
}

/* A DeviceClass of every device of the drivers. */
static json_t *
driver_class(const char *name, const struct rf_strv *drivers)
{
	char expr[2048];
	size_t off = 0;
	for (size_t i = 0; i < drivers->n && off < sizeof(expr); i++)
		off += (size_t)snprintf(expr + off, sizeof(expr) - off, "%sdevice.driver == '%s'",
					i ? " || " : "", drivers->v[i]);
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion",
			 "resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name", name,
			 "spec", "selectors", "cel", "expression", expr);
}

static json_t *
request(const char *name, const char *cls, unsigned count)
{
	return json_pack("{s:s, s:{s:s, s:s, s:I}}", "name", name, "exactly", "deviceClassName",
			 cls, "allocationMode", "ExactCount", "count", (json_int_t)count);
}

/* k CPUs of one shared device of the CPU driver in grouped mode: its consumable capacity
 * <driver>/cpu. */
static json_t *
cpu_request(const struct rf_config *cfg, unsigned k)
{
	char cap[300], q[16];
	snprintf(cap, sizeof(cap), "%s/cpu", cfg->devices.cpu_drivers.v[0]);
	snprintf(q, sizeof(q), "%u", k);
	return json_pack("{s:s, s:{s:s, s:{s:{s:s}}}}", "name", "cpus", "exactly",
			 "deviceClassName", RF_WORKLOAD_CPU_CLASS, "capacity", "requests", cap, q);
}

/* The claim spec of an item's pod; NULL when the pod has no devices (a loader). */
static json_t *
claim_spec(const struct rf_config *cfg, const struct item *it)
{
	json_t *reqs = json_array(), *cons = json_array();
	char a[16], b[16];
	if (!reqs || !cons)
		goto fail;
	if (it->pairs) {
		for (unsigned i = 0; i < it->pairs; i++) {
			snprintf(a, sizeof(a), "gpu-%u", i);
			snprintf(b, sizeof(b), "nic-%u", i);
			if (json_array_append_new(reqs, request(a, RF_WORKLOAD_GPU_CLASS, 1)) < 0 ||
			    json_array_append_new(reqs, request(b, RF_WORKLOAD_NIC_CLASS, 1)) < 0 ||
			    json_array_append_new(cons,
						  json_pack("{s:[s,s], s:s}", "requests", a, b,
							    "matchAttribute",
							    "resource.kubernetes.io/pcieRoot")) < 0)
				goto fail;
		}
	} else if (it->gpus) {
		if (json_array_append_new(reqs, request("gpu", RF_WORKLOAD_GPU_CLASS, it->gpus)) <
			    0 ||
		    (it->nics && json_array_append_new(reqs, request("nic", RF_WORKLOAD_NIC_CLASS,
								     it->nics)) < 0))
			goto fail;
	} else if (!it->cpus) {
		json_decref(reqs);
		json_decref(cons);
		return NULL;
	}
	if (it->cpus && json_array_append_new(reqs, cpu_request(cfg, it->cpus)) < 0)
		goto fail;
	json_t *devices = json_pack("{s:o}", "requests", reqs);
	reqs = NULL;
	if (!devices)
		goto fail;
	if (json_array_size(cons))
		json_object_set(devices, "constraints", cons);
	json_decref(cons);
	return json_pack("{s:o}", "devices", devices);
fail:
	json_decref(reqs);
	json_decref(cons);
	return NULL;
}

/* "1gpu1nic-job4" -> "1gpu1nic-job4" made a DNS label: lowercase, '.' and others to '-'. */
static void
label_of(const char *text, char *out, size_t len)
{
	size_t i = 0;
	for (const char *p = strchr(text, 'x') + 1; *p && i + 1 < len; p++, i++)
		out[i] = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a')
			 : ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')) ? *p
										  : '-';
	out[i] = 0;
}

struct gen {
	const struct rf_config *cfg;
	json_t *pods, *claims;
	unsigned serial;
};

static int
add_pod(struct gen *g, const struct item *it, size_t item_idx, unsigned idx, const char *job)
{
	char label[64], name[160], cname[192], uid[64], cpu[16], mem[16];
	label_of(it->text, label, sizeof(label));
	if (job)
		snprintf(name, sizeof(name), "%s-%u", job, idx % it->job);
	else
		snprintf(name, sizeof(name), "w%zu-%s-%u", item_idx, label, idx);
	snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012x", ++g->serial);
	unsigned gpus = it->pairs ? it->pairs : it->gpus;
	snprintf(cpu, sizeof(cpu), "%u", gpus ? 8 * gpus : 2);
	snprintf(mem, sizeof(mem), "%uGi", gpus ? 64 * gpus : 8);
	json_t *ann = json_object(), *labels = json_object();
	json_t *pod = NULL, *spec = NULL, *cs = claim_spec(g->cfg, it);
	if (!ann || !labels)
		goto fail;
	if ((it->bw[0] &&
	     json_object_set_new(ann, "railfit.io/nic-bandwidth", json_string(it->bw)) < 0) ||
	    (it->min[0] &&
	     json_object_set_new(ann, "railfit.io/min-alignment", json_string(it->min)) < 0) ||
	    (it->egress[0] && json_object_set_new(ann, "kubernetes.io/egress-bandwidth",
						  json_string(it->egress)) < 0) ||
	    (it->ingress[0] && json_object_set_new(ann, "kubernetes.io/ingress-bandwidth",
						   json_string(it->ingress)) < 0) ||
	    (job &&
	     json_object_set_new(labels, "batch.kubernetes.io/job-name", json_string(job)) < 0))
		goto fail;
	spec = json_pack("{s:s, s:[{s:s, s:{s:{s:s, s:s}}}]}", "schedulerName", "railfit",
			 "containers", "name", "main", "resources", "requests", "cpu", cpu,
			 "memory", mem);
	pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:O, s:O}, s:O, s:{s:s}}", "apiVersion",
			"v1", "kind", "Pod", "metadata", "name", name, "namespace", RF_WORKLOAD_NS,
			"uid", uid, "creationTimestamp", "2026-01-01T00:00:00Z", "labels", labels,
			"annotations", ann, "spec", spec, "status", "phase", "Pending");
	if (!spec || !pod)
		goto fail;
	if (cs) {
		snprintf(cname, sizeof(cname), "%s-devices", name);
		snprintf(uid, sizeof(uid), "00000000-0000-4000-9000-%012x", g->serial);
		json_t *claim =
			json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:O}", "apiVersion",
				  "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name",
				  cname, "namespace", RF_WORKLOAD_NS, "uid", uid, "spec", cs);
		if (!claim || json_array_append_new(g->claims, claim) < 0 ||
		    json_object_set_new(json_object_get(pod, "spec"), "resourceClaims",
					json_pack("[{s:s, s:s}]", "name", "devices",
						  "resourceClaimName", cname)) < 0)
			goto fail;
	}
	json_decref(ann);
	json_decref(labels);
	json_decref(spec);
	json_decref(cs);
	return json_array_append_new(g->pods, pod) < 0 ? -ENOMEM : 0;
fail:
	json_decref(ann);
	json_decref(labels);
	json_decref(spec);
	json_decref(cs);
	json_decref(pod);
	return -ENOMEM;
}

/* splitmix64: the arrival order's shuffle */
static uint64_t
next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* An arrival unit: one pod, or one Job's pods together. */
struct unit {
	size_t item;
	unsigned first, n;
};

int
rf_workload_generate(const char *spec, const struct rf_config *cfg, uint64_t seed,
		     struct rf_workload *ret, char *err, size_t errlen)
{
	struct item *items = NULL;
	struct unit *units = NULL;
	size_t n_items = 0, n_units = 0, total = 0;
	bool cpus = false;
	struct gen g = { .cfg = cfg };
	int r = -ENOMEM;
	memset(ret, 0, sizeof(*ret));
	if (!spec || !*spec)
		return bad(err, errlen, "--workload: empty; expected items such as 200x1gpu1nic");
	for (const char *p = spec; *p; p++)
		n_items += *p == ',';
	n_items++;
	if (!(items = calloc(n_items, sizeof(*items))))
		return -ENOMEM;
	const char *p = spec;
	for (size_t i = 0; i < n_items; i++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if ((r = parse_item(p, len, &items[i], err, errlen)) < 0)
			goto out;
		total += items[i].count;
		if (items[i].cpus && !cfg->devices.cpu_drivers.n) {
			r = bad(err, errlen,
				"--workload item '%s': cpu<k> needs a CPU driver "
				"(devices.cpuDrivers is empty)",
				items[i].text);
			goto out;
		}
		cpus = cpus || items[i].cpus;
		if (total > RF_WORKLOAD_MAX_PODS) {
			r = bad(err, errlen, "--workload: more than %d pods", RF_WORKLOAD_MAX_PODS);
			goto out;
		}
		p = comma ? comma + 1 : p + len;
	}
	r = -ENOMEM;
	if (!(units = calloc(total + 1, sizeof(*units))))
		goto out;
	for (size_t i = 0; i < n_items; i++) {
		unsigned per = items[i].job ? items[i].job : 1;
		for (unsigned k = 0; k < items[i].count; k += per)
			units[n_units++] = (struct unit){
				i, k, items[i].count - k < per ? items[i].count - k : per
			};
	}
	uint64_t s = seed;
	for (size_t i = n_units; i > 1; i--) {
		size_t j = (size_t)(next_rand(&s) % i);
		struct unit t = units[i - 1];
		units[i - 1] = units[j];
		units[j] = t;
	}
	if (!(g.pods = json_array()) || !(g.claims = json_array()) ||
	    !(ret->classes = json_array()))
		goto out;
	for (size_t u = 0; u < n_units; u++) {
		const struct item *it = &items[units[u].item];
		char job[96], label[64];
		label_of(it->text, label, sizeof(label));
		snprintf(job, sizeof(job), "w%zu-%s-%u", units[u].item, label,
			 it->job ? units[u].first / it->job : 0);
		for (unsigned k = 0; k < units[u].n; k++)
			if (add_pod(&g, it, units[u].item, units[u].first + k,
				    it->job ? job : NULL) < 0)
				goto out;
	}
	if (json_array_append_new(ret->classes,
				  selector_class(RF_WORKLOAD_GPU_CLASS, &cfg->devices.gpu_drivers,
						 "type", "'gpu'")) < 0 ||
	    json_array_append_new(ret->classes,
				  selector_class(RF_WORKLOAD_NIC_CLASS, &cfg->devices.nic_drivers,
						 "rdma", "true")) < 0 ||
	    (cpus &&
	     json_array_append_new(ret->classes, driver_class(RF_WORKLOAD_CPU_CLASS,
							      &cfg->devices.cpu_drivers)) < 0))
		goto out;
	ret->pods = g.pods;
	ret->claims = g.claims;
	g.pods = g.claims = NULL;
	r = 0;
out:
	json_decref(g.pods);
	json_decref(g.claims);
	if (r < 0) {
		json_decref(ret->classes);
		ret->classes = NULL;
	}
	free(items);
	free(units);
	return r;
}

void
rf_workload_release(struct rf_workload *w)
{
	json_decref(w->pods);
	json_decref(w->claims);
	json_decref(w->classes);
	memset(w, 0, sizeof(*w));
}
