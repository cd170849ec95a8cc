/* Unit tests of topology/: hwloc import, the annotation codec, the PCI tree and locality levels. */
#include "test/unit/check_main.h"

Suite *topology_suite(void);
Suite *locality_suite(void);
Suite *nvlink_suite(void);

RF_CHECK_MAIN(topology_suite(), locality_suite(), nvlink_suite())
