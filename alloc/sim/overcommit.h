/* Bandwidth over-commitment of a generation: what `railfit simulate` reports after a replay and
 * what railfit_nic_overcommitted / railfit_frontend_overcommitted show live. Pure logic. */
#ifndef RF_ALLOC_SIM_OVERCOMMIT_H
#define RF_ALLOC_SIM_OVERCOMMIT_H

#include <stddef.h>

#include "alloc/model/model.h"

/**
 * NICs whose bandwidth in use (consumed capacity + railfit.io/nic-bandwidth of the pods holding
 * them) exceeds their capacity, and nodes whose front-end NIC carries more egress or ingress
 * (the CNI bandwidth annotations of its pods) than it has.
 */
void rf_overcommitted(const struct rf_cluster *c, size_t *ret_nics, size_t *ret_frontends);

#endif
