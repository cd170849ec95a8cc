/* Unit tests of the CEL evaluator (alloc/cel.h, alloc/attr.h). */
#include <check.h>

#include "test/unit/check_main.h"

Suite *cel_suite(void);

RF_CHECK_MAIN(cel_suite())
