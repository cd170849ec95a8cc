/* kubeconfig parsing (see kubeconfig.h). The document is first read into a jansson tree with
 * libyaml (scalars become strings, plain null scalars become null, anchors and aliases are
 * followed, duplicate keys and deep nesting are rejected), then the selected context, cluster and
 * user are looked up and validated. Pure logic, no I/O, no global state. */
#include "config/kubeconfig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include <jansson.h>

#define MAX_DEPTH   64
#define MAX_ANCHORS 256

struct errbuf {
	char *s;
	size_t len;
};

static int __attribute__((format(printf, 3, 4))) fail(struct errbuf *e, int r, const char *fmt, ...)
{
	va_list ap;
	if (e->s && e->len) {
		va_start(ap, fmt);
		vsnprintf(e->s, e->len, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* ---------------------------------------------------------------------------------------------
 * base64
 */

static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int
rf_base64_decode(const char *in, size_t len, unsigned char **ret, size_t *ret_len)
{
	unsigned char *out = malloc(len / 4 * 3 + 4);
	size_t n = 0, pad = 0;
	uint32_t acc = 0;
	unsigned bits = 0, chars = 0;
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '\r' || c == '\n' || c == ' ' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		int v = b64_value(c);
		if (v < 0 || pad) /* a data character after padding */
			goto invalid;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		chars++;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* a final group of one character cannot encode a byte; padding must complete the group */
	if (chars % 4 == 1 || pad > 2 || (pad && (chars + pad) % 4 != 0))
		goto invalid;
	out[n] = 0;
	*ret = out;
	*ret_len = n;
	return 0;
invalid:
	free(out);
	return -EINVAL;
}

/* ---------------------------------------------------------------------------------------------
 * YAML -> jansson tree
 */

struct yp {
	yaml_parser_t p;
	json_t *anchors; /* anchor name -> node */
	struct errbuf *e;
};

static int
yaml_fail(struct yp *y)
{
	const yaml_parser_t *p = &y->p;
	if (p->error == YAML_MEMORY_ERROR)
		return fail(y->e, -ENOMEM, "out of memory");
	if (p->error == YAML_READER_ERROR)
		return fail(y->e, -EINVAL, "yaml: %s at byte %zu",
			    p->problem ? p->problem : "error", p->problem_offset);
	return fail(y->e, -EINVAL, "yaml: line %zu column %zu: %s%s%s", p->problem_mark.line + 1,
		    p->problem_mark.column + 1, p->problem ? p->problem : "error",
		    p->context ? " " : "", p->context ? p->context : "");
}

static bool
plain_null(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static int
remember_anchor(struct yp *y, const yaml_char_t *anchor, json_t *node)
{
	if (!anchor)
		return 0;
	if (json_object_size(y->anchors) >= MAX_ANCHORS)
		return fail(y->e, -EINVAL, "yaml: more than %d anchors", MAX_ANCHORS);
	return json_object_set(y->anchors, (const char *)anchor, node) ? -ENOMEM : 0;
}

static int parse_node(struct yp *y, yaml_event_t *ev, int depth, json_t **ret);

/* The node after a collection start event (already consumed, passed in ev). */
static int
parse_collection(struct yp *y, yaml_event_t *start, int depth, json_t **ret)
{
	bool map = start->type == YAML_MAPPING_START_EVENT;
	yaml_event_type_t end = map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	json_t *node = map ? json_object() : json_array();
	yaml_event_t ev;
	int r;
	if (!node)
		return -ENOMEM;
	if (depth > MAX_DEPTH) {
		json_decref(node);
		return fail(y->e, -EINVAL, "yaml: line %zu: nesting deeper than %d",
			    start->start_mark.line + 1, MAX_DEPTH);
	}
	if ((r = remember_anchor(
		     y, map ? start->data.mapping_start.anchor : start->data.sequence_start.anchor,
		     node)) < 0)
		goto out;
	for (;;) {
		if (!yaml_parser_parse(&y->p, &ev)) {
			r = yaml_fail(y);
			goto out;
		}
		if (ev.type == end) {
			yaml_event_delete(&ev);
			break;
		}
		json_t *key = NULL, *val = NULL;
		size_t line = ev.start_mark.line + 1;
		r = parse_node(y, &ev, depth + 1, map ? &key : &val);
		if (r < 0)
			goto out;
		if (!map) {
			r = json_array_append_new(node, val) ? -ENOMEM : 0;
			if (r < 0)
				goto out;
			continue;
		}
		if (!json_is_string(key)) {
			json_decref(key);
			r = fail(y->e, -EINVAL, "yaml: line %zu: mapping keys must be strings",
				 line);
			goto out;
		}
		if (!yaml_parser_parse(&y->p, &ev)) {
			json_decref(key);
			r = yaml_fail(y);
			goto out;
		}
		r = parse_node(y, &ev, depth + 1, &val);
		if (r < 0) {
			json_decref(key);
			goto out;
		}
		if (json_object_get(node, json_string_value(key))) {
			r = fail(y->e, -EINVAL, "yaml: line %zu: key \"%s\" is defined twice", line,
				 json_string_value(key));
			json_decref(key);
			json_decref(val);
			goto out;
		}
		r = json_object_set_new(node, json_string_value(key), val) ? -ENOMEM : 0;
		json_decref(key);
		if (r < 0)
			goto out;
	}
	*ret = node;
	return 0;
out:
	json_decref(node);
	return r;
}

/* Parse the node that starts with *ev; consumes (deletes) ev. */
static int
parse_node(struct yp *y, yaml_event_t *ev, int depth, json_t **ret)
{
	int r = 0;
	json_t *node = NULL;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (plain_null(ev))
			node = json_null();
		else
			node = json_stringn_nocheck((const char *)ev->data.scalar.value,
						    ev->data.scalar.length);
		if (!node)
			r = -ENOMEM;
		else if ((r = remember_anchor(y, ev->data.scalar.anchor, node)) < 0)
			json_decref(node);
		yaml_event_delete(ev);
		break;
	case YAML_ALIAS_EVENT: {
		json_t *target = json_object_get(y->anchors, (const char *)ev->data.alias.anchor);
		if (!target)
			r = fail(y->e, -EINVAL, "yaml: line %zu: unknown anchor \"%s\"",
				 ev->start_mark.line + 1, (const char *)ev->data.alias.anchor);
		else
			node = json_incref(target);
		yaml_event_delete(ev);
		break;
	}
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT: {
		yaml_event_t start = *ev; /* anchors live in the event until it is deleted */
		r = parse_collection(y, &start, depth, &node);
		yaml_event_delete(&start);
		break;
	}
	default:
		r = fail(y->e, -EINVAL, "yaml: line %zu: unexpected event",
			 ev->start_mark.line + 1);
		yaml_event_delete(ev);
		break;
	}
	if (r == 0)
		*ret = node;
	return r;
}

static int
yaml_to_json(const char *buf, size_t len, struct errbuf *e, json_t **ret)
{
	struct yp y = { .e = e };
	yaml_event_t ev;
	json_t *doc = NULL;
	int r;
	if (!yaml_parser_initialize(&y.p))
		return -ENOMEM;
	y.anchors = json_object();
	if (!y.anchors) {
		r = -ENOMEM;
		goto out;
	}
	yaml_parser_set_input_string(&y.p, (const unsigned char *)buf, len);
	/* stream start, document start (or stream end for an empty file) */
	for (;;) {
		if (!yaml_parser_parse(&y.p, &ev)) {
			r = yaml_fail(&y);
			goto out;
		}
		if (ev.type == YAML_STREAM_START_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		break;
	}
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		r = fail(e, -EINVAL, "the kubeconfig is empty");
		goto out;
	}
	yaml_event_delete(&ev); /* document start */
	if (!yaml_parser_parse(&y.p, &ev)) {
		r = yaml_fail(&y);
		goto out;
	}
	if ((r = parse_node(&y, &ev, 0, &doc)) < 0)
		goto out;
	if (!json_is_object(doc)) {
		r = fail(e, -EINVAL,
			 "the kubeconfig is not a mapping (expected apiVersion, clusters, "
			 "users, contexts, current-context)");
		goto out;
	}
	*ret = doc;
	doc = NULL;
	r = 0;
out:
	json_decref(doc);
	json_decref(y.anchors);
	yaml_parser_delete(&y.p);
	return r;
}

/* ---------------------------------------------------------------------------------------------
 * Field access with error messages naming the path
 */

struct kc_parse {
	struct errbuf *e;
	const char *base_dir;
	json_t *empty; /* stands for an absent cluster/user/context mapping */
	struct rf_kubeconfig out;
};

static int
get_string(struct kc_parse *k, const json_t *obj, const char *key, const char *path,
	   const char **ret)
{
	json_t *v = json_object_get(obj, key);
	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return fail(k->e, -EINVAL, "%s.%s: expected a string", path, key);
	*ret = json_string_value(v);
	return 0;
}

static int
get_bool(struct kc_parse *k, const json_t *obj, const char *key, const char *path, bool *ret)
{
	const char *s;
	int r = get_string(k, obj, key, path, &s);
	*ret = false;
	if (r < 0)
		return r;
	if (!s)
		return 0;
	/* YAML 1.1 booleans, as Go's yaml.v2 reads them */
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
					   "on",   "On",   "ON",   "y",   "Y",   NULL };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
					  "off",   "Off",   "OFF",   "n",  "N",  NULL };
	for (size_t i = 0; yes[i]; i++) {
		if (!strcmp(s, yes[i])) {
			*ret = true;
			return 0;
		}
		if (!strcmp(s, no[i]))
			return 0;
	}
	return fail(k->e, -EINVAL, "%s.%s: expected true or false, got \"%.40s\"", path, key, s);
}

static int
dup_string(const char *s, char **ret)
{
	*ret = NULL;
	if (!s)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

/* A file path from the kubeconfig, resolved against its directory. */
static int
dup_path(struct kc_parse *k, const char *s, char **ret)
{
	*ret = NULL;
	if (!s || !*s)
		return 0;
	if (s[0] == '/' || !k->base_dir || !*k->base_dir)
		return dup_string(s, ret);
	size_t n = strlen(k->base_dir) + strlen(s) + 2;
	char *p = malloc(n);
	if (!p)
		return -ENOMEM;
	snprintf(p, n, "%s/%s", k->base_dir, s);
	*ret = p;
	return 0;
}

static int
decode_data(struct kc_parse *k, const char *s, const char *path, const char *key,
	    unsigned char **ret, size_t *ret_len)
{
	*ret = NULL;
	*ret_len = 0;
	if (!s || !*s)
		return 0;
	int r = rf_base64_decode(s, strlen(s), ret, ret_len);
	if (r == -EINVAL)
		return fail(k->e, r, "%s.%s: not valid base64 (expected the base64 of a PEM file)",
			    path, key);
	return r;
}

/* The element named `name` of a kubeconfig list (clusters, users, contexts), or NULL. */
static int
find_named(struct kc_parse *k, const json_t *doc, const char *list, const char *field,
	   const char *name, const json_t **ret)
{
	json_t *arr = json_object_get(doc, list), *it;
	size_t i;
	*ret = NULL;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return fail(k->e, -EINVAL, "%s: expected a list", list);
	json_array_foreach (arr, i, it) {
		const char *n;
		if (!json_is_object(it))
			return fail(k->e, -EINVAL, "%s[%zu]: expected a mapping", list, i);
		if (get_string(k, it, "name", list, &n) < 0)
			return -EINVAL;
		if (n && !strcmp(n, name)) {
			json_t *inner = json_object_get(it, field);
			if (inner && !json_is_object(inner) && !json_is_null(inner))
				return fail(k->e, -EINVAL, "%s[name=\"%s\"].%s: expected a mapping",
					    list, name, field);
			/* present but empty: an empty mapping */
			*ret = inner && json_is_object(inner) ? inner : k->empty;
			return 1;
		}
	}
	return 0;
}

static int
parse_cluster(struct kc_parse *k, const json_t *c, const char *path)
{
	const char *server, *ca, *ca_data, *tls_name, *proxy;
	bool insecure;
	struct rf_kubeconfig *o = &k->out;
	int r;
	if ((r = get_string(k, c, "server", path, &server)) < 0 ||
	    (r = get_string(k, c, "certificate-authority", path, &ca)) < 0 ||
	    (r = get_string(k, c, "certificate-authority-data", path, &ca_data)) < 0 ||
	    (r = get_string(k, c, "tls-server-name", path, &tls_name)) < 0 ||
	    (r = get_string(k, c, "proxy-url", path, &proxy)) < 0 ||
	    (r = get_bool(k, c, "insecure-skip-tls-verify", path, &insecure)) < 0)
		return r;
	if (!server || !*server)
		return fail(k->e, -EINVAL,
			    "%s.server: missing (expected the API server URL, e.g. "
			    "https://10.0.0.1:6443)",
			    path);
	bool https = !strncmp(server, "https://", 8), http = !strncmp(server, "http://", 7);
	if (!https && !http && strstr(server, "://"))
		return fail(k->e, -EINVAL,
			    "%s.server: expected an https:// or http:// URL, got "
			    "\"%.80s\"",
			    path, server);
	if (insecure && ((ca && *ca) || (ca_data && *ca_data)))
		return fail(k->e, -EINVAL,
			    "%s: specifying a root certificates file with the "
			    "insecure flag is not allowed (remove "
			    "certificate-authority(-data) or insecure-skip-tls-verify)",
			    path);
	/* a URL without a scheme means https, as in client-go */
	size_t n = strlen(server) + 9;
	char *url = malloc(n);
	if (!url)
		return -ENOMEM;
	snprintf(url, n, "%s%s", (https || http) ? "" : "https://", server);
	size_t ul = strlen(url);
	while (ul > 1 && url[ul - 1] == '/' && url[ul - 2] != '/')
		url[--ul] = 0;
	const char *host = strstr(url, "://") + 3;
	if (!*host || *host == '/') {
		free(url);
		return fail(k->e, -EINVAL, "%s.server: no host in \"%.80s\"", path, server);
	}
	o->server = url;
	o->insecure_skip_tls_verify = insecure;
	if ((r = dup_string(tls_name && *tls_name ? tls_name : NULL, &o->tls_server_name)) < 0 ||
	    (r = dup_string(proxy && *proxy ? proxy : NULL, &o->proxy_url)) < 0)
		return r;
	/* -data overrides the path (client-go) */
	if (ca_data && *ca_data)
		return decode_data(k, ca_data, path, "certificate-authority-data", &o->ca_data,
				   &o->ca_data_len);
	return dup_path(k, ca, &o->ca_file);
}

static int
parse_user(struct kc_parse *k, const json_t *u, const char *path)
{
	const char *cert, *cert_data, *key, *key_data, *token, *token_file, *user, *pass;
	struct rf_kubeconfig *o = &k->out;
	int r;
	json_t *exec = json_object_get(u, "exec"), *ap = json_object_get(u, "auth-provider");
	if (exec && !json_is_null(exec))
		return fail(k->e, -EINVAL,
			    "%s.exec: exec credential plugins are not supported by "
			    "railfit; use a token, tokenFile or client certificate "
			    "(e.g. a ServiceAccount token)",
			    path);
	if (ap && !json_is_null(ap))
		return fail(k->e, -EINVAL,
			    "%s.auth-provider: auth provider plugins are not "
			    "supported by railfit; use a token, tokenFile or client "
			    "certificate",
			    path);
	if ((r = get_string(k, u, "client-certificate", path, &cert)) < 0 ||
	    (r = get_string(k, u, "client-certificate-data", path, &cert_data)) < 0 ||
	    (r = get_string(k, u, "client-key", path, &key)) < 0 ||
	    (r = get_string(k, u, "client-key-data", path, &key_data)) < 0 ||
	    (r = get_string(k, u, "token", path, &token)) < 0 ||
	    (r = get_string(k, u, "tokenFile", path, &token_file)) < 0 ||
	    (r = get_string(k, u, "username", path, &user)) < 0 ||
	    (r = get_string(k, u, "password", path, &pass)) < 0)
		return r;
	bool has_cert = (cert && *cert) || (cert_data && *cert_data);
	bool has_key = (key && *key) || (key_data && *key_data);
	if (has_cert != has_key)
		return fail(k->e, -EINVAL,
			    "%s: %s without %s (both client-certificate(-data) and "
			    "client-key(-data) are needed)",
			    path, has_cert ? "client certificate" : "client key",
			    has_cert ? "its key" : "a certificate");
	if (cert_data && *cert_data) {
		if ((r = decode_data(k, cert_data, path, "client-certificate-data",
				     &o->client_cert_data, &o->client_cert_data_len)) < 0)
			return r;
	} else if ((r = dup_path(k, cert, &o->client_cert_file)) < 0)
		return r;
	if (key_data && *key_data) {
		if ((r = decode_data(k, key_data, path, "client-key-data", &o->client_key_data,
				     &o->client_key_data_len)) < 0)
			return r;
	} else if ((r = dup_path(k, key, &o->client_key_file)) < 0)
		return r;
	if ((r = dup_string(token && *token ? token : NULL, &o->token)) < 0 ||
	    (r = dup_path(k, token_file, &o->token_file)) < 0 ||
	    (r = dup_string(user && *user ? user : NULL, &o->username)) < 0 ||
	    (r = dup_string(pass && *pass ? pass : NULL, &o->password)) < 0)
		return r;
	return 0;
}

int
rf_kubeconfig_parse(const char *buf, size_t len, const char *base_dir, const char *context,
		    struct rf_kubeconfig *ret, char *err, size_t errlen)
{
	struct errbuf e = { err, errlen };
	struct kc_parse k = { .e = &e, .base_dir = base_dir };
	json_t *doc = NULL;
	const json_t *ctx, *cluster, *user;
	const char *ctx_name = context, *cluster_name, *user_name, *ns;
	char path[300];
	int r;
	if (err && errlen)
		err[0] = 0;
	if ((r = yaml_to_json(buf, len, &e, &doc)) < 0)
		return r;
	if (!(k.empty = json_object())) {
		r = -ENOMEM;
		goto out;
	}
	if (!ctx_name || !*ctx_name) {
		if ((r = get_string(&k, doc, "current-context", "kubeconfig", &ctx_name)) < 0)
			goto out;
		if (!ctx_name || !*ctx_name) {
			r = fail(&e, -EINVAL,
				 "current-context: not set (set it with kubectl config "
				 "use-context NAME)");
			goto out;
		}
	}
	if ((r = find_named(&k, doc, "contexts", "context", ctx_name, &ctx)) < 0)
		goto out;
	if (r == 0) {
		r = fail(&e, -EINVAL, "context \"%s\" does not exist", ctx_name);
		goto out;
	}
	snprintf(path, sizeof(path), "contexts[name=\"%.200s\"].context", ctx_name);
	if ((r = get_string(&k, ctx, "cluster", path, &cluster_name)) < 0 ||
	    (r = get_string(&k, ctx, "user", path, &user_name)) < 0 ||
	    (r = get_string(&k, ctx, "namespace", path, &ns)) < 0)
		goto out;
	if (!cluster_name || !*cluster_name) {
		r = fail(&e, -EINVAL, "%s.cluster: missing", path);
		goto out;
	}
	if ((r = find_named(&k, doc, "clusters", "cluster", cluster_name, &cluster)) < 0)
		goto out;
	if (r == 0) {
		r = fail(&e, -EINVAL, "cluster \"%s\" was not found for context \"%s\"",
			 cluster_name, ctx_name);
		goto out;
	}
	snprintf(path, sizeof(path), "clusters[name=\"%.200s\"].cluster", cluster_name);
	if ((r = parse_cluster(&k, cluster, path)) < 0)
		goto out;
	if (user_name && *user_name) {
		if ((r = find_named(&k, doc, "users", "user", user_name, &user)) < 0)
			goto out;
		if (r == 0) {
			r = fail(&e, -EINVAL, "user \"%s\" was not found for context \"%s\"",
				 user_name, ctx_name);
			goto out;
		}
		snprintf(path, sizeof(path), "users[name=\"%.200s\"].user", user_name);
		if ((r = parse_user(&k, user, path)) < 0)
			goto out;
	}
	if ((r = dup_string(ctx_name, &k.out.context)) < 0 ||
	    (r = dup_string(cluster_name, &k.out.cluster_name)) < 0 ||
	    (r = dup_string(user_name ? user_name : "", &k.out.user_name)) < 0 ||
	    (r = dup_string(ns && *ns ? ns : NULL, &k.out.namespace)) < 0)
		goto out;
	*ret = k.out;
	memset(&k.out, 0, sizeof(k.out));
	r = 0;
out:
	if (r == -ENOMEM)
		fail(&e, r, "out of memory");
	rf_kubeconfig_release(&k.out);
	json_decref(k.empty);
	json_decref(doc);
	return r;
}

int
rf_kubeconfig_in_cluster(const char *host, const char *port, const char *sa_dir,
			 struct rf_kubeconfig *ret, char *err, size_t errlen)
{
	struct errbuf e = { err, errlen };
	struct rf_kubeconfig o = { 0 };
	if (!host || !*host || !port || !*port)
		return fail(&e, -EINVAL,
			    "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must "
			    "both be set for the in-cluster configuration");
	bool v6 = strchr(host, ':') != NULL && host[0] != '[';
	size_t n = strlen(host) + strlen(port) + 16;
	size_t dn = strlen(sa_dir) + 16;
	o.server = malloc(n);
	o.token_file = malloc(dn);
	o.ca_file = malloc(dn);
	o.context = strdup("");
	o.cluster_name = strdup("");
	o.user_name = strdup("");
	if (!o.server || !o.token_file || !o.ca_file || !o.context || !o.cluster_name ||
	    !o.user_name) {
		rf_kubeconfig_release(&o);
		return fail(&e, -ENOMEM, "out of memory");
	}
	snprintf(o.server, n, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
	snprintf(o.token_file, dn, "%s/token", sa_dir);
	snprintf(o.ca_file, dn, "%s/ca.crt", sa_dir);
	*ret = o;
	return 0;
}

static void
free_secret(void *p, size_t len)
{
	if (!p)
		return;
	volatile unsigned char *v = p;
	for (size_t i = 0; i < len; i++)
		v[i] = 0;
	free(p);
}

void
rf_kubeconfig_release(struct rf_kubeconfig *kc)
{
	if (!kc)
		return;
	free(kc->context);
	free(kc->cluster_name);
	free(kc->user_name);
	free(kc->namespace);
	free(kc->server);
	free(kc->tls_server_name);
	free(kc->proxy_url);
	free(kc->ca_file);
	free(kc->ca_data);
	free(kc->client_cert_file);
	free(kc->client_cert_data);
	free(kc->client_key_file);
	free_secret(kc->client_key_data, kc->client_key_data_len);
	free_secret(kc->token, kc->token ? strlen(kc->token) : 0);
	free(kc->token_file);
	free(kc->username);
	free_secret(kc->password, kc->password ? strlen(kc->password) : 0);
	memset(kc, 0, sizeof(*kc));
}
