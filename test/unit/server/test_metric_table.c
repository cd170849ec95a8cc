/* railfit's metric table: every enum rf_metric is declared with its name, and its label set is
 * built from the table's label names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "server/http/metrics.h"

START_TEST(test_metric_table_declared)
{
	rf_metrics_reset();
	rf_metrics_declare_railfit("1", "c");
	char *s = rf_metrics_render(NULL);
	ck_assert_ptr_nonnull(s);
	for (int m = 0; m < RF_METRIC__COUNT; m++) {
		const char *name = rf_metric_name(m);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(strncmp(name, "railfit_", 8), 0);
		char want[128];
		snprintf(want, sizeof(want), "# HELP %s ", name);
		char *h = strstr(s, want);
		ck_assert_msg(h != NULL, "%s not declared", name);
		ck_assert_ptr_null(strstr(h + 1, want));
	}
	ck_assert_ptr_null(rf_metric_name(RF_METRIC__COUNT));
	free(s);

	/* The unlabelled counters start at zero. */
	rf_metric_add(RF_METRIC_UNJUDGED_NODES_TOTAL, "", 3);
	s = rf_metrics_render(NULL);
	ck_assert_ptr_nonnull(strstr(s, "\nrailfit_unjudged_nodes_total 3\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nrailfit_selector_errors_total 0\n"));
	free(s);
	rf_metrics_reset();
}
END_TEST

START_TEST(test_metric_table_labels)
{
	char buf[64];
	ck_assert_int_eq(
		rf_metric_labels(buf, sizeof(buf), RF_METRIC_REQUESTS_TOTAL, "filter", "200", NULL),
		(int)strlen("verb=\"filter\",code=\"200\""));
	ck_assert_str_eq(buf, "verb=\"filter\",code=\"200\"");
	ck_assert_int_eq(rf_metric_labels(buf, sizeof(buf), RF_METRIC_CACHE_OBJECTS, "a\"b", NULL),
			 (int)strlen("resource=\"a\\\"b\""));
	ck_assert_str_eq(buf, "resource=\"a\\\"b\"");
	ck_assert_int_eq(rf_metric_labels(buf, sizeof(buf), RF_METRIC_UNJUDGED_NODES_TOTAL, NULL),
			 0);
	ck_assert_str_eq(buf, "");
	/* Too few or too many values for the table's label names. */
	ck_assert_int_eq(rf_metric_labels(buf, sizeof(buf), RF_METRIC_REQUESTS_TOTAL, "x", NULL),
			 -EINVAL);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(
		rf_metric_labels(buf, sizeof(buf), RF_METRIC_BIND_TOTAL, "ok", "extra", NULL),
		-EINVAL);
	ck_assert_int_eq(
		rf_metric_labels(buf, sizeof(buf), RF_METRIC_SELECTOR_ERRORS_TOTAL, "x", NULL),
		-EINVAL);
	char small[8];
	ck_assert_int_eq(rf_metric_labels(small, sizeof(small), RF_METRIC_BIND_TOTAL, "ok", NULL),
			 -ENOSPC);
	ck_assert_str_eq(small, "");
}
END_TEST

Suite *metric_table_suite(void);

Suite *
metric_table_suite(void)
{
	Suite *s = suite_create("metric-table");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_metric_table_declared);
	tcase_add_test(tc, test_metric_table_labels);
	suite_add_tcase(s, tc);
	return s;
}
