/* The two human/tool views of a computed topology: the JSON document of `railfit topology -o json`
 * and the `nvidia-smi topo -m` shaped table. Both are built in memory (no I/O); the command prints
 * them. Pure functions, any thread. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/strbuf.h"
#include "topology/pcitree.h"

const char *
rf_pcitopo_cell(const struct rf_pcitopo *t, size_t i, size_t j, char buf[16])
{
	unsigned links = rf_pcitopo_nvlinks(t, i, j);
	if (!links)
		return rf_level_name(rf_pcitopo_level(t, i, j));
	snprintf(buf, 16, "NV%u", links);
	return buf;
}

/* Row i of "nvlinks": the GPUs it shares NVLinks with and how many. */
static int
links_json(const struct rf_pcitopo *t, size_t i, json_t *nvl)
{
	json_t *row = NULL;
	for (size_t j = 0; j < t->n_devices; j++) {
		unsigned links = rf_pcitopo_nvlinks(t, i, j);
		if (!links)
			continue;
		if (!row && (!(row = json_object()) ||
			     json_object_set_new(nvl, t->devices[i].pci, row) < 0))
			return -1;
		if (json_object_set_new(row, t->devices[j].pci, json_integer(links)) < 0)
			return -1;
	}
	return 0;
}

json_t *
rf_pcitopo_json(const struct rf_pcitopo *t, const char *source)
{
	json_t *o = json_object(), *devs = json_array(), *m = json_object(), *notes = json_array();
	json_t *nvl = t->nvlinks ? json_object() : NULL;
	char hex[8];

	if (!o || !devs || !m || !notes || (t->nvlinks && !nvl))
		goto fail;
	if (source && json_object_set_new(o, "source", json_string(source)) < 0)
		goto fail;
	for (size_t i = 0; i < t->n_devices; i++) {
		const struct rf_pcitopo_device *d = &t->devices[i];
		json_t *dj = json_object(), *names = json_array();
		if (!dj || !names || json_array_append_new(devs, dj) < 0) {
			json_decref(names);
			goto fail;
		}
		if (json_object_set_new(dj, "names", names) < 0)
			goto fail;
		for (size_t k = 0; k < d->n_names; k++)
			if (json_array_append_new(names, json_string(d->names[k])) < 0)
				goto fail;
		if (json_object_set_new(dj, "pci", json_string(d->pci)) < 0 ||
		    json_object_set_new(dj, "kind", json_string(rf_pci_kind_name(d->kind))) < 0 ||
		    json_object_set_new(dj, "numa",
					d->numa >= 0 ? json_integer(d->numa) : json_null()) < 0 ||
		    json_object_set_new(dj, "pcieRoot",
					d->pcie_root[0] ? json_string(d->pcie_root) : json_null()) <
			    0)
			goto fail;
		snprintf(hex, sizeof(hex), "%04x", d->vendor_id & 0xffffu);
		if (json_object_set_new(dj, "vendor", json_string(hex)) < 0)
			goto fail;
		snprintf(hex, sizeof(hex), "%04x", d->device_id & 0xffffu);
		if (json_object_set_new(dj, "device", json_string(hex)) < 0)
			goto fail;
		snprintf(hex, sizeof(hex), "%04x", d->class_id & 0xffffu);
		if (json_object_set_new(dj, "class", json_string(hex)) < 0)
			goto fail;

		json_t *row = json_object();
		if (!row || json_object_set_new(m, d->pci, row) < 0)
			goto fail;
		for (size_t j = 0; j < t->n_devices; j++) {
			if (j == i)
				continue;
			/* PCIe levels; NVLink is in "nvlinks" (the table shows NV# instead) */
			if (json_object_set_new(
				    row, t->devices[j].pci,
				    json_string(rf_level_name(rf_pcitopo_level(t, i, j)))) < 0)
				goto fail;
		}
		if (nvl && links_json(t, i, nvl) < 0)
			goto fail;
	}
	for (size_t i = 0; i < t->n_notes; i++)
		if (json_array_append_new(notes, json_string(t->notes[i])) < 0)
			goto fail;
	if (json_object_set_new(o, "devices", devs) < 0) {
		devs = NULL;
		goto fail;
	}
	devs = NULL;
	if (json_object_set_new(o, "matrix", m) < 0) {
		m = NULL;
		goto fail;
	}
	m = NULL;
	if (json_object_set_new(o, "notes", notes) < 0) {
		notes = NULL;
		goto fail;
	}
	notes = NULL;
	if (nvl && json_object_set_new(o, "nvlinks", nvl) < 0) {
		nvl = NULL;
		goto fail;
	}
	return o;
fail:
	json_decref(nvl);
	json_decref(devs);
	json_decref(m);
	json_decref(notes);
	json_decref(o);
	return NULL;
}

