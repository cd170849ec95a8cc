/* The simulate report as a table and as an SVG chart (see report.h). */
#include "alloc/sim/report.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/level.h"
#include "config/strbuf.h"

#define LABEL_W 46
#define COL_W   16

static const json_t *
column(const json_t *report, size_t i)
{
	return json_array_get(json_object_get(report, "columns"), i);
}

static long long
num(const json_t *col, const char *path)
{
	const json_t *v = col;
	char key[64];
	for (const char *p = path; v && *p;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		snprintf(key, sizeof(key), "%.*s", (int)len, p);
		v = json_object_get(v, key);
		p += len + (dot ? 1 : 0);
	}
	return json_integer_value(v);
}

static void
row_text(struct rf_strbuf *b, const char *label, const char *a, const char *c)
{
	rf_strbuf_printf(b, "%-*s%*s%*s\n", LABEL_W, label, COL_W, a, COL_W, c);
}

static void
row_num(struct rf_strbuf *b, const json_t *report, const char *label, const char *path)
{
	char a[32], c[32];
	snprintf(a, sizeof(a), "%lld", num(column(report, 0), path));
	snprintf(c, sizeof(c), "%lld", num(column(report, 1), path));
	row_text(b, label, a, c);
}

static void
row_of(struct rf_strbuf *b, const json_t *report, const char *label, const char *path,
       const char *of_path)
{
	char a[48], c[48];
	snprintf(a, sizeof(a), "%lld of %lld", num(column(report, 0), path),
		 num(column(report, 0), of_path));
	snprintf(c, sizeof(c), "%lld of %lld", num(column(report, 1), path),
		 num(column(report, 1), of_path));
	row_text(b, label, a, c);
}

/* Words wrapped at 96 columns. */
static void
wrapped(struct rf_strbuf *b, const char *text)
{
	size_t col = 0;
	for (const char *p = text; *p;) {
		size_t w = strcspn(p, " ");
		if (col && col + 1 + w > 96) {
			rf_strbuf_putc(b, '\n');
			col = 0;
		} else if (col) {
			rf_strbuf_putc(b, ' ');
			col++;
		}
		rf_strbuf_putn(b, p, w);
		col += w;
		p += w;
		while (*p == ' ')
			p++;
	}
	rf_strbuf_putc(b, '\n');
}

static void
pending_rows(struct rf_strbuf *b, const json_t *report)
{
	/* the reasons of both columns, in name order */
	const json_t *ra = json_object_get(column(report, 0), "pendingReasons");
	const json_t *rc = json_object_get(column(report, 1), "pendingReasons");
	json_t *all = json_object();
	const char *k;
	json_t *v;
	json_object_foreach ((json_t *)ra, k, v)
		json_object_set(all, k, v);
	json_object_foreach ((json_t *)rc, k, v)
		json_object_set(all, k, v);
	size_t n = json_object_size(all), i = 0;
	const char **keys = calloc(n + 1, sizeof(*keys));
	if (!keys) {
		b->oom = true;
		json_decref(all);
		return;
	}
	json_object_foreach (all, k, v)
		keys[i++] = k;
	for (size_t x = 1; x < n; x++)
		for (size_t y = x; y > 0 && strcmp(keys[y - 1], keys[y]) > 0; y--) {
			const char *t = keys[y];
			keys[y] = keys[y - 1];
			keys[y - 1] = t;
		}
	for (i = 0; i < n; i++) {
		char label[LABEL_W + 1], a[32], c[32];
		snprintf(label, sizeof(label), "  %s", keys[i]);
		if (strlen(keys[i]) + 2 > LABEL_W)
			memcpy(label + LABEL_W - 3, "...", 4);
		snprintf(a, sizeof(a), "%lld", json_integer_value(json_object_get(ra, keys[i])));
		snprintf(c, sizeof(c), "%lld", json_integer_value(json_object_get(rc, keys[i])));
		row_text(b, label, a, c);
	}
	free(keys);
	json_decref(all);
}

/* Either column has some of it (a section that applies to neither is left out). */
static bool
either(const json_t *report, const char *path)
{
	return num(column(report, 0), path) > 0 || num(column(report, 1), path) > 0;
}

/* The score parts beyond the NIC (issue 15): GPU to GPU of pods with 2+ GPUs, DRA CPUs on
 * their GPUs' NUMA node. */
