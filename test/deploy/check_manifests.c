/* check-manifests: the manifests of deploy/ against the API (issue 12).
 *
 *   check-manifests [--expect FILE] SCHEMA PATH...
 *   check-manifests --list PATH...     (every document as one kubectl-style List, on stdout)
 *
 * Every YAML document of every *.yaml under PATH is read with libyaml and checked:
 * - its apiVersion/kind is a kind the schema knows, and every field name, at every depth, is a
 *   field of that type (SCHEMA: test/deploy/k8s-fields.json, the Go json names per type);
 * - a ConfigMap's data entry holding a YAML document with apiVersion and kind (the embedded
 *   KubeSchedulerConfiguration) is checked the same way; a data entry named railfit.yaml goes
 *   through railfit's own configuration parser (rf_config_parse_yaml, what --config runs);
 * - the resources, patches and generator files a kustomization.yaml names exist;
 * - a document without apiVersion and kind but with groups is a Prometheus rule file.
 * One line per problem on stdout; exit 1 when there is any. With --expect FILE, the problems
 * must be exactly the lines of FILE (in any order): that is how the suite shows the checker
 * catches what it claims to. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include <jansson.h>

#include "config/config.h"

static json_t *schema_types, *schema_kinds;
static char **problems;
static size_t n_problems;

__attribute__((format(printf, 1, 2))) static void
problem(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **p = realloc(problems, (n_problems + 1) * sizeof(*p));
	if (!p || !(p[n_problems] = strdup(buf))) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	problems = p;
	n_problems++;
}

/* ---- YAML to JSON (scalars stay strings: only names and shapes are checked) ---- */

static json_t *node(yaml_parser_t *p, yaml_event_t *ev, const char *file);

static json_t *
next_node(yaml_parser_t *p, const char *file, yaml_event_type_t *end_type)
{
	yaml_event_t ev;
	if (!yaml_parser_parse(p, &ev)) {
		problem("%s: YAML error at line %zu: %s", file, p->problem_mark.line + 1,
			p->problem ? p->problem : "?");
		return NULL;
	}
	*end_type = ev.type;
	if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT ||
	    ev.type == YAML_DOCUMENT_END_EVENT) {
		yaml_event_delete(&ev);
		return NULL;
	}
	json_t *v = node(p, &ev, file);
	yaml_event_delete(&ev);
	return v;
}

static json_t *
node(yaml_parser_t *p, yaml_event_t *ev, const char *file)
{
	yaml_event_type_t t;
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		/* plain integers, booleans and nulls as YAML 1.2's core schema reads them */
		const char *s = (const char *)ev->data.scalar.value;
		size_t n = ev->data.scalar.length;
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
			char *end;
			long long v = strtoll(s, &end, 10);
			if (n && (size_t)(end - s) == n && (s[0] != '0' || n == 1))
				return json_integer(v);
			if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
				return json_boolean(s[0] == 't');
			if (strcmp(s, "null") == 0 || strcmp(s, "~") == 0)
				return json_null();
		}
		return json_stringn(s, n);
	}
	case YAML_SEQUENCE_START_EVENT: {
		json_t *a = json_array();
		json_t *v;
		while ((v = next_node(p, file, &t)))
			json_array_append_new(a, v);
		return t == YAML_SEQUENCE_END_EVENT ? a : (json_decref(a), NULL);
	}
	case YAML_MAPPING_START_EVENT: {
		json_t *o = json_object();
		for (;;) {
			json_t *k = next_node(p, file, &t);
			if (!k)
				break;
			if (json_is_integer(k) ||
			    json_is_boolean(k)) { /* a key such as 8080 or true */
				char kb[32];
				snprintf(kb, sizeof(kb), "%s",
					 json_is_integer(k) ? ""
					 : json_is_true(k)  ? "true"
							    : "false");
				if (json_is_integer(k))
					snprintf(kb, sizeof(kb), "%lld",
						 (long long)json_integer_value(k));
				json_decref(k);
				k = json_string(kb);
			}
			json_t *v = next_node(p, file, &t);
			if (!json_is_string(k) || !v) {
				problem("%s: a mapping key that is not a scalar, or no value",
					file);
				json_decref(k);
				json_decref(v);
				json_decref(o);
				return NULL;
			}
			if (json_object_get(o, json_string_value(k)))
				problem("%s: duplicate key \"%s\"", file, json_string_value(k));
			json_object_set_new(o, json_string_value(k), v);
			json_decref(k);
		}
		return t == YAML_MAPPING_END_EVENT ? o : (json_decref(o), NULL);
	}
	case YAML_ALIAS_EVENT:
		problem("%s: YAML aliases are not used in manifests", file);
		return NULL;
	default:
		return NULL;
	}
}