/* ---- table ---- */

static void
label(const struct rf_pcitopo *t, size_t i, char *buf, size_t len)
{
	if (t->devices[i].kind == RF_PCI_GPU)
		snprintf(buf, len, "GPU%zu", i);
	else
		snprintf(buf, len, "NIC%zu", i - t->n_gpus);
}

int
rf_pcitopo_table(const struct rf_pcitopo *t, char **ret)
{
	struct rf_strbuf b = { 0 };
	char lab[32];
	int w = 4; /* the widest label or level shown, plus 2 */

	for (size_t i = 0; i < t->n_devices; i++) {
		label(t, i, lab, sizeof(lab));
		if ((int)strlen(lab) > w)
			w = (int)strlen(lab);
		for (size_t j = 0; j < t->n_devices; j++) {
			char cell[16];
			if ((int)strlen(rf_pcitopo_cell(t, i, j, cell)) > w)
				w = (int)strlen(rf_pcitopo_cell(t, i, j, cell));
		}
	}
	w += 2;
	if (t->n_devices == 0) {
		rf_strbuf_printf(&b, "No GPUs or NICs found.\n");
	} else {
		rf_strbuf_printf(&b, "%-*s", w, "");
		for (size_t j = 0; j < t->n_devices; j++) {
			label(t, j, lab, sizeof(lab));
			rf_strbuf_printf(&b, "%-*s", w, lab);
		}
		rf_strbuf_printf(&b, "NUMA Affinity\n");
		for (size_t i = 0; i < t->n_devices; i++) {
			label(t, i, lab, sizeof(lab));
			rf_strbuf_printf(&b, "%-*s", w, lab);
			for (size_t j = 0; j < t->n_devices; j++) {
				char cell[16];
				rf_strbuf_printf(&b, "%-*s", w,
						 i == j ? " X" : rf_pcitopo_cell(t, i, j, cell));
			}
			if (t->devices[i].numa >= 0)
				rf_strbuf_printf(&b, "%d\n", t->devices[i].numa);
			else
				rf_strbuf_printf(&b, "N/A\n");
		}
		rf_strbuf_printf(
			&b,
			"\nLegend:\n\n"
			"  X       = Self\n"
			"  SYS     = Connection traversing PCIe as well as the SMP interconnect "
			"between NUMA nodes (different NUMA nodes)\n"
			"  NODE    = Connection traversing PCIe as well as the interconnect between "
			"PCIe Host Bridges within a NUMA node\n"
			"  PHB     = Connection traversing PCIe as well as a PCIe Host Bridge (same "
			"root complex)\n"
			"  PXB     = Connection traversing multiple PCIe switches (without traversing "
			"the PCIe Host Bridge)\n"
			"  PIX     = Connection traversing at most a single PCIe switch or root port\n"
			"%s"
			"  UNKNOWN = Not enough data\n"
			"\nDevice Legend:\n\n",
			t->nvlinks ? "  NV#     = Connection traversing a bonded set of # NVLinks\n"
				   : "");
		for (size_t i = 0; i < t->n_devices; i++) {
			const struct rf_pcitopo_device *d = &t->devices[i];
			label(t, i, lab, sizeof(lab));
			rf_strbuf_printf(&b, "  %s: %s [%04x:%04x]", lab, d->pci,
					 d->vendor_id & 0xffffu, d->device_id & 0xffffu);
			if (d->pcie_root[0])
				rf_strbuf_printf(&b, " %s", d->pcie_root);
			for (size_t k = 0; k < d->n_names; k++)
				rf_strbuf_printf(&b, "%s%s", k ? ", " : " ", d->names[k]);
			rf_strbuf_printf(&b, "\n");
		}
	}
	if (t->n_notes) {
		rf_strbuf_printf(&b, "\nNotes:\n\n");
		for (size_t i = 0; i < t->n_notes; i++)
			rf_strbuf_printf(&b, "  - %s\n", t->notes[i]);
	}
	char *text = rf_strbuf_steal(&b);
	if (!text)
		return -ENOMEM;
	*ret = text;
	return 0;
}