static void
gpu_cpu_rows(struct rf_strbuf *b, const json_t *report)
{
	if (either(report, "multiGpuPods")) {
		rf_strbuf_printf(b, "GPU-GPU level of pods with 2+ GPUs (worst pair)\n");
		for (int l = -1; l < RF_LEVEL_COUNT; l++) {
			const char *name = rf_level_name(l < 0 ? RF_LEVEL_NVL : (enum rf_level)l);
			char label[32], path[32];
			snprintf(label, sizeof(label), "  %s", name);
			snprintf(path, sizeof(path), "gpuLevels.%s", name);
			row_num(b, report, label, path);
		}
		row_of(b, report, "pods with GPUs below PHB of each other", "multiGpuBelowPHB",
		       "multiGpuPods");
		if (either(report, "minGpuAlignment.asked"))
			row_of(b, report, "pods given their min-gpu-alignment",
			       "minGpuAlignment.met", "minGpuAlignment.asked");
	}
	if (either(report, "cpuClaims.pods")) {
		row_of(b, report, "pods with every DRA CPU on its GPUs' NUMA",
		       "cpuClaims.podsAligned", "cpuClaims.pods");
		row_of(b, report, "DRA CPU devices on their GPUs' NUMA node",
		       "cpuClaims.devicesOnGpuNuma", "cpuClaims.devicesKnown");
	}
}

/* Jobs by where their pods run in the network (groups.blockLabels, .spineLabels). */
static void
locality_rows(struct rf_strbuf *b, const json_t *report)
{
	if (!either(report, "jobLocality.jobs"))
		return;
	row_of(b, report, "jobs inside one network block", "jobLocality.oneBlock",
	       "jobLocality.jobs");
	row_of(b, report, "jobs inside one spine, several blocks", "jobLocality.oneSpine",
	       "jobLocality.jobs");
	row_of(b, report, "jobs spread over spines (or blocks)", "jobLocality.spread",
	       "jobLocality.jobs");
	row_of(b, report, "jobs on nodes without block/spine labels", "jobLocality.unlabelled",
	       "jobLocality.jobs");
}

char *
rf_sim_table(const json_t *report)
{
	struct rf_strbuf b = { 0 };
	char a[48], c[48];
	long long pods = json_integer_value(json_object_get(report, "pods"));
	long long nodes = json_integer_value(json_object_get(report, "nodes"));
	rf_strbuf_printf(&b, "railfit simulate: %lld pod%s on %lld node%s, seed %lld\n", pods,
			 pods == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s",
			 json_integer_value(json_object_get(report, "seed")));
	wrapped(&b, json_string_value(json_object_get(report, "approximation")));
	rf_strbuf_putc(&b, '\n');
	row_text(&b, "", "kube-scheduler", "with railfit");
	row_num(&b, report, "pods placed", "placed");
	row_num(&b, report, "pods pending", "pending");
	pending_rows(&b, report);
	rf_strbuf_printf(&b, "GPU-NIC pairs by level (each GPU to its nearest NIC)\n");
	for (int l = 0; l < RF_LEVEL_COUNT; l++) {
		char label[32], path[32];
		snprintf(label, sizeof(label), "  %s", rf_level_name(l));
		snprintf(path, sizeof(path), "levels.%s", rf_level_name(l));
		row_num(&b, report, label, path);
	}
	row_of(&b, report, "pods with GPUs and NICs below PHB", "multiDeviceBelowPHB",
	       "gpuNicPods");
	row_of(&b, report, "pods given their min-alignment", "minAlignment.met",
	       "minAlignment.asked");
	gpu_cpu_rows(&b, report);
	row_num(&b, report, "NICs over-committed (bandwidth)", "nicsOvercommitted");
	row_num(&b, report, "front-end NICs over-committed", "frontendOvercommitted");
	snprintf(a, sizeof(a), "%lld of %zu", num(column(report, 0), "jobsOnSameRails"),
		 json_array_size(json_object_get(column(report, 0), "jobs")));
	snprintf(c, sizeof(c), "%lld of %zu", num(column(report, 1), "jobsOnSameRails"),
		 json_array_size(json_object_get(column(report, 1), "jobs")));
	row_text(&b, "jobs whose nodes all use the same rails", a, c);
	for (int i = 0; i < 2; i++) {
		const json_t *rc = json_object_get(column(report, (size_t)i), "railConsistency");
		snprintf(i ? c : a, sizeof(a), json_is_number(rc) ? "%.0f%%" : "-",
			 json_number_value(rc) * 100);
	}
	row_text(&b, "rail consistency (mean over jobs)", a, c);
	locality_rows(&b, report);
	row_num(&b, report, "free aligned GPU+NIC pairs (PHB or better)", "freeAlignedPairs");
	row_num(&b, report, "nodes with every GPU and rail NIC free", "freeWholeNodes");
	return rf_strbuf_steal(&b);
}

