/* Consumable capacity (dra-api.md section 10.5, reference/dra-allocator.md section 7): what one
 * allocation of a request consumes of a device's capacity, and whether the device has it left. */
#include <stdint.h>
#include <string.h>

#include "alloc/predict-private.h"

static rf_i128
ceil_div(rf_i128 a, rf_i128 b)
{
	return (a + b - 1) / b;
}

#define NANO_PER_MILLI 1000000

/* Is every bound of cap's validRange a whole number of milli-units (and the step at least 1m)?
 * Then 1.37 rounds in milli-units (useMilli). */
static bool
range_in_milli(const struct rf_capacity *cap)
{
	const struct rf_quantity *q[3] = { &cap->range_min,
					   cap->has_range_max ? &cap->range_max : NULL,
					   cap->has_range_step ? &cap->range_step : NULL };
	const rf_i128 max_milli = (rf_i128)INT64_MAX * NANO_PER_MILLI;
	for (size_t i = 0; i < 3; i++)
		if (q[i] && (q[i]->nano % NANO_PER_MILLI != 0 || q[i]->nano > max_milli ||
			     q[i]->nano < -max_milli))
			return false;
	return !cap->has_range_step || cap->range_step.nano >= NANO_PER_MILLI;
}

/* How a validRange with a step rounds a request up: in whole units (Quantity.Value(), itself
 * rounded up, so a min or step of 0.5 counts as 1: D362 consumable_capacity.go:114-134) in 1.36;
 * in 1.37 (DRAFractionalCapacityRange, beta and on, kubernetes#140161) in milli-units when the
 * range is (range_in_milli), else in whole units as before. railfit's rules for 1.34/1.35 (where
 * consumable capacity is an alpha feature, off by default) keep their exact arithmetic. */
static bool
rules_range_whole_units(const struct search *s, const struct rf_capacity *cap)
{
	if (s->ver == RF_DRA_1_36)
		return true;
	return s->ver >= RF_DRA_1_37 && !range_in_milli(cap);
}

/* What one allocation of alt consumes of capacity cap (dra-api.md section 10.5); false when the
 * request cannot be satisfied by this capacity at all. */
bool
rf_search_consumption(const struct search *s, const struct rf_request_alt *alt,
		      const struct rf_capacity *cap, struct rf_quantity *ret)
{
	const struct rf_quantity *asked = NULL;
	for (size_t i = 0; i < alt->n_cap_requests; i++)
		if (strcmp(alt->cap_request_names[i], cap->raw_name) == 0)
			asked = &alt->cap_request_values[i];
	if (!asked) {
		*ret = cap->has_default ? cap->def : cap->value;
		return true;
	}
	struct rf_quantity v = *asked;
	if (cap->has_range) {
		if (rf_quantity_cmp(v, cap->range_min) < 0) {
			v = cap->range_min;
		} else if (cap->has_range_step && rules_range_whole_units(s, cap)) {
			rf_i128 step = rf_quantity_value(cap->range_step);
			rf_i128 min = rf_quantity_value(cap->range_min);
			rf_i128 over = (rf_i128)rf_quantity_value(v) - min;
			/* the API requires a step > 0 (0 would panic upstream); past INT64_MAX
			 * upstream cannot represent the result either */
			if (step <= 0)
				return false;
			rf_i128 val = min + (over / step + (over % step != 0)) * step;
			if (val > INT64_MAX || val < INT64_MIN)
				return false;
			v.nano = val * 1000000000;
		} else if (cap->has_range_step && cap->range_step.nano > 0) {
			rf_i128 over = v.nano - cap->range_min.nano;
			v.nano = cap->range_min.nano +
				 ceil_div(over, cap->range_step.nano) * cap->range_step.nano;
		}
		if (cap->has_range_max && rf_quantity_cmp(v, cap->range_max) > 0)
			return false;
	} else if (cap->n_valid_values) {
		size_t i = 0;
		while (i < cap->n_valid_values && rf_quantity_cmp(cap->valid_values[i], v) < 0)
			i++;
		if (i == cap->n_valid_values)
			return false;
		v = cap->valid_values[i];
	}
	*ret = v;
	return true;
}

/* with_allocated, with_picks: count what allocations hold of the device, and what the search
 * itself has taken of it */
bool
rf_search_capacity_fits_state(const struct search *s, const struct rf_request_alt *alt,
			      const struct rf_device *d, bool with_allocated, bool with_picks)
{
	/* every requested key must exist on the device */
	for (size_t i = 0; i < alt->n_cap_requests; i++) {
		bool found = false;
		for (size_t c = 0; c < d->n_caps && !found; c++)
			found = strcmp(d->caps[c].raw_name, alt->cap_request_names[i]) == 0;
		if (!found)
			return false;
	}
	if (!d->allow_multiple) {
		/* an exclusive device must simply be large enough */
		for (size_t i = 0; i < alt->n_cap_requests; i++)
			for (size_t c = 0; c < d->n_caps; c++)
				if (strcmp(d->caps[c].raw_name, alt->cap_request_names[i]) == 0 &&
				    rf_quantity_cmp(alt->cap_request_values[i], d->caps[c].value) >
					    0)
					return false;
		return true;
	}
	for (size_t c = 0; c < d->n_caps; c++) {
		const struct rf_capacity *cap = &d->caps[c];
		struct rf_quantity total = { 0 }, q;
		if (!rf_search_consumption(s, alt, cap, &q))
			return false;
		total = q;
		const struct rf_quantity *used = rf_dev_use(s->req->cluster, d)->consumed;
		if (used && with_allocated && !s->req->ignore_usage) {
			total = rf_quantity_add(total, used[c]);
			for (size_t k = 0; s->req->release && k < s->req->release->n_claims; k++)
				total = rf_quantity_sub(
					total,
					rf_claim_consumed(s->req->release->claims[k], d, cap));
		}
		for (size_t p = 0; with_picks && p < s->cur.n; p++) {
			const struct rf_pick *pk = &s->cur.picks[p];
			if (pk->dev == d && pk->alt && rf_search_consumption(s, pk->alt, cap, &q))
				total = rf_quantity_add(total, q);
		}
		if (rf_quantity_cmp(total, cap->value) > 0)
			return false;
	}
	return true;
}
