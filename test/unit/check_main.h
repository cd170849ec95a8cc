/* A main() for one Check test executable (one per folder of test/unit/): runs the listed suites
 * (CK_RUN_SUITE / CK_RUN_CASE narrow them, as usual; meson runs each suite as its own test) and
 * exits non-zero when a test failed, or when CK_RUN_SUITE named no suite (a typo would otherwise
 * pass with zero tests). */
#ifndef RF_TEST_UNIT_CHECK_MAIN_H
#define RF_TEST_UNIT_CHECK_MAIN_H

#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#define RF_CHECK_MAIN(...)                                                                         \
	int main(void)                                                                             \
	{                                                                                          \
		Suite *suites[] = { __VA_ARGS__ };                                                 \
		SRunner *sr = srunner_create(suites[0]);                                           \
		for (size_t i = 1; i < sizeof(suites) / sizeof(suites[0]); i++)                    \
			srunner_add_suite(sr, suites[i]);                                          \
		srunner_run_all(sr, CK_ENV);                                                       \
		int failed = srunner_ntests_failed(sr);                                            \
		int ran = srunner_ntests_run(sr);                                                  \
		srunner_free(sr);                                                                  \
		if (ran == 0 && getenv("CK_RUN_SUITE")) {                                          \
			fprintf(stderr, "no suite named '%s'\n", getenv("CK_RUN_SUITE"));          \
			return EXIT_FAILURE;                                                       \
		}                                                                                  \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                  \
	}

#endif
