/* klog-style logging: numbers and booleans bare as klog writes Go values, strings quoted, the same
 * values typed in JSON lines, and the format kept when the verbosity changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "server/http/log.h"

/* What one log call writes to stderr. */
static char *
capture(void (*fn)(void))
{
	FILE *tmp = tmpfile();
	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(tmp), STDERR_FILENO), 0);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	static char buf[4096];
	rewind(tmp);
	size_t n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = 0;
	fclose(tmp);
	return buf;
}

static void
log_line(void)
{
	rf_info("cluster loaded", "source", "demo", "nodes", "16", "ratio", "-0.5", "ready", "true",
		"version", "007", "ip", "1.2.3.4", "err", "cannot open 'x'");
}

START_TEST(test_log_klog_values)
{
	rf_log_setup(RF_LOG_TEXT, 0);
	const char *l = capture(log_line);
	ck_assert_msg(strstr(l, "] \"cluster loaded\" source=\"demo\" nodes=16 ratio=\"-0.5\" "
				"ready=true version=\"007\" ip=\"1.2.3.4\" "
				"err=\"cannot open 'x'\"\n"),
		      "%s", l);
	ck_assert_int_eq(l[0], 'I');
}
END_TEST

START_TEST(test_log_json_values)
{
	rf_log_setup(RF_LOG_JSON, 0);
	const char *l = capture(log_line);
	ck_assert_msg(strstr(l, "\"msg\":\"cluster loaded\",\"source\":\"demo\",\"nodes\":16,"
				"\"ratio\":\"-0.5\",\"ready\":true,\"version\":\"007\","
				"\"ip\":\"1.2.3.4\",\"err\":\"cannot open 'x'\"}\n"),
		      "%s", l);
	rf_log_setup(RF_LOG_TEXT, 0);
}
END_TEST

START_TEST(test_log_bare_values)
{
	static const char *const bare[] = { "0", "16", "-3", "2055", "true", "false" };
	static const char *const quoted[] = { "",     "-",    "007",  "1.",  ".5",   "1e",
					      "0x10", "1 ",   "16G",  "NaN", "True", "1.2.3",
					      "+1",   "1.34", "0.25", "1e9", "-0",   NULL };
	for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++)
		ck_assert_msg(rf_log_value_is_bare(bare[i]), "%s", bare[i]);
	for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++)
		ck_assert_msg(!rf_log_value_is_bare(quoted[i]), "%s",
			      quoted[i] ? quoted[i] : "NULL");
}
END_TEST

START_TEST(test_log_format_survives_verbosity)
{
	rf_log_setup(RF_LOG_JSON, 0);
	rf_log_setup(rf_log_format(), 4);
	ck_assert_int_eq(rf_log_format(), RF_LOG_JSON);
	ck_assert_int_eq(rf_log_verbosity(), 4);
	rf_log_setup(RF_LOG_TEXT, 0);
}
END_TEST

Suite *log_suite(void);

Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");
	tcase_add_test(tc, test_log_klog_values);
	tcase_add_test(tc, test_log_json_values);
	tcase_add_test(tc, test_log_bare_values);
	tcase_add_test(tc, test_log_format_survives_verbosity);
	suite_add_tcase(s, tc);
	return s;
}