/* Every document of a YAML text, as a JSON array (null documents dropped). */
static json_t *
load_docs(const char *text, size_t len, const char *file)
{
	yaml_parser_t p;
	yaml_event_t ev;
	json_t *docs = json_array();
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev)) {
			problem("%s: YAML error at line %zu: %s", file, p.problem_mark.line + 1,
				p.problem ? p.problem : "?");
			break;
		}
		yaml_event_type_t t = ev.type;
		if (t == YAML_DOCUMENT_START_EVENT) {
			yaml_event_type_t end;
			json_t *d = next_node(&p, file, &end);
			if (d && !(json_is_string(d) && json_string_length(d) == 0))
				json_array_append_new(docs, d);
			else
				json_decref(d);
			if (end != YAML_DOCUMENT_END_EVENT) {
				yaml_event_t e2; /* the document's end */
				if (yaml_parser_parse(&p, &e2))
					yaml_event_delete(&e2);
			}
		}
		yaml_event_delete(&ev);
		if (t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&p);
	return docs;
}

/* ---- the schema walk ---- */

static void
expected_fields(const json_t *type, char *buf, size_t len)
{
	size_t pos = 0;
	const char *k;
	json_t *v;
	buf[0] = 0;
	json_object_foreach ((json_t *)type, k, v) {
		int n = snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "", k);
		if (n < 0 || (size_t)n >= len - pos)
			break;
		pos += (size_t)n;
	}
}

static void
walk(const json_t *v, const char *type, const char *where, const char *path)
{
	size_t tl = strlen(type);
	if (strcmp(type, "any") == 0 || json_is_null(v))
		return;
	if (strcmp(type, "string") == 0 || strcmp(type, "int") == 0 || strcmp(type, "bool") == 0) {
		if (json_is_object(v) || json_is_array(v))
			problem("%s: %s: expected a %s value, got a %s", where, path, type,
				json_is_array(v) ? "list" : "mapping");
		return;
	}
	if (strcmp(type, "map") == 0) {
		if (!json_is_object(v))
			problem("%s: %s: expected a mapping", where, path);
		return;
	}
	if (type[0] == '[' && type[tl - 1] == ']') {
		char elem[128];
		snprintf(elem, sizeof(elem), "%.*s", (int)(tl - 2), type + 1);
		if (!json_is_array(v)) {
			problem("%s: %s: expected a list of %s", where, path, elem);
			return;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			char p[1024];
			snprintf(p, sizeof(p), "%s[%zu]", path, i);
			walk(json_array_get(v, i), elem, where, p);
		}
		return;
	}
	const json_t *t = json_object_get(schema_types, type);
	if (!t) {
		problem("%s: %s: the schema has no type %s", where, path, type);
		return;
	}
	if (!json_is_object(v)) {
		problem("%s: %s: expected a mapping (%s)", where, path, type);
		return;
	}
	const char *k;
	json_t *fv;
	json_object_foreach ((json_t *)v, k, fv) {
		char p[1024];
		snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", k);
		const json_t *ft = json_object_get(t, k);
		if (!ft) {
			char exp[2048];
			expected_fields(t, exp, sizeof(exp));
			problem("%s: %s: unknown field of %s (expected one of %s)", where, p, type,
				exp);
			continue;
		}
		walk(fv, json_string_value(ft), where, p);
	}
}

