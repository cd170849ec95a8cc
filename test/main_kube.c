/* Unit tests of the live-cluster client: kubeconfig, watch stream, reflector arithmetic, store. */
#include "test/check_main.h"

Suite *kube_suite(void);
Suite *slim_suite(void);

RF_CHECK_MAIN(kube_suite(), slim_suite())
