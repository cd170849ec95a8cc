#include "test/check_main.h"

Suite *topology_model_suite(void);

RF_CHECK_MAIN(topology_model_suite())
