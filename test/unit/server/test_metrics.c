/* Metrics registry and text exposition: exact rendering, label escaping, histograms, the railfit
 * and process_* families, concurrency, and `promtool check metrics` when promtool exists. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "server/http/metrics.h"

static void
reset(void)
{
	rf_metrics_reset();
}

/* The registry's part of the output: everything before the first process_* line. */
static char *
render_own(void)
{
	size_t len = 0;
	char *s = rf_metrics_render(&len);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), len);
	char *p = strstr(s, "# HELP process_");
	if (p)
		*p = '\0';
	return s;
}

/* Value of the sample line that starts with `series ` (name plus labels), or -1. */
static double
sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	}
	return -1;
}

START_TEST(test_metrics_render_exact)
{
	reset();
	rf_metrics_declare("t_requests_total", RF_METRIC_COUNTER, "Requests.\nSecond \\ line.",
			   NULL, 0);
	rf_metrics_declare("t_temp", RF_METRIC_GAUGE, "A gauge.", NULL, 0);
	static const double b[] = { 1, 0.0005, 0.25 }; /* unsorted on purpose */
	rf_metrics_declare("t_seconds", RF_METRIC_HISTOGRAM, "A histogram.", b, 3);
	rf_metrics_declare("t_empty", RF_METRIC_COUNTER, "Never used.", NULL, 0);
	/* Declaring again changes nothing. */
	rf_metrics_declare("t_temp", RF_METRIC_COUNTER, "Other help.", NULL, 0);

	rf_metrics_add("t_requests_total", "verb=\"filter\",code=\"200\"", 1);
	rf_metrics_add("t_requests_total", "verb=\"filter\",code=\"200\"", 2);
	rf_metrics_add("t_requests_total", "", 1);
	rf_metrics_set("t_temp", "", 21.5);
	rf_metrics_set("t_temp", "", -3);
	rf_metrics_observe("t_seconds", "verb=\"x\"", 0.0001);
	rf_metrics_observe("t_seconds", "verb=\"x\"", 0.0005); /* le is inclusive */
	rf_metrics_observe("t_seconds", "verb=\"x\"", 0.5);
	rf_metrics_observe("t_seconds", "verb=\"x\"", 7);
	/* Ignored: unknown names, and operations that do not fit the type. */
	rf_metrics_add("t_unknown", "", 1);
	rf_metrics_observe("t_temp", "", 1);
	rf_metrics_add("t_seconds", "verb=\"x\"", 1);
	rf_metrics_set("t_seconds", "verb=\"y\"", 1);
	rf_metrics_add(NULL, "", 1);

	char *s = render_own();
	const char *want = "# HELP t_requests_total Requests.\\nSecond \\\\ line.\n"
			   "# TYPE t_requests_total counter\n"
			   "t_requests_total{verb=\"filter\",code=\"200\"} 3\n"
			   "t_requests_total 1\n"
			   "# HELP t_temp A gauge.\n"
			   "# TYPE t_temp gauge\n"
			   "t_temp -3\n"
			   "# HELP t_seconds A histogram.\n"
			   "# TYPE t_seconds histogram\n"
			   "t_seconds_bucket{verb=\"x\",le=\"0.0005\"} 2\n"
			   "t_seconds_bucket{verb=\"x\",le=\"0.25\"} 2\n"
			   "t_seconds_bucket{verb=\"x\",le=\"1\"} 3\n"
			   "t_seconds_bucket{verb=\"x\",le=\"+Inf\"} 4\n"
			   "t_seconds_sum{verb=\"x\"} 7.5006\n"
			   "t_seconds_count{verb=\"x\"} 4\n"
			   "# HELP t_empty Never used.\n"
			   "# TYPE t_empty counter\n";
	ck_assert_msg(strcmp(s, want) == 0, "got:\n%s\nwant:\n%s", s, want);
	free(s);
	reset();
}
END_TEST

