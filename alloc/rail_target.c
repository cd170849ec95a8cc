/* The group's rail set on other nodes (see rail_target.h): one pass over the group's entries per
 * request, which the model keeps sorted by node; then a binary search per node. */
#include "alloc/rail_target.h"

#include <stdbool.h>
#include <stddef.h>

#include "alloc/model/model-private.h"

/* Distinct node-level sets counted; a group whose nodes use more distinct sets than this has no
 * set most of them share, and the sets beyond it (seen first after 64 others, in node order) are
 * not candidates. */
#define MAX_SETS 64

/* whether (count a, set a) ranks before (count b, set b): more nodes, then the smaller mask */
static bool
ranks_before(unsigned ca, uint64_t sa, unsigned cb, uint64_t sb)
{
	return ca > cb || (ca == cb && ca && sa < sb);
}

void
rf_rail_target_init(struct rf_rail_target *t, const struct rf_cluster *c,
		    const struct rf_group *grp)
{
	const struct group_index *g = (const struct group_index *)grp;
	uint64_t sets[MAX_SETS];
	unsigned counts[MAX_SETS];
	size_t n_sets = 0;
	*t = (struct rf_rail_target){ .g = grp };
	if (!g)
		return;
	const struct group_rails *e = &c->group_rails[g->first];
	for (size_t i = 0; i < g->n;) {
		unsigned node = e[i].node_idx;
		uint64_t set = 0;
		for (; i < g->n && e[i].node_idx == node; i++)
			set |= e[i].rails;
		if (!set)
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
	for (size_t k = 0; k < n_sets; k++) {
		if (ranks_before(counts[k], sets[k], t->count[0], t->set[0])) {
			t->set[1] = t->set[0];
			t->count[1] = t->count[0];
			t->set[0] = sets[k];
			t->count[0] = counts[k];
		} else if (ranks_before(counts[k], sets[k], t->count[1], t->set[1])) {
			t->set[1] = sets[k];
			t->count[1] = counts[k];
		}
	}
}

uint64_t
rf_rail_target_for(const struct rf_rail_target *t, const struct rf_cluster *c,
		   const struct rf_node *n)
{
	const struct group_index *g = (const struct group_index *)t->g;
	if (!g || !t->count[0])
		return 0;
	if (!n)
		return t->set[0];
	/* n's own set: its entries, found by node index */
	const struct group_rails *range = &c->group_rails[g->first];
	uint64_t mine = 0;
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (range[mid].node_idx < n->idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < g->n && range[lo].node_idx == n->idx; lo++)
		mine |= range[lo].rails;
	/* only the top set can lose its place by not counting n */
	if (!mine || mine != t->set[0])
		return t->set[0];
	if (ranks_before(t->count[0] - 1, t->set[0], t->count[1], t->set[1]))
		return t->set[0];
	return t->count[1] ? t->set[1] : 0;
}
