/* The fork-join pool (server/parallel.h): every item is run exactly once, by the caller and the
 * workers, also when several requests share the pool at once. The chunk callback and the item
 * check count mistakes and assert once: each ck_assert that passes still writes a location record
 * to Check's log (a write(2) under a lock), which made this suite take minutes under valgrind. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <check.h>

#include "server/http/parallel.h"

Suite *parallel_suite(void);

#define ITEMS 20000

struct count_job {
	atomic_int hits[ITEMS];
	atomic_uint workers_seen; /* bit per worker id */
	atomic_uint bad_worker;   /* a chunk ran with a worker id outside the pool's width */
	unsigned width;
};

static void
count_chunk(void *ctx, unsigned worker, size_t begin, size_t end)
{
	struct count_job *j = ctx;
	if (worker >= j->width) {
		atomic_fetch_add(&j->bad_worker, 1);
		return;
	}
	atomic_fetch_or(&j->workers_seen, 1u << worker);
	for (size_t i = begin; i < end; i++)
		atomic_fetch_add(&j->hits[i], 1);
}

static void
run_and_check(struct rf_parallel *p, size_t chunk)
{
	struct count_job *j = calloc(1, sizeof(*j));
	ck_assert_ptr_nonnull(j);
	j->width = rf_parallel_width(p);
	rf_parallel_for(p, ITEMS, chunk, count_chunk, j);
	ck_assert_uint_eq(atomic_load(&j->bad_worker), 0);
	size_t first_wrong = ITEMS;
	for (size_t i = 0; i < ITEMS && first_wrong == ITEMS; i++)
		if (atomic_load(&j->hits[i]) != 1)
			first_wrong = i;
	ck_assert_msg(first_wrong == ITEMS, "item %zu ran %d times, expected once", first_wrong,
		      first_wrong < ITEMS ? atomic_load(&j->hits[first_wrong]) : 1);
	ck_assert_uint_ne(atomic_load(&j->workers_seen), 0);
	free(j);
}

START_TEST(test_parallel_each_item_once)
{
	struct rf_parallel *p = rf_parallel_new(3);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(rf_parallel_width(p), 4);
	run_and_check(p, 1);
	run_and_check(p, 64);
	run_and_check(p, ITEMS * 2); /* one chunk: the caller alone */
	rf_parallel_free(p);
	/* no pool: the caller does everything */
	ck_assert_uint_eq(rf_parallel_width(NULL), 1);
	run_and_check(NULL, 64);
	p = rf_parallel_new(0);
	ck_assert_ptr_nonnull(p);
	run_and_check(p, 64);
	rf_parallel_free(p);
}
END_TEST

static void *
requester(void *arg)
{
	for (int k = 0; k < 20; k++)
		run_and_check(arg, 16);
	return NULL;
}

START_TEST(test_parallel_concurrent_jobs)
{
	struct rf_parallel *p = rf_parallel_new(2);
	pthread_t t[4];
	ck_assert_ptr_nonnull(p);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, requester, p), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	rf_parallel_free(p);
}
END_TEST

Suite *
parallel_suite(void)
{
	Suite *s = suite_create("parallel");
	TCase *tc = tcase_create("parallel");
	tcase_add_test(tc, test_parallel_each_item_once);
	tcase_add_test(tc, test_parallel_concurrent_jobs);
	suite_add_tcase(s, tc);
	return s;
}
