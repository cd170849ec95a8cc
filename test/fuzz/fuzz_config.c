/* Fuzz target: the configuration parser, and the quantity and duration grammars it relies on.
 * Whatever the input, nothing may crash, leak, or break the invariants checked below. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/duration.h"
#include "config/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_quantity(const char *s, size_t len)
{
	struct rf_quantity q, back;
	char buf[RF_QUANTITY_FMT_MAX];

	if (rf_quantity_parsen(s, len, &q) != 0)
		return;
	/* a parsed quantity prints in a form that parses back to the same value */
	rf_quantity_format(q, buf);
	if (rf_quantity_parse(buf, &back) != 0 || rf_quantity_cmp(q, back) != 0)
		abort();
	(void)rf_quantity_value(q);
	(void)rf_quantity_to_double(q);
	(void)rf_quantity_add(q, back);
	(void)rf_quantity_sub(q, back);
}

static void
check_duration(const char *s)
{
	int64_t ms, back;
	char buf[64];

	if (rf_duration_parse(s, &ms) != 0)
		return;
	if (ms < 0)
		abort();
	if (ms > INT64_MAX / 1000000)
		return; /* rounded up past what fits in int64 nanoseconds: fine, but not
			   re-parseable */
	rf_duration_format(ms, buf, sizeof(buf));
	if (rf_duration_parse(buf, &back) != 0 || back != ms)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rf_config c, copy;
	char err[512];
	char *s;
	json_t *j;

	if (size > 1 << 20)
		return 0;
	rf_config_init(&c);
	if (rf_config_parse_yaml((const char *)data, size, &c, err, sizeof(err)) == 0) {
		j = rf_config_to_json(&c);
		json_decref(j);
		if (rf_config_copy(&c, &copy) == 0)
			rf_config_release(&copy);
	} else if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0') {
		abort(); /* every failure explains itself */
	}
	rf_config_release(&c);

	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_quantity((const char *)data, size);
	check_duration(s);
	free(s);
	return 0;
}
