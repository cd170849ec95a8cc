#include "test/check_main.h"

Suite *locality_suite(void);
Suite *model_suite(void);
Suite *predict_suite(void);
Suite *evaluate_suite(void);
Suite *golden_suite(void);
Suite *memo_suite(void);

RF_CHECK_MAIN(locality_suite(), model_suite(), predict_suite(), evaluate_suite(), golden_suite(),
	      memo_suite())
