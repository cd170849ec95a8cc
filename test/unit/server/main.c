/* Unit tests of server/: extender codec, metrics, escaping, HTTP front end and logging, the
 * fork-join pool, synthetic clusters, the Kubernetes client pieces and the reflector's decisions,
 * slim objects and snapshots. */
#include "test/unit/check_main.h"

Suite *extender_suite(void);
Suite *extender_fast_suite(void);
Suite *metrics_suite(void);
Suite *metric_table_suite(void);
Suite *escape_suite(void);
Suite *http_suite(void);
Suite *parallel_suite(void);
Suite *gen_cluster_suite(void);
Suite *gen_oom_suite(void);
Suite *kube_suite(void);
Suite *slim_suite(void);
Suite *snapshot_load_suite(void);
Suite *bind_suite(void);
Suite *routes_suite(void);
Suite *reflector_suite(void);
Suite *slice_table_suite(void);
Suite *list_stream_suite(void);
Suite *log_suite(void);
Suite *auth_suite(void);
Suite *predictions_suite(void);
Suite *bufpool_suite(void);
Suite *build_budget_suite(void);
Suite *kept_array_suite(void);

RF_CHECK_MAIN(extender_suite(), extender_fast_suite(), metrics_suite(), metric_table_suite(),
	      escape_suite(), http_suite(), parallel_suite(), gen_cluster_suite(), gen_oom_suite(),
	      kube_suite(), slim_suite(), snapshot_load_suite(), bind_suite(), routes_suite(),
	      reflector_suite(), slice_table_suite(), list_stream_suite(), log_suite(),
	      auth_suite(), predictions_suite(), bufpool_suite(), build_budget_suite(),
	      kept_array_suite())