/* ---- SVG ---- */

static void
xml_text(struct rf_strbuf *b, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<':
			rf_strbuf_puts(b, "&lt;");
			break;
		case '>':
			rf_strbuf_puts(b, "&gt;");
			break;
		case '&':
			rf_strbuf_puts(b, "&amp;");
			break;
		case '"':
			rf_strbuf_puts(b, "&quot;");
			break;
		default:
			rf_strbuf_putc(b, *s);
		}
}

#define SVG_W      760
#define CHART_H    200
#define BAR_W      22
#define GROUP_W    64
#define COLOR_BASE "#9e9e9e"
#define COLOR_RF   "#1f6fb4"
#define SVG_LINE   140 /* characters of the footnote per line (font-size 9 in SVG_W) */

struct bar_group {
	const char *label;
	long long v[2];
};

/* One bar chart: groups of two bars (kube-scheduler, railfit), scaled to the largest value. */
static void
chart(struct rf_strbuf *b, int x0, int y0, const char *title, const struct bar_group *g, size_t n)
{
	long long max = 1;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			if (g[i].v[k] > max)
				max = g[i].v[k];
	rf_strbuf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">", x0,
			 y0 - CHART_H - 16);
	xml_text(b, title);
	rf_strbuf_puts(b, "</text>\n");
	rf_strbuf_printf(b,
			 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\" "
			 "stroke-width=\"1\"/>\n",
			 x0, y0, x0 + (int)n * GROUP_W, y0);
	for (size_t i = 0; i < n; i++) {
		int gx = x0 + (int)i * GROUP_W + 8;
		for (int k = 0; k < 2; k++) {
			int h = (int)((double)g[i].v[k] * CHART_H / (double)max + 0.5);
			int x = gx + k * (BAR_W + 2);
			rf_strbuf_printf(b,
					 "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
					 "fill=\"%s\"><title>%s: %lld</title></rect>\n",
					 x, y0 - h, BAR_W, h, k ? COLOR_RF : COLOR_BASE,
					 k ? "with railfit" : "kube-scheduler", g[i].v[k]);
			rf_strbuf_printf(b,
					 "<text x=\"%d\" y=\"%d\" font-size=\"10\" "
					 "text-anchor=\"middle\">%lld</text>\n",
					 x + BAR_W / 2, y0 - h - 3, g[i].v[k]);
		}
		rf_strbuf_printf(b,
				 "<text x=\"%d\" y=\"%d\" font-size=\"11\" "
				 "text-anchor=\"middle\">",
				 gx + BAR_W + 1, y0 + 14);
		xml_text(b, g[i].label);
		rf_strbuf_puts(b, "</text>\n");
	}
}

