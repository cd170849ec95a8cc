/* The railfit.io/pci-topology annotation codec (format in annotation.h).
 *
 * Encoding groups devices into position classes (same level to every other device) so that the
 * matrix grows with distinct positions, not with SR-IOV functions. Decoding trusts nothing: every
 * field is type-, length- and range-checked before use, so an annotation edited by hand or
 * truncated by a tool is reported, not followed. Pure functions, any thread. */
#include "topology/annotation.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* a 16 KiB value holds at most ~1000 addresses of 15 bytes; the cap keeps class matrices small */
#define MAX_DEVICES 1024
#define MAX_NUMA    65535
#define NO_LEVEL    0xff

struct adev {
	char pci[RF_PCI_ADDR_LEN];
	enum rf_pci_kind kind;
	int numa;
	unsigned cls;
};

struct rf_topo_annotation {
	size_t n, nc;
	struct adev *dev;
	unsigned *by_pci; /* device indexes in address order */
	unsigned char *m; /* nc * nc levels between classes; NO_LEVEL on a singleton's diagonal */
	unsigned char *links; /* nc * nc NVLink counts between GPU classes (version 2), or NULL */
};

static const char level_chars[RF_LEVEL_COUNT] = { 'P', 'B', 'H', 'N', 'S', 'U' };

static int
level_from_char(char c, enum rf_level *ret)
{
	for (int i = 0; i < RF_LEVEL_COUNT; i++)
		if (level_chars[i] == c) {
			*ret = (enum rf_level)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- encode ---- */

/* Does any GPU pair share NVLinks? Without, the annotation stays version 1, byte for byte what
 * railfit wrote before NVLink, so that older readers keep reading it. */
static bool
has_nvlinks(const struct rf_pcitopo *t)
{
	for (size_t i = 0; t->nvlinks && i < t->n_devices * t->n_devices; i++)
		if (t->nvlinks[i])
			return true;
	return false;
}

int
rf_topo_annotation_encode(const struct rf_pcitopo *t, char **ret)
{
	size_t n = t->n_devices, nc = 0;
	unsigned *cls = NULL, *rep = NULL;
	unsigned char *intra = NULL, *intra_links = NULL;
	const unsigned char *nvl = has_nvlinks(t) ? t->nvlinks : NULL;
	json_t *lj = NULL;
	char *kinds = NULL, *m = NULL, *out = NULL;
	json_t *root = NULL, *d = NULL, *numa = NULL, *cj = NULL;
	int r = -ENOMEM;

	if (n > MAX_DEVICES)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		if (t->devices[i].kind != RF_PCI_GPU && t->devices[i].kind != RF_PCI_NIC)
			return -EINVAL;
		for (size_t j = 0; j < n; j++)
			if (i != j && t->levels[i * n + j] >= RF_LEVEL_COUNT)
				return -EINVAL;
	}
	cls = calloc(n + 1, sizeof(*cls));
	rep = calloc(n + 1, sizeof(*rep));
	intra = calloc(n + 1, 1);
	intra_links = calloc(n + 1, 1);
	kinds = calloc(n + 1, 1);
	if (!cls || !rep || !intra || !intra_links || !kinds)
		goto out;

	/* position classes: i joins the class of representative p when every other device is at
	 * the same level from both, and i is at the class's own level from p */
	for (size_t i = 0; i < n; i++) {
		size_t c;
		for (c = 0; c < nc; c++) {
			size_t p = rep[c];
			unsigned char lip = t->levels[i * n + p];
			unsigned char nip = nvl ? nvl[i * n + p] : 0;
			bool same =
				intra[c] == NO_LEVEL || (intra[c] == lip && intra_links[c] == nip);
			for (size_t k = 0; same && k < n; k++)
				if (k != i && k != p &&
				    (t->levels[i * n + k] != t->levels[p * n + k] ||
				     (nvl && nvl[i * n + k] != nvl[p * n + k])))
					same = false;
			if (same) {
				intra[c] = lip;
				intra_links[c] = nip;
				break;
			}
		}
		if (c == nc) {
			rep[nc] = (unsigned)i;
			intra[nc] = NO_LEVEL;
			nc++;
		}
		cls[i] = (unsigned)c;
		kinds[i] = t->devices[i].kind == RF_PCI_GPU ? 'g' : 'n';
	}
	m = malloc(nc * (nc + 1) / 2 + 1);
	if (!m)
		goto out;
	size_t w = 0;
	for (size_t a = 0; a < nc; a++) {
		m[w++] = intra[a] == NO_LEVEL ? '-' : level_chars[intra[a]];
		for (size_t b = a + 1; b < nc; b++)
			m[w++] = level_chars[t->levels[rep[a] * n + rep[b]]];
	}
	m[w] = '\0';
	/* version 2: the NVLink counts between classes, [[a,b,links],...] with a <= b */
	if (nvl) {
		if (!(lj = json_array()))
			goto out;
		for (size_t a = 0; a < nc; a++)
			for (size_t b = a; b < nc; b++) {
				unsigned char l =
					a == b ? (intra[a] == NO_LEVEL ? 0 : intra_links[a])
					       : nvl[rep[a] * n + rep[b]];
				if (l && json_array_append_new(lj, json_pack("[III]", (json_int_t)a,
									     (json_int_t)b,
									     (json_int_t)l)) < 0)
					goto out;
			}
	}

	root = json_object();
	d = json_array();
	numa = json_array();
	cj = json_array();
	if (!root || !d || !numa || !cj)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (json_array_append_new(d, json_string(t->devices[i].pci)) < 0 ||
		    json_array_append_new(
			    numa, json_integer(t->devices[i].numa >= 0 ? t->devices[i].numa : -1)) <
			    0 ||
		    json_array_append_new(cj, json_integer(cls[i])) < 0)
			goto out;
	}
	if (json_object_set_new(root, "v", json_integer(nvl ? RF_TOPO_ANNOTATION_VERSION : 1)) <
		    0 ||
	    json_object_set(root, "d", d) < 0 ||
	    json_object_set_new(root, "k", json_string(kinds)) < 0 ||
	    json_object_set(root, "n", numa) < 0 || json_object_set(root, "c", cj) < 0 ||
	    json_object_set_new(root, "m", json_string(m)) < 0 ||
	    (lj && json_object_set(root, "l", lj) < 0))
		goto out;
	out = json_dumps(root, JSON_COMPACT);
	if (!out)
		goto out;
	if (strlen(out) > RF_TOPO_ANNOTATION_MAX_BYTES) {
		free(out);
		r = -EMSGSIZE;
		goto out;
	}
	*ret = out;
	r = 0;
out:
	json_decref(root);
	json_decref(d);
	json_decref(numa);
	json_decref(cj);
	json_decref(lj);
	free(cls);
	free(rep);
	free(intra);
	free(intra_links);
	free(kinds);
	free(m);
	return r;
}

