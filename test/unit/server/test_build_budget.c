/* server/kube/build_budget.h: the publisher's token bucket of build seconds. */
#include <math.h>

#include <check.h>

#include "server/kube/build_budget.h"

#define EPS 1e-9

START_TEST(test_build_budget_long_build_then_cheap_ones)
{
	struct rf_build_budget b;
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 100.0);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 100.0) - 100.0) < EPS);
	/* a layout built in full (0.4 s): the next build may start at once (spacing by twice
	 * the last build's duration made it wait 0.8 s) */
	rf_build_budget_spend(&b, 0.4, 100.4);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 100.4) - 100.4) < EPS);
	/* cheap builds after it never wait on the budget */
	double now = 100.4;
	for (int i = 0; i < 100; i++) {
		now += 0.05;
		ck_assert(fabs(rf_build_budget_ready_at(&b, now) - now) < EPS);
		rf_build_budget_spend(&b, 0.01, now + 0.01);
		now += 0.01;
	}
}
END_TEST

START_TEST(test_build_budget_share_over_time)
{
	/* builds of 0.4 s back to back, each as soon as allowed: over a minute they take a third
	 * of the time, after the bucket's second of credit */
	struct rf_build_budget b;
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 0.0);
	double now = 0, busy = 0;
	while (now < 60.0) {
		now = rf_build_budget_ready_at(&b, now);
		now += 0.4;
		busy += 0.4;
		rf_build_budget_spend(&b, 0.4, now);
	}
	ck_assert_msg(busy <= 60.0 / 3 + 1.0 + 0.4 && busy >= 60.0 / 3 - 0.4, "busy %.2f s", busy);
	/* the wait after an owing build: what it owes at the share's rate */
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 0.0);
	rf_build_budget_spend(&b, 1.5, 1.5); /* 1 + 0.5 refill (capped at 1) - 1.5 = -0.5 */
	ck_assert(fabs(rf_build_budget_ready_at(&b, 1.5) - 3.0) < 1e-6);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 2.0) - 3.0) < 1e-6);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 3.5) - 3.5) < EPS);
}
END_TEST

START_TEST(test_build_budget_spare_time)
{
	/* a compaction's 0.7 s from a bucket holding 0.5: empty, not owing; the next build of an
	 * event starts at once */
	struct rf_build_budget b;
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 0.0);
	rf_build_budget_spend(&b, 0.5, 0.0);
	rf_build_budget_spend_spare(&b, 0.7, 0.0);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 0.0) - 0.0) < EPS);
	ck_assert(fabs(b.tokens) < EPS);
	/* with less it leaves the rest */
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 0.0);
	rf_build_budget_spend_spare(&b, 0.25, 0.0);
	ck_assert(fabs(b.tokens - 0.75) < EPS);
	/* a bucket already owing stays as it was (the debt is the events' builds') */
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 0.0);
	rf_build_budget_spend(&b, 1.5, 0.0);
	rf_build_budget_spend_spare(&b, 0.2, 0.0);
	ck_assert(fabs(b.tokens + 0.5) < EPS);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 0.0) - 1.5) < 1e-6);
}
END_TEST

START_TEST(test_build_budget_ready_for)
{
	/* a compaction of 0.3 s with 0.2 s kept for the events after it: from an empty bucket,
	 * 1.5 s at a third of a core; from a full one at once; never more than the burst */
	struct rf_build_budget b;
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 0.0);
	ck_assert(fabs(rf_build_budget_ready_for(&b, 0.5, 0.0) - 0.0) < EPS);
	rf_build_budget_spend(&b, 1.0, 0.0);
	ck_assert(fabs(rf_build_budget_ready_for(&b, 0.5, 0.0) - 1.5) < 1e-6);
	ck_assert(fabs(rf_build_budget_ready_for(&b, 0.5, 1.0) - 1.5) < 1e-6);
	ck_assert(fabs(rf_build_budget_ready_for(&b, 5.0, 0.0) - 3.0) < 1e-6);
	/* owing: the debt first */
	rf_build_budget_spend(&b, 0.5, 0.0);
	ck_assert(fabs(rf_build_budget_ready_for(&b, 0.5, 0.0) - 3.0) < 1e-6);
}
END_TEST

START_TEST(test_build_budget_debt_bounded)
{
	/* a start-up build of 10 s owes at most the bucket: the next waits 3 s, not 20 */
	struct rf_build_budget b;
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 0.0);
	rf_build_budget_spend(&b, 10.0, 10.0);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 10.0) - 13.0) < 1e-6);
	/* a clock that does not move, or a negative duration, changes nothing */
	rf_build_budget_init(&b, 1.0 / 3, 1.0, 5.0);
	rf_build_budget_spend(&b, -1.0, 4.0);
	ck_assert(fabs(rf_build_budget_ready_at(&b, 4.0) - 4.0) < EPS);
}
END_TEST

Suite *build_budget_suite(void);

Suite *
build_budget_suite(void)
{
	Suite *s = suite_create("build_budget");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_build_budget_long_build_then_cheap_ones);
	tcase_add_test(tc, test_build_budget_share_over_time);
	tcase_add_test(tc, test_build_budget_debt_bounded);
	tcase_add_test(tc, test_build_budget_spare_time);
	tcase_add_test(tc, test_build_budget_ready_for);
	suite_add_tcase(s, tc);
	return s;
}
