/* Unit tests of alloc/: the cluster model, the allocator mirror, the per-node pipeline, golden
 * explain documents, the verdict memo, locality from topology annotations, railfit simulate and
 * usage built by difference. */
#include "test/unit/check_main.h"

Suite *model_suite(void);
Suite *predict_suite(void);
Suite *evaluate_suite(void);
Suite *golden_suite(void);
Suite *memo_suite(void);
Suite *topology_model_suite(void);
Suite *predict136_suite(void);
Suite *upstream_suite(void);
Suite *gpu_locality_suite(void);
Suite *simulate_suite(void);
Suite *model_delta_suite(void);
Suite *patch_suite(void);
Suite *pool_view_suite(void);

RF_CHECK_MAIN(model_suite(), predict_suite(), evaluate_suite(), golden_suite(), memo_suite(),
	      topology_model_suite(), predict136_suite(), upstream_suite(), gpu_locality_suite(),
	      simulate_suite(), model_delta_suite(), patch_suite(), pool_view_suite())