static void check_doc(const json_t *doc, const char *file, const char *context);

static void
check_configmap_data(const json_t *doc, const char *where)
{
	const char *k;
	json_t *v;
	json_object_foreach (json_object_get(doc, "data"), k, v) {
		size_t kl = strlen(k);
		if (!json_is_string(v) || kl < 5 || strcmp(k + kl - 5, ".yaml") != 0)
			continue;
		char ctx[1200];
		snprintf(ctx, sizeof(ctx), "%s data[%s]", where, k);
		if (strcmp(k, "railfit.yaml") == 0) {
			struct rf_config cfg;
			char err[512];
			rf_config_init(&cfg);
			if (rf_config_parse_yaml(json_string_value(v), json_string_length(v), &cfg,
						 err, sizeof(err)) < 0)
				problem("%s: railfit --config rejects it: %s", ctx, err);
			rf_config_release(&cfg);
			continue;
		}
		json_t *docs = load_docs(json_string_value(v), json_string_length(v), ctx);
		for (size_t i = 0; i < json_array_size(docs); i++)
			check_doc(json_array_get(docs, i), ctx, ctx);
		json_decref(docs);
	}
}

static void
check_kustomization(const json_t *doc, const char *path, const char *file)
{
	char *copy = strdup(path);
	const char *dir = dirname(copy);
	const char *lists[][2] = { { "resources", NULL }, { "components", NULL } };
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < json_array_size(json_object_get(doc, lists[l][0])); i++) {
			const char *r = json_string_value(
				json_array_get(json_object_get(doc, lists[l][0]), i));
			char p[2048];
			struct stat st;
			snprintf(p, sizeof(p), "%s/%s", dir, r ? r : "");
			if (!r || stat(p, &st) < 0)
				problem("%s: %s[%zu]: \"%s\" does not exist", file, lists[l][0], i,
					r ? r : "");
		}
	for (size_t i = 0; i < json_array_size(json_object_get(doc, "patches")); i++) {
		const char *r = json_string_value(json_object_get(
			json_array_get(json_object_get(doc, "patches"), i), "path"));
		char p[2048];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", dir, r ? r : "");
		if (r && stat(p, &st) < 0)
			problem("%s: patches[%zu].path: \"%s\" does not exist", file, i, r);
	}
	for (size_t i = 0; i < json_array_size(json_object_get(doc, "configMapGenerator")); i++) {
		const json_t *files = json_object_get(
			json_array_get(json_object_get(doc, "configMapGenerator"), i), "files");
		for (size_t j = 0; j < json_array_size(files); j++) {
			const char *r = json_string_value(json_array_get(files, j));
			const char *eq = r ? strchr(r, '=') : NULL; /* key=path */
			char p[2048];
			struct stat st;
			snprintf(p, sizeof(p), "%s/%s", dir, eq ? eq + 1 : r ? r : "");
			if (!r || stat(p, &st) < 0)
				problem("%s: configMapGenerator[%zu].files[%zu]: \"%s\" does not exist",
					file, i, j, r ? r : "");
		}
	}
	free(copy);
}

static void
check_doc(const json_t *doc, const char *file, const char *context)
{
	const char *av = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	const char *name =
		json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
	char key[256], where[768];
	if (json_is_object(doc) && !av && !kind && json_object_get(doc, "groups")) {
		/* a plain Prometheus rule file (monitoring/alerts.yaml) */
		snprintf(where, sizeof(where), "%s: Prometheus rules", context);
		walk(doc, "PrometheusRuleSpec", where, "");
		return;
	}
	if (!json_is_object(doc) || !av || !kind) {
		problem("%s: a document without apiVersion and kind", context);
		return;
	}
	snprintf(key, sizeof(key), "%s/%s", av, kind);
	snprintf(where, sizeof(where), "%s: %s %s", context, kind, name ? name : "(unnamed)");
	const char *type = json_string_value(json_object_get(schema_kinds, key));
	if (!type) {
		problem("%s: unknown apiVersion/kind %s", where, key);
		return;
	}
	walk(doc, type, where, "");
	if (strcmp(key, "v1/ConfigMap") == 0)
		check_configmap_data(doc, where);
	if (strcmp(type, "Kustomization") == 0)
		check_kustomization(doc, file, context);
}

