/* Unit tests of server/gen_*.c: synthetic clusters and the built-in demo. */
#include "test/check_main.h"

Suite *gen_cluster_suite(void);

RF_CHECK_MAIN(gen_cluster_suite())
