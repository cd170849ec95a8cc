/* The rails a pod of a rail group should get on a node: the rail set most of the group's other
 * nodes use (DESIGN section 7.4, the rail part). Pure; any thread. */
#ifndef RF_ALLOC_RAIL_TARGET_H
#define RF_ALLOC_RAIL_TARGET_H

#include <stdint.h>

#include "alloc/model/model.h"

/* The two rail sets most of a group's nodes use, counted once per request: excluding one node
 * can only lower its own set's count, so the answer for any node is one of these two (or 0). */
struct rf_rail_target {
	const struct rf_group *g;
	uint64_t set[2]; /* set[0] first by count, ties to the smaller mask; 0 = none */
	unsigned count[2];
};

/** Count the group's node-level rail sets in generation c (g NULL: the group holds none). */
void rf_rail_target_init(struct rf_rail_target *t, const struct rf_cluster *c,
			 const struct rf_group *g);

/**
 * The rail set of the group on nodes other than n, node by node (the union of the rails its pods
 * hold on each node), the one most of those nodes use; ties to the smallest set (as a bit mask).
 * 0 when the group holds no rails on another node (n NULL: every node is another). When every
 * other node uses the same set this is rf_group_rails_elsewhere(); when they differ, the union
 * would count a rail of any of them as the group's, and a pod taking rails that match no node of
 * the group would score as well as one that matches them all. O(log m) for m group entries.
 */
uint64_t rf_rail_target_for(const struct rf_rail_target *t, const struct rf_cluster *c,
			    const struct rf_node *n);

#endif