static size_t n_files;
static const char *root; /* the PATH argument being walked: names are shown relative to it */

static void
check_file(const char *path)
{
	const char *shown = path;
	if (root && strncmp(path, root, strlen(root)) == 0 && path[strlen(root)] == '/')
		shown = path + strlen(root) + 1;
	json_error_t jerr;
	FILE *f = fopen(path, "rb");
	if (!f) {
		problem("%s: cannot open: %s", path, strerror(errno));
		return;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	do {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				exit(2);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	(void)jerr;
	json_t *docs = load_docs(buf, len, shown);
	for (size_t i = 0; i < json_array_size(docs); i++)
		check_doc(json_array_get(docs, i), path, shown);
	json_decref(docs);
	free(buf);
	n_files++;
}

static int
visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	size_t l = strlen(path);
	if (flag == FTW_F && l > 5 && strcmp(path + l - 5, ".yaml") == 0)
		check_file(path);
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --list: the documents of the files as a List (what `kubectl get -o json` prints), so that tests
 * without a YAML library can feed the examples to railfit. */
static int
list_main(int argc, char **argv)
{
	json_t *items = json_array();
	for (int i = 2; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 2;
		}
		static char buf[1 << 20];
		size_t len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		json_t *docs = load_docs(buf, len, argv[i]);
		json_array_extend(items, docs);
		json_decref(docs);
	}
	json_t *list =
		json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List", "items", items);
	json_dumpf(list, stdout, JSON_INDENT(1));
	putchar('\n');
	json_decref(list);
	return n_problems ? 1 : 0;
}

int
main(int argc, char **argv)
{
	const char *expect = NULL;
	int i = 1;
	if (argc > 1 && strcmp(argv[1], "--list") == 0)
		return list_main(argc, argv);
	if (argc > 2 && strcmp(argv[1], "--expect") == 0) {
		expect = argv[2];
		i = 3;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: check-manifests [--expect FILE] SCHEMA PATH...\n");
		return 2;
	}
	json_error_t jerr;
	json_t *schema = json_load_file(argv[i], 0, &jerr);
	if (!schema) {
		fprintf(stderr, "%s: %s\n", argv[i], jerr.text);
		return 2;
	}
	schema_types = json_object_get(schema, "types");
	schema_kinds = json_object_get(schema, "kinds");
	for (i++; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			root = argv[i];
			nftw(argv[i], visit, 16, FTW_PHYS);
			root = NULL;
		} else {
			check_file(argv[i]);
		}
	}
	if (n_problems)
		qsort(problems, n_problems, sizeof(*problems), cmp);
	int rc = n_problems ? 1 : 0;
	if (expect) {
		/* the expected lines, sorted, must equal the problems */
		FILE *f = fopen(expect, "r");
		char line[4096];
		size_t n = 0;
		rc = f ? 0 : 1;
		while (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!line[0] || line[0] == '#')
				continue;
			bool found = false;
			for (size_t j = 0; j < n_problems && !found; j++)
				found = strcmp(problems[j], line) == 0;
			if (!found) {
				printf("expected but not reported: %s\n", line);
				rc = 1;
			}
			n++;
		}
		if (f)
			fclose(f);
		if (n != n_problems) {
			printf("%zu problems reported, %zu expected\n", n_problems, n);
			rc = 1;
		}
	}
	for (size_t j = 0; j < n_problems; j++) {
		printf("%s\n", problems[j]);
		free(problems[j]);
	}
	free(problems);
	printf("%zu files checked, %zu problems\n", n_files, n_problems);
	json_decref(schema);
	return rc;
}
