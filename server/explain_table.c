/* The explain document (alloc/explain.h) as a table for people: `railfit explain -o table` and
 * /debug/explain?format=table. */
#include "server/explain_table.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config/strbuf.h"

static const char *
part(const json_t *parts, const char *name, char *buf, size_t len)
{
	const json_t *v = json_object_get(parts, name);
	if (!json_is_number(v))
		return "-";
	snprintf(buf, len, "%.2f", json_number_value(v));
	return buf;
}

static void
devices_cell(const json_t *arr, char *buf, size_t len)
{
	size_t off = 0, i;
	json_t *p;
	buf[0] = 0;
	json_array_foreach (arr, i, p) {
		const char *k = json_string_value(json_object_get(p, "kind"));
		if (k && strcmp(k, "other") == 0)
			continue;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "+" : "",
						json_string_value(json_object_get(p, "device")));
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

char *
rf_explain_table(const json_t *doc)
{
	struct rf_strbuf b = { 0 };
	const json_t *nodes = json_object_get(doc, "nodes");
	size_t i;
	json_t *n;

	rf_strbuf_printf(&b, "pod %s: demand %s", json_string_value(json_object_get(doc, "pod")),
			 json_string_value(json_object_get(doc, "demand")));
	const char *ur = json_string_value(json_object_get(doc, "unknownReason"));
	if (ur)
		rf_strbuf_printf(&b, " (%s)", ur);
	const char *ma = json_string_value(json_object_get(doc, "minAlignment"));
	if (ma)
		rf_strbuf_printf(&b, ", min-alignment %s", ma);
	const char *mg = json_string_value(json_object_get(doc, "minGpuAlignment"));
	if (mg)
		rf_strbuf_printf(&b, ", min-gpu-alignment %s", mg);
	const char *sp = json_string_value(json_object_get(doc, "maxSpread"));
	if (sp)
		rf_strbuf_printf(&b, ", max-spread %s", sp);
	json_t *claims = json_object_get(doc, "claims");
	if (json_array_size(claims)) {
		rf_strbuf_printf(&b, ", claims");
		json_array_foreach (claims, i, n)
			rf_strbuf_printf(&b, " %s", json_string_value(n));
	}
	/* the GPU-to-GPU and network columns only when some node has those parts (issue 15), so
	 * that the table of every other pod stays as it was */
	bool extra = false;
	json_array_foreach (nodes, i, n) {
		const json_t *parts = json_object_get(n, "parts");
		extra = extra || json_object_get(parts, "gpu") ||
			json_object_get(parts, "locality");
	}
	rf_strbuf_printf(&b, "\n\n%-16s %-13s %5s %6s %6s %6s %6s ", "NODE", "VERDICT", "SCORE",
			 "ALIGN", "BW", "RAIL", "PACK");
	if (extra)
		rf_strbuf_printf(&b, "%6s %6s %-7s ", "GPU", "NET", "GPULVL");
	rf_strbuf_printf(&b, "%-7s %-7s %-34s %s\n", "LEVEL", "BEST", "PREDICTED", "REASON");
	json_array_foreach (nodes, i, n) {
		char a[16], bw[16], rl[16], pk[16], gp[16], nt[16], dev[256];
		const json_t *parts = json_object_get(n, "parts");
		const char *lvl = json_string_value(json_object_get(n, "level"));
		const char *best = json_string_value(json_object_get(n, "bestLevel"));
		const json_t *reasons = json_object_get(n, "reasons");
		devices_cell(json_object_get(n, "predicted"), dev, sizeof(dev));
		rf_strbuf_printf(&b, "%-16s %-13s %5lld %6s %6s %6s %6s ",
				 json_string_value(json_object_get(n, "node")),
				 json_string_value(json_object_get(n, "verdict")),
				 (long long)json_integer_value(json_object_get(n, "score")),
				 part(parts, "alignment", a, sizeof(a)),
				 part(parts, "bandwidth", bw, sizeof(bw)),
				 part(parts, "rail", rl, sizeof(rl)),
				 part(parts, "packing", pk, sizeof(pk)));
		if (extra) {
			const char *gl = json_string_value(json_object_get(n, "gpuLevel"));
			rf_strbuf_printf(&b, "%6s %6s %-7s ", part(parts, "gpu", gp, sizeof(gp)),
					 part(parts, "locality", nt, sizeof(nt)), gl ? gl : "-");
		}
		rf_strbuf_printf(
			&b, "%-7s %-7s %-34s %s\n", lvl ? lvl : "-", best ? best : "-", dev,
			json_array_size(reasons) ? json_string_value(json_array_get(reasons, 0))
						 : "");
		for (size_t k = 1; k < json_array_size(reasons); k++)
			rf_strbuf_printf(&b, "%-16s %s\n", "",
					 json_string_value(json_array_get(reasons, k)));
	}
	return rf_strbuf_steal(&b);
}
