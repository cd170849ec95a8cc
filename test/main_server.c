/* Unit tests of the server building blocks: extender codec, metrics, HTTP front end. */
#include "test/check_main.h"

Suite *extender_suite(void);
Suite *extender_fast_suite(void);
Suite *metrics_suite(void);
Suite *metric_table_suite(void);
Suite *escape_suite(void);
Suite *http_suite(void);
Suite *parallel_suite(void);

RF_CHECK_MAIN(extender_suite(), extender_fast_suite(), metrics_suite(), metric_table_suite(),
	      escape_suite(), http_suite(), parallel_suite())