START_TEST(test_metrics_histogram_unlabelled)
{
	reset();
	static const double b[] = { 0.1 };
	rf_metrics_declare("h", RF_METRIC_HISTOGRAM, "H.", b, 1);
	rf_metrics_declare("h2", RF_METRIC_HISTOGRAM, "No buckets.", NULL, 0);
	rf_metrics_observe("h", "", 0.05);
	rf_metrics_observe("h2", NULL, 3);
	char *s = render_own();
	ck_assert_ptr_nonnull(strstr(s, "h_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 1\n"
					"h_sum 0.05\nh_count 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "h2_bucket{le=\"+Inf\"} 1\nh2_sum 3\nh2_count 1\n"));
	free(s);
	reset();
}
END_TEST

START_TEST(test_metrics_format_labels)
{
	char buf[128];
	ck_assert_int_eq(
		rf_metrics_format_labels(buf, sizeof(buf), "verb", "filter", "code", "200", NULL),
		(int)strlen("verb=\"filter\",code=\"200\""));
	ck_assert_str_eq(buf, "verb=\"filter\",code=\"200\"");
	rf_metrics_format_labels(buf, sizeof(buf), "v", "a\"b\\c\nd", NULL);
	ck_assert_str_eq(buf, "v=\"a\\\"b\\\\c\\nd\"");
	rf_metrics_format_labels(buf, sizeof(buf), "v", NULL, NULL);
	ck_assert_str_eq(buf, "v=\"\"");
	ck_assert_int_eq(rf_metrics_format_labels(buf, sizeof(buf), NULL), 0);
	ck_assert_str_eq(buf, "");
	char small[8];
	ck_assert_int_eq(rf_metrics_format_labels(small, sizeof(small), "verb", "filter", NULL),
			 -1);
	ck_assert_str_eq(small, "");
	/* Exactly fitting (7 chars + NUL). */
	ck_assert_int_eq(rf_metrics_format_labels(small, sizeof(small), "a", "bcd", NULL), 7);
	ck_assert_str_eq(small, "a=\"bcd\"");
}
END_TEST

START_TEST(test_metrics_railfit_families)
{
	reset();
	rf_metrics_declare_railfit("1.2.3", "abc\"def");
	rf_metrics_declare_railfit("1.2.3", "abc\"def"); /* idempotent */
	size_t len;
	char *s = rf_metrics_render(&len);
	static const char *const families[][2] = {
		{ "railfit_requests_total", "counter" },
		{ "railfit_request_duration_seconds", "histogram" },
		{ "railfit_filter_nodes_total", "counter" },
		{ "railfit_pods_total", "counter" },
		{ "railfit_watch_events_total", "counter" },
		{ "railfit_watch_restarts_total", "counter" },
		{ "railfit_cache_objects", "gauge" },
		{ "railfit_cache_synced", "gauge" },
		{ "railfit_cache_staleness_seconds", "gauge" },
		{ "railfit_prediction_total", "counter" },
		{ "railfit_bind_total", "counter" },
		{ "railfit_build_info", "gauge" },
		{ "railfit_placement_gpu_level_total", "counter" },
		{ "process_cpu_seconds_total", "counter" },
		{ "process_resident_memory_bytes", "gauge" },
		{ "process_virtual_memory_bytes", "gauge" },
		{ "process_open_fds", "gauge" },
		{ "process_max_fds", "gauge" },
		{ "process_start_time_seconds", "gauge" },
	};
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		char want[256];
		snprintf(want, sizeof(want), "# TYPE %s %s\n", families[i][0], families[i][1]);
		ck_assert_msg(strstr(s, want) != NULL, "missing %s", want);
		snprintf(want, sizeof(want), "# HELP %s ", families[i][0]);
		char *h = strstr(s, want);
		ck_assert_msg(h != NULL, "missing HELP of %s", families[i][0]);
		ck_assert_msg(h[strlen(want)] != '\n', "empty HELP for %s", families[i][0]);
		/* Declared exactly once. */
		ck_assert_ptr_null(strstr(h + 1, want));
	}
	ck_assert_double_eq(
		sample(s, "railfit_build_info{version=\"1.2.3\",commit=\"abc\\\"def\"}"), 1);
	ck_assert_double_eq(sample(s, "railfit_filter_nodes_total{result=\"unresolvable\"}"), 0);
	ck_assert_double_eq(sample(s, "railfit_pods_total{demand=\"unknown\"}"), 0);
	ck_assert_double_eq(sample(s, "railfit_prediction_total{outcome=\"same_level\"}"), 0);
	ck_assert_double_eq(sample(s, "railfit_placement_gpu_level_total{level=\"NVL\"}"), 0);
	ck_assert_double_eq(sample(s, "railfit_placement_gpu_level_total{level=\"UNKNOWN\"}"), 0);
	ck_assert(sample(s, "process_open_fds") >= 3);
	ck_assert(sample(s, "process_max_fds") >= sample(s, "process_open_fds"));
	ck_assert(sample(s, "process_resident_memory_bytes") > 0);
	ck_assert(sample(s, "process_virtual_memory_bytes") >=
		  sample(s, "process_resident_memory_bytes"));
	ck_assert(sample(s, "process_cpu_seconds_total") >= 0);
	double start = sample(s, "process_start_time_seconds");
	ck_assert(start > 1.5e9);
	ck_assert(start <= (double)time(NULL) + 1);

	/* Request durations use buckets from 0.5 ms to 5 s. */
	rf_metrics_observe("railfit_request_duration_seconds", "verb=\"filter\"", 0.002);
	free(s);
	s = rf_metrics_render(NULL);
	ck_assert_ptr_nonnull(strstr(
		s, "railfit_request_duration_seconds_bucket{verb=\"filter\",le=\"0.0005\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(
		s, "railfit_request_duration_seconds_bucket{verb=\"filter\",le=\"0.0025\"} 1\n"));
	ck_assert_ptr_nonnull(
		strstr(s, "railfit_request_duration_seconds_bucket{verb=\"filter\",le=\"5\"} 1\n"));
	free(s);
	reset();
}
END_TEST

#define N_THREADS 8
#define N_ITER    2000