/* ---- decode ---- */

static int __attribute__((format(printf, 4, 5)))
fail(int r, char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		/* one line, whatever jansson or the input put in it */
		for (char *p = err; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	return r;
}

void
rf_topo_annotation_free(struct rf_topo_annotation *a)
{
	if (!a)
		return;
	free(a->dev);
	free(a->by_pci);
	free(a->m);
	free(a->links);
	free(a);
}

static int
idx_cmp_pci(const void *x, const void *y, const struct adev *dev)
{
	return strcmp(dev[*(const unsigned *)x].pci, dev[*(const unsigned *)y].pci);
}

/* qsort has no context argument: insertion sort (n <= MAX_DEVICES, run once per decode) */
static void
sort_by_pci(unsigned *idx, size_t n, const struct adev *dev)
{
	for (size_t i = 1; i < n; i++) {
		unsigned v = idx[i];
		size_t j = i;
		while (j > 0 && idx_cmp_pci(&idx[j - 1], &v, dev) > 0) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
}

/* A quoted, length-limited, printable rendering of a JSON string for an error message. */
static const char *
shown(const char *s, char *buf, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; s[i] && w + 4 < len; i++)
		buf[w++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (s[0] && w + 4 >= len && len > 4) {
		buf[w++] = '.';
		buf[w++] = '.';
		buf[w++] = '.';
	}
	buf[w] = '\0';
	return buf;
}

/* Version 2's "l": [[class a, class b, links],...] between classes of GPUs only. */
static int
decode_links(struct rf_topo_annotation *a, const json_t *lj, char *err, size_t errlen)
{
	size_t nc = a->nc;
	if (!lj)
		return 0;
	if (!json_is_array(lj))
		return fail(-EINVAL, err, errlen,
			    "\"l\": expected an array of [class, class, links]");
	if (!(a->links = calloc(nc ? nc * nc : 1, 1)))
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(lj); i++) {
		const json_t *e = json_array_get(lj, i);
		const json_t *x = json_array_get(e, 0), *y = json_array_get(e, 1),
			     *l = json_array_get(e, 2);
		if (!json_is_array(e) || json_array_size(e) != 3 || !json_is_integer(x) ||
		    !json_is_integer(y) || !json_is_integer(l) || json_integer_value(x) < 0 ||
		    json_integer_value(y) < 0 || (size_t)json_integer_value(x) >= nc ||
		    (size_t)json_integer_value(y) >= nc || json_integer_value(l) < 1 ||
		    json_integer_value(l) > 255)
			return fail(
				-EINVAL, err, errlen,
				"\"l\"[%zu]: expected [class, class, links] with classes 0..%zu "
				"and links 1..255",
				i, nc ? nc - 1 : 0);
		size_t cx = (size_t)json_integer_value(x), cy = (size_t)json_integer_value(y);
		if (a->links[cx * nc + cy])
			return fail(-EINVAL, err, errlen,
				    "\"l\"[%zu]: classes %zu and %zu listed twice", i, cx, cy);
		for (size_t k = 0; k < a->n; k++)
			if ((a->dev[k].cls == cx || a->dev[k].cls == cy) &&
			    a->dev[k].kind != RF_PCI_GPU)
				return fail(
					-EINVAL, err, errlen,
					"\"l\"[%zu]: NVLinks between classes %zu and %zu, which "
					"hold a NIC (%s); NVLink joins GPUs only",
					i, cx, cy, a->dev[k].pci);
		a->links[cx * nc + cy] = a->links[cy * nc + cx] =
			(unsigned char)json_integer_value(l);
	}
	return 0;
}

int
rf_topo_annotation_decode(const char *value, size_t len, struct rf_topo_annotation **ret, char *err,
			  size_t errlen)
{
	struct rf_topo_annotation *a = NULL;
	json_t *root = NULL;
	json_error_t je;
	char show[48];
	int r;

	if (!value)
		return fail(-EINVAL, err, errlen, "no value");
	if (len > RF_TOPO_ANNOTATION_MAX_BYTES)
		return fail(-EMSGSIZE, err, errlen, "value is %zu bytes, more than the %d allowed",
			    len, RF_TOPO_ANNOTATION_MAX_BYTES);
	root = json_loadb(value, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return fail(-EINVAL, err, errlen, "not valid JSON: %s (at byte %d)", je.text,
			    je.position);
	if (!json_is_object(root)) {
		r = fail(-EINVAL, err, errlen, "expected a JSON object");
		goto out;
	}
	const json_t *v = json_object_get(root, "v");
	if (!json_is_integer(v)) {
		r = fail(-EINVAL, err, errlen, "\"v\": expected the format version, an integer");
		goto out;
	}
	if (json_integer_value(v) < 1 || json_integer_value(v) > RF_TOPO_ANNOTATION_VERSION) {
		r = fail(-EPROTONOSUPPORT, err, errlen,
			 "unknown format version %lld (this railfit reads version 1 and %d)",
			 (long long)json_integer_value(v), RF_TOPO_ANNOTATION_VERSION);
		goto out;
	}
	int version = (int)json_integer_value(v);
	const json_t *d = json_object_get(root, "d"), *k = json_object_get(root, "k"),
		     *nj = json_object_get(root, "n"), *cj = json_object_get(root, "c"),
		     *mj = json_object_get(root, "m");
	if (!json_is_array(d) || !json_is_string(k) || !json_is_array(nj) || !json_is_array(cj) ||
	    !json_is_string(mj)) {
		r = fail(-EINVAL, err, errlen,
			 "expected \"d\" (array), \"k\" (string), \"n\" (array), \"c\" (array) "
			 "and \"m\" (string)");
		goto out;
	}
	size_t n = json_array_size(d);
	if (n > MAX_DEVICES) {
		r = fail(-EINVAL, err, errlen, "\"d\": %zu devices, more than %d", n, MAX_DEVICES);
		goto out;
	}
	if (json_string_length(k) != n || json_array_size(nj) != n || json_array_size(cj) != n) {
		r = fail(-EINVAL, err, errlen,
			 "%zu devices in \"d\" but %zu kinds in \"k\", %zu NUMA nodes in \"n\" and "
			 "%zu classes in \"c\"",
			 n, json_string_length(k), json_array_size(nj), json_array_size(cj));
		goto out;
	}

	r = -ENOMEM;
	a = calloc(1, sizeof(*a));
	if (!a)
		goto out;
	a->n = n;
	a->dev = calloc(n ? n : 1, sizeof(*a->dev));
	a->by_pci = calloc(n ? n : 1, sizeof(*a->by_pci));
	if (!a->dev || !a->by_pci)
		goto out;
	const char *ks = json_string_value(k);
	for (size_t i = 0; i < n; i++) {
		struct adev *dv = &a->dev[i];
		const char *s = json_string_value(json_array_get(d, i));
		const json_t *ni = json_array_get(nj, i), *ci = json_array_get(cj, i);
		if (!s || rf_pci_normalize(s, dv->pci) < 0) {
			r = fail(-EINVAL, err, errlen,
				 "\"d\"[%zu]: expected a PCI address such as "
				 "\"0000:1b:00.0\", got %s%s%s",
				 i, s ? "\"" : "",
				 s ? shown(s, show, sizeof(show)) : "a non-string", s ? "\"" : "");
			goto out;
		}
		if (ks[i] != 'g' && ks[i] != 'n') {
			r = fail(-EINVAL, err, errlen,
				 "\"k\"[%zu]: expected 'g' (GPU) or 'n' (NIC), got byte 0x%02x", i,
				 (unsigned char)ks[i]);
			goto out;
		}
		dv->kind = ks[i] == 'g' ? RF_PCI_GPU : RF_PCI_NIC;
		if (!json_is_integer(ni) || json_integer_value(ni) < -1 ||
		    json_integer_value(ni) > MAX_NUMA) {
			r = fail(-EINVAL, err, errlen,
				 "\"n\"[%zu]: expected a NUMA node (0..%d) or -1", i, MAX_NUMA);
			goto out;
		}
		dv->numa = (int)json_integer_value(ni);
		if (!json_is_integer(ci) || json_integer_value(ci) < 0 ||
		    (json_int_t)json_integer_value(ci) >= (json_int_t)n) {
			r = fail(-EINVAL, err, errlen, "\"c\"[%zu]: expected a class number 0..%zu",
				 i, n ? n - 1 : 0);
			goto out;
		}
		dv->cls = (unsigned)json_integer_value(ci);
		if (dv->cls + 1 > a->nc)
			a->nc = dv->cls + 1;
		a->by_pci[i] = (unsigned)i;
	}
	sort_by_pci(a->by_pci, n, a->dev);
	for (size_t i = 1; i < n; i++)
		if (strcmp(a->dev[a->by_pci[i - 1]].pci, a->dev[a->by_pci[i]].pci) == 0) {
			r = fail(-EINVAL, err, errlen, "\"d\": %s is listed twice",
				 a->dev[a->by_pci[i]].pci);
			goto out;
		}

	size_t nc = a->nc, want = nc * (nc + 1) / 2;
	if (json_string_length(mj) != want) {
		r = fail(-EINVAL, err, errlen,
			 "\"m\": expected %zu levels for %zu classes, got %zu characters", want, nc,
			 json_string_length(mj));
		goto out;
	}
	a->m = malloc(nc ? nc * nc : 1);
	if (!a->m)
		goto out;
	const char *ms = json_string_value(mj);
	size_t pos = 0;
	for (size_t x = 0; x < nc; x++) {
		for (size_t y = x; y < nc; y++, pos++) {
			enum rf_level l;
			if (x == y && ms[pos] == '-') {
				a->m[x * nc + x] = NO_LEVEL;
				continue;
			}
			if (level_from_char(ms[pos], &l) < 0) {
				r = fail(
					-EINVAL, err, errlen,
					"\"m\"[%zu]: expected one of P B H N S U%s, got byte 0x%02x",
					pos, x == y ? " -" : "", (unsigned char)ms[pos]);
				goto out;
			}
			a->m[x * nc + y] = a->m[y * nc + x] = (unsigned char)l;
		}
	}
	/* a class of several devices needs the level between them */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (a->dev[i].cls == a->dev[j].cls &&
			    a->m[a->dev[i].cls * nc + a->dev[i].cls] == NO_LEVEL) {
				r = fail(-EINVAL, err, errlen,
					 "\"m\": class %u has several devices but \"-\" as their "
					 "level",
					 a->dev[i].cls);
				goto out;
			}
	if (version >= 2 && (r = decode_links(a, json_object_get(root, "l"), err, errlen)) < 0)
		goto out;
	*ret = a;
	a = NULL;
	r = 0;
out:
	json_decref(root);
	rf_topo_annotation_free(a);
	return r;
}

/* ---- lookups ---- */

/* Already in the form rf_pci_normalize produces ("dddd:bb:dd.f", lower-case hex)? Addresses of
 * DRA devices are normalised once when the model is built; this skips the snprintf then. */
static bool
is_normalized(const char *s)
{
	static const char shape[] = "hhhh:hh:hh.h";
	for (size_t i = 0; i < sizeof(shape) - 1; i++) {
		char c = s[i];
		if (shape[i] == 'h') {
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				return false;
		} else if (c != shape[i]) {
			return false;
		}
	}
	return s[sizeof(shape) - 1] == '\0' && s[8] <= '1' && s[11] <= '7';
}

int
rf_topo_annotation_find(const struct rf_topo_annotation *a, const char *pci)
{
	char norm[RF_PCI_ADDR_LEN];
	const char *key = pci;

	if (!pci)
		return -EINVAL;
	if (!is_normalized(pci)) {
		if (rf_pci_normalize(pci, norm) < 0)
			return -EINVAL;
		key = norm;
	}
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(a->dev[a->by_pci[mid]].pci, key);
		if (c == 0)
			return (int)a->by_pci[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

int
rf_topo_annotation_level(const struct rf_topo_annotation *a, const char *pci_a, const char *pci_b,
			 enum rf_level *ret)
{
	int i = rf_topo_annotation_find(a, pci_a), j;
	if (i < 0)
		return i;
	j = rf_topo_annotation_find(a, pci_b);
	if (j < 0)
		return j;
	if (i == j) {
		*ret = RF_LEVEL_PIX;
		return 0;
	}
	unsigned char l = a->m[a->dev[i].cls * a->nc + a->dev[j].cls];
	/* the decoder rejects a shared class without a level, so NO_LEVEL cannot show up here */
	*ret = l < RF_LEVEL_COUNT ? (enum rf_level)l : RF_LEVEL_UNKNOWN;
	return 0;
}

int
rf_topo_annotation_nvlinks(const struct rf_topo_annotation *a, const char *pci_a, const char *pci_b,
			   unsigned *ret)
{
	int i = rf_topo_annotation_find(a, pci_a), j;
	if (i < 0)
		return i;
	j = rf_topo_annotation_find(a, pci_b);
	if (j < 0)
		return j;
	*ret = a->links && i != j ? a->links[a->dev[i].cls * a->nc + a->dev[j].cls] : 0;
	return 0;
}

bool
rf_topo_annotation_has_nvlinks(const struct rf_topo_annotation *a)
{
	return a->links != NULL;
}

size_t
rf_topo_annotation_n_devices(const struct rf_topo_annotation *a)
{
	return a->n;
}

const char *
rf_topo_annotation_pci(const struct rf_topo_annotation *a, size_t i)
{
	return a->dev[i].pci;
}

enum rf_pci_kind
rf_topo_annotation_kind(const struct rf_topo_annotation *a, size_t i)
{
	return a->dev[i].kind;
}

int
rf_topo_annotation_numa(const struct rf_topo_annotation *a, size_t i)
{
	return a->dev[i].numa;
}

/* ---- the Node patch ---- */

int
rf_topo_annotation_patch(const char *key, const char *value, char **ret)
{
	json_error_t je;
	json_t *p;
	char *s;

	if (!key || !key[0] || !value)
		return -EINVAL;
	p = json_pack_ex(&je, 0, "{s:{s:{s:s}}}", "metadata", "annotations", key, value);
	if (!p)
		return json_error_code(&je) == json_error_out_of_memory ? -ENOMEM : -EINVAL;
	s = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}
