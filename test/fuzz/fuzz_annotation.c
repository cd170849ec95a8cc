/* Fuzz target: the railfit.io/pci-topology annotation decoder (topology/annotation.h), which
 * reads whatever a Node says. Whatever the bytes, it must not crash or leak; a failure must come
 * with a one-line reason; a value that decodes must answer lookups for all its devices and
 * encode back (through a rebuilt topology) to a value that decodes to the same levels. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topology/annotation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rebuild a computed topology from a decoded annotation and check the codec agrees with itself. */
static void
re_encode(const struct rf_topo_annotation *a)
{
	size_t n = rf_topo_annotation_n_devices(a);
	struct rf_pcitopo *t = calloc(1, sizeof(*t));
	struct rf_topo_annotation *b = NULL;
	char *v = NULL;
	enum rf_level l1, l2;

	if (!t)
		return;
	t->devices = calloc(n ? n : 1, sizeof(*t->devices));
	t->levels = calloc(n ? n * n : 1, 1);
	if (!t->devices || !t->levels)
		goto out;
	t->n_devices = n;
	for (size_t i = 0; i < n; i++) {
		memcpy(t->devices[i].pci, rf_topo_annotation_pci(a, i), RF_PCI_ADDR_LEN);
		t->devices[i].kind = rf_topo_annotation_kind(a, i);
		t->devices[i].numa = rf_topo_annotation_numa(a, i);
		for (size_t j = 0; j < n; j++) {
			if (rf_topo_annotation_level(a, t->devices[i].pci,
						     rf_topo_annotation_pci(a, j), &l1) != 0)
				abort();
			t->levels[i * n + j] = (unsigned char)l1;
		}
	}
	/* a decoded value may still be too big to re-encode (short address forms grow) */
	if (rf_topo_annotation_encode(t, &v) != 0)
		goto out;
	if (rf_topo_annotation_decode(v, strlen(v), &b, NULL, 0) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			if (rf_topo_annotation_level(a, t->devices[i].pci, t->devices[j].pci,
						     &l1) ||
			    rf_topo_annotation_level(b, t->devices[i].pci, t->devices[j].pci,
						     &l2) ||
			    l1 != l2)
				abort();
		}
out:
	rf_topo_annotation_free(b);
	free(v);
	rf_pcitopo_free(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rf_topo_annotation *a = NULL;
	char err[256];
	enum rf_level l;

	err[0] = '\0';
	int r = rf_topo_annotation_decode((const char *)data, size, &a, err, sizeof(err));
	if (r < 0) {
		if (a || !err[0] || strchr(err, '\n'))
			abort();
		return 0;
	}
	size_t n = rf_topo_annotation_n_devices(a);
	for (size_t i = 0; i < n; i++) {
		const char *p = rf_topo_annotation_pci(a, i);
		if (rf_topo_annotation_find(a, p) != (int)i)
			abort();
		if (rf_topo_annotation_level(a, p, rf_topo_annotation_pci(a, n - 1 - i), &l) != 0 ||
		    l >= RF_LEVEL_COUNT)
			abort();
	}
	rf_topo_annotation_level(a, "0000:00:00.0", "garbage", &l);
	re_encode(a);
	rf_topo_annotation_free(a);
	return 0;
}
