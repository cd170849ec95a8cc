/* Bandwidth over-commitment of a generation (see overcommit.h). */
#include "alloc/sim/overcommit.h"

#include <stdbool.h>

static bool
over(struct rf_quantity used, struct rf_quantity cap)
{
	return rf_quantity_cmp(used, cap) > 0;
}

void
rf_overcommitted(const struct rf_cluster *c, size_t *ret_nics, size_t *ret_frontends)
{
	const struct rf_config *cfg = rf_cluster_config(c);
	size_t nics = 0, fe = 0;
	for (size_t i = 0; i < rf_cluster_n_nodes(c); i++) {
		const struct rf_node *n = rf_cluster_node_at(c, i);
		const struct rf_node_use *u = rf_node_use(c, n);
		for (size_t k = 0; k < n->n_devices; k++) {
			const struct rf_device *d = n->devices[k];
			if (d->kind == RF_DEV_NIC &&
			    over(rf_device_bw_used(c, d), rf_device_bw_capacity(d, cfg, NULL)))
				nics++;
		}
		fe += over(u->fe_egress_used, n->fe_capacity) ||
		      over(u->fe_ingress_used, n->fe_capacity);
	}
	*ret_nics = nics;
	*ret_frontends = fe;
}
