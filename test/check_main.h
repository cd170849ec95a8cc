/* A main() for one Check test executable: runs the listed suites (CK_RUN_SUITE / CK_RUN_CASE
 * narrow them, as usual) and exits non-zero when a test failed. */
#ifndef RF_TEST_CHECK_MAIN_H
#define RF_TEST_CHECK_MAIN_H

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
		srunner_free(sr);                                                                  \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                  \
	}

#endif
