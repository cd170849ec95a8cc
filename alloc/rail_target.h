/* The rails a pod of a rail group should get on a node: the rail set most of the group's other
 * nodes use (DESIGN section 7.4, the rail part). Pure; any thread. */
#ifndef RF_ALLOC_RAIL_TARGET_H
#define RF_ALLOC_RAIL_TARGET_H

#include <stdint.h>

#include "alloc/model/model.h"

/**
 * The rail set of the group on nodes other than n, node by node (the union of the rails its pods
 * hold on each node), the one most of those nodes use; ties to the smallest set (as a bit mask).
 * 0 when the group holds no rails on another node (g NULL: none anywhere; n NULL: every node is
 * another). When every other node uses the same set this is rf_group_rails_elsewhere(); when
 * they differ, the union would count a rail of any of them as the group's, and a pod taking
 * rails that match no node of the group would score as well as one that matches them all.
 */
uint64_t rf_group_rail_target(const struct rf_cluster *c, const struct rf_group *g,
			      const struct rf_node *n);

#endif