static void *
hammer(void *arg)
{
	const char *labels = arg;
	for (int i = 0; i < N_ITER; i++) {
		rf_metrics_add("c_total", labels, 1);
		rf_metrics_observe("d_seconds", labels, 0.001 * (i % 10));
		if (i % 500 == 0)
			free(rf_metrics_render(NULL));
	}
	return NULL;
}

START_TEST(test_metrics_threads)
{
	reset();
	rf_metrics_declare("c_total", RF_METRIC_COUNTER, "C.", NULL, 0);
	static const double b[] = { 0.005 };
	rf_metrics_declare("d_seconds", RF_METRIC_HISTOGRAM, "D.", b, 1);
	pthread_t t[N_THREADS];
	static const char *const labels[] = { "k=\"a\"", "k=\"b\"" };
	for (int i = 0; i < N_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer, (void *)labels[i % 2]), 0);
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(t[i], NULL);
	char *s = render_own();
	ck_assert_double_eq(sample(s, "c_total{k=\"a\"}"), N_THREADS / 2 * N_ITER);
	ck_assert_double_eq(sample(s, "c_total{k=\"b\"}"), N_THREADS / 2 * N_ITER);
	ck_assert_double_eq(sample(s, "d_seconds_count{k=\"a\"}"), N_THREADS / 2 * N_ITER);
	/* 0.001 * (i % 10) <= 0.005 for six values of ten. */
	ck_assert_double_eq(sample(s, "d_seconds_bucket{k=\"b\",le=\"0.005\"}"),
			    N_THREADS / 2 * N_ITER * 6 / 10);
	free(s);
	reset();
}
END_TEST

START_TEST(test_metrics_special_values)
{
	reset();
	rf_metrics_declare("g", RF_METRIC_GAUGE, "G.", NULL, 0);
	rf_metrics_set("g", "k=\"inf\"", 1.0 / 0.0);
	rf_metrics_set("g", "k=\"ninf\"", -1.0 / 0.0);
	rf_metrics_set("g", "k=\"nan\"", 0.0 / 0.0);
	rf_metrics_set("g", "k=\"big\"", 1e300);
	rf_metrics_set("g", "k=\"frac\"", 0.1);
	char *s = render_own();
	ck_assert_ptr_nonnull(strstr(s, "g{k=\"inf\"} +Inf\n"));
	ck_assert_ptr_nonnull(strstr(s, "g{k=\"ninf\"} -Inf\n"));
	ck_assert_ptr_nonnull(strstr(s, "g{k=\"nan\"} NaN\n"));
	ck_assert_ptr_nonnull(strstr(s, "g{k=\"big\"} 1e+300\n"));
	ck_assert_ptr_nonnull(strstr(s, "g{k=\"frac\"} 0.1\n"));
	free(s);
	/* After a reset nothing of ours is left, and the registry works again. */
	reset();
	s = render_own();
	ck_assert_str_eq(s, "");
	free(s);
	rf_metrics_declare("g", RF_METRIC_GAUGE, "G.", NULL, 0);
	rf_metrics_set("g", "", 2);
	s = render_own();
	ck_assert_str_eq(s, "# HELP g G.\n# TYPE g gauge\ng 2\n");
	free(s);
	reset();
}
END_TEST

static bool
have_promtool(void)
{
	return system("command -v promtool >/dev/null 2>&1") == 0;
}

START_TEST(test_metrics_promtool)
{
	if (!have_promtool()) {
		fprintf(stderr, "promtool not found; skipping\n");
		return;
	}
	reset();
	rf_metrics_declare_railfit("0.1.0", "deadbeef");
	char labels[256];
	rf_metrics_format_labels(labels, sizeof(labels), "verb", "filter", "code", "200", NULL);
	rf_metrics_add("railfit_requests_total", labels, 5);
	rf_metrics_format_labels(labels, sizeof(labels), "verb", "filter", NULL);
	rf_metrics_observe("railfit_request_duration_seconds", labels, 0.003);
	rf_metrics_format_labels(labels, sizeof(labels), "resource", "nodes", "type", "ADDED",
				 NULL);
	rf_metrics_add("railfit_watch_events_total", labels, 1);
	rf_metrics_format_labels(labels, sizeof(labels), "resource", "nodes\"odd\\name\n", NULL);
	rf_metrics_set("railfit_cache_objects", labels, 12);
	rf_metrics_set("railfit_cache_staleness_seconds", labels, 0.25);
	size_t len;
	char *s = rf_metrics_render(&len);
	char path[] = "/tmp/rf-metrics-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, s, len), (ssize_t)len);
	close(fd);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 1>&2", path);
	int st = system(cmd);
	unlink(path);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "promtool check metrics failed:\n%s",
		      s);
	free(s);
	reset();
}
END_TEST

Suite *metrics_suite(void);

Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("registry");
	tcase_add_test(tc, test_metrics_render_exact);
	tcase_add_test(tc, test_metrics_histogram_unlabelled);
	tcase_add_test(tc, test_metrics_format_labels);
	tcase_add_test(tc, test_metrics_railfit_families);
	tcase_add_test(tc, test_metrics_threads);
	tcase_add_test(tc, test_metrics_special_values);
	tcase_add_test(tc, test_metrics_promtool);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