char *
rf_sim_svg(const json_t *report)
{
	struct rf_strbuf b = { 0 };
	struct bar_group levels[RF_LEVEL_COUNT], over[4];
	for (int l = 0; l < RF_LEVEL_COUNT; l++) {
		char path[32];
		snprintf(path, sizeof(path), "levels.%s", rf_level_name(l));
		levels[l].label = rf_level_name(l);
		for (int k = 0; k < 2; k++)
			levels[l].v[k] = num(column(report, (size_t)k), path);
	}
	static const char *const over_label[4] = { "NICs", "front-end NICs", "below PHB",
						   "pending" };
	static const char *const over_path[4] = { "nicsOvercommitted", "frontendOvercommitted",
						  "multiDeviceBelowPHB", "pending" };
	for (int i = 0; i < 4; i++) {
		over[i].label = over_label[i];
		for (int k = 0; k < 2; k++)
			over[i].v[k] = num(column(report, (size_t)k), over_path[i]);
	}
	/* beyond the NIC (issue 15), when it applies: GPU-GPU levels, DRA CPUs, job locality */
	struct bar_group beyond[RF_LEVEL_COUNT + 1 + 4];
	size_t n_beyond = 0;
	if (either(report, "multiGpuPods"))
		for (int l = -1; l < RF_LEVEL_COUNT; l++) {
			char path[32];
			const char *name = rf_level_name(l < 0 ? RF_LEVEL_NVL : (enum rf_level)l);
			snprintf(path, sizeof(path), "gpuLevels.%s", name);
			beyond[n_beyond].label = name;
			for (int k = 0; k < 2; k++)
				beyond[n_beyond].v[k] = num(column(report, (size_t)k), path);
			n_beyond++;
		}
	/* at most 7 levels and 4 more bars: 11 groups fit SVG_W */
	static const char *const more_label[4] = { "CPU off-NUMA", "1 block", "1 spine", "spread" };
	for (int i = 0; i < 4; i++) {
		if (!either(report, i == 0 ? "cpuClaims.pods" : "jobLocality.jobs"))
			continue;
		beyond[n_beyond].label = more_label[i];
		for (int k = 0; k < 2; k++) {
			const json_t *col = column(report, (size_t)k);
			long long v = i == 0 ? num(col, "cpuClaims.devicesKnown") -
						       num(col, "cpuClaims.devicesOnGpuNuma")
				      : i == 1 ? num(col, "jobLocality.oneBlock")
				      : i == 2 ? num(col, "jobLocality.oneSpine")
					       : num(col, "jobLocality.spread") +
							 num(col, "jobLocality.unlabelled");
			beyond[n_beyond].v[k] = v;
		}
		n_beyond++;
	}
	int h = 2 * CHART_H + 220 + (n_beyond ? CHART_H + 90 : 0);
	rf_strbuf_printf(&b,
			 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			 "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
			 "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
			 SVG_W, h, SVG_W, h);
	rf_strbuf_printf(&b,
			 "<text x=\"20\" y=\"24\" font-size=\"16\" font-weight=\"bold\">railfit "
			 "simulate: %lld pods on %lld nodes (seed %lld)</text>\n",
			 json_integer_value(json_object_get(report, "pods")),
			 json_integer_value(json_object_get(report, "nodes")),
			 json_integer_value(json_object_get(report, "seed")));
	rf_strbuf_printf(&b,
			 "<rect x=\"480\" y=\"40\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			 "<text x=\"498\" y=\"50\" font-size=\"12\">kube-scheduler "
			 "(approximated)</text>\n"
			 "<rect x=\"480\" y=\"58\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			 "<text x=\"498\" y=\"68\" font-size=\"12\">with railfit</text>\n",
			 COLOR_BASE, COLOR_RF);
	chart(&b, 40, 60 + CHART_H + 40, "GPU-NIC pairs by level (each GPU to its nearest NIC)",
	      levels, RF_LEVEL_COUNT);
	chart(&b, 40, 2 * CHART_H + 150, "Over-committed NICs, pods below PHB, pods pending", over,
	      4);
	if (n_beyond)
		chart(&b, 40, 3 * CHART_H + 240,
		      "Beyond the NIC: GPU-GPU levels (2+ GPUs), CPUs off NUMA, Jobs in blocks",
		      beyond, n_beyond);
	/* the approximation's words, wrapped into lines that fit the width */
	const char *p = json_string_value(json_object_get(report, "approximation"));
	for (int y = h - 40; p && *p; y += 11) {
		size_t len = strlen(p), cut = len;
		if (len > SVG_LINE) {
			cut = SVG_LINE;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (!cut)
				cut = SVG_LINE;
		}
		char line[SVG_LINE + 1];
		snprintf(line, sizeof(line), "%.*s", (int)cut, p);
		rf_strbuf_printf(&b, "<text x=\"20\" y=\"%d\" font-size=\"9\" fill=\"#555\">", y);
		xml_text(&b, line);
		rf_strbuf_puts(&b, "</text>\n");
		p += cut;
		while (*p == ' ')
			p++;
	}
	rf_strbuf_puts(&b, "</svg>\n");
	return rf_strbuf_steal(&b);
}
