#include "test/check_main.h"

Suite *topology_suite(void);

RF_CHECK_MAIN(topology_suite())
