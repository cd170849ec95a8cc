/* Unit tests of config/: quantities, durations, levels and the configuration file. */
#include <check.h>

#include "test/unit/check_main.h"

Suite *quantity_suite(void);
Suite *duration_suite(void);
Suite *config_suite(void);
Suite *utf8_suite(void);
Suite *strbuf_suite(void);
Suite *grow_suite(void);

RF_CHECK_MAIN(quantity_suite(), duration_suite(), config_suite(), utf8_suite(), strbuf_suite(),
	      grow_suite())
