/* The group's rail set on other nodes (see rail_target.h): one pass over the group's entries,
 * which the model keeps sorted by node. */
#include "alloc/rail_target.h"

#include <stdbool.h>
#include <stddef.h>

#include "alloc/model/model-private.h"

/* Distinct node-level sets counted; a group whose nodes use more distinct sets than this has no
 * set most of them share, and the sets beyond it (seen on one node each) are not candidates. */
#define MAX_SETS 64

uint64_t
rf_group_rail_target(const struct rf_cluster *c, const struct rf_group *grp,
		     const struct rf_node *n)
{
	const struct group_index *g = (const struct group_index *)grp;
	uint64_t sets[MAX_SETS];
	unsigned counts[MAX_SETS];
	size_t n_sets = 0;
	if (!g)
		return 0;
	const struct group_rails *e = &c->group_rails[g->first];
	for (size_t i = 0; i < g->n;) {
		unsigned node = e[i].node_idx;
		uint64_t set = 0;
		for (; i < g->n && e[i].node_idx == node; i++)
			set |= e[i].rails;
		if (!set || (n && node == n->idx))
			continue;
		size_t k = 0;
		while (k < n_sets && sets[k] != set)
			k++;
		if (k == n_sets) {
			if (n_sets == MAX_SETS)
				continue;
			sets[n_sets] = set;
			counts[n_sets++] = 0;
		}
		counts[k]++;
	}
	uint64_t best = 0;
	unsigned most = 0;
	for (size_t k = 0; k < n_sets; k++)
		if (counts[k] > most || (counts[k] == most && sets[k] < best)) {
			most = counts[k];
			best = sets[k];
		}
	return best;
}
