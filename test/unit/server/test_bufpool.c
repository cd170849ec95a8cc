/* server/http/bufpool.h: large buffers come back, small and huge ones do not, the pool stays
 * within its count and byte bounds. */
#include <malloc.h>
#include <string.h>

#include <check.h>

#include "server/http/bufpool.h"

#if defined(__SANITIZE_ADDRESS__)
#define RF_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RF_TEST_ASAN 1
#endif
#endif
#ifdef RF_TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

START_TEST(test_bufpool_reuse)
{
	rf_bufpool_drain();
	size_t cap;
	char *a = rf_bufpool_get(RF_BUFPOOL_MIN, &cap);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(cap, RF_BUFPOOL_MIN); /* a new one: what was asked for */
	memset(a, 'x', cap);
	rf_bufpool_put(a);
	size_t bytes;
	ck_assert_uint_eq(rf_bufpool_kept(&bytes), 1);
	cap = malloc_usable_size(a); /* a kept one: all it has */
	ck_assert_uint_eq(bytes, cap);
#ifdef RF_TEST_ASAN
	/* given back: a use is reported as a use after free */
	ck_assert(__asan_address_is_poisoned(a));
	ck_assert(__asan_address_is_poisoned(a + cap - 1));
#endif
	/* the kept buffer comes back for a request it fits, not for a larger one */
	size_t cap2;
	char *b = rf_bufpool_get(RF_BUFPOOL_MIN + cap, &cap2);
	ck_assert_ptr_ne(b, a);
	ck_assert_uint_eq(rf_bufpool_kept(NULL), 1);
	char *c = rf_bufpool_get(RF_BUFPOOL_MIN / 2 + RF_BUFPOOL_MIN / 4, &cap2);
	ck_assert_ptr_nonnull(c);
	/* below RF_BUFPOOL_MIN a request is malloc's: the kept one stays */
	ck_assert_uint_eq(rf_bufpool_kept(NULL), 1);
	rf_bufpool_put(c);
	c = rf_bufpool_get(RF_BUFPOOL_MIN, &cap2);
	ck_assert_ptr_eq(c, a);
#ifdef RF_TEST_ASAN
	ck_assert(!__asan_address_is_poisoned(c + cap2 - 1));
#endif
	ck_assert_uint_eq(cap2, cap);
	ck_assert_uint_eq(rf_bufpool_kept(NULL), 0);
	rf_bufpool_put(b);
	rf_bufpool_put(c);
	rf_bufpool_put(NULL);
	ck_assert_uint_eq(rf_bufpool_kept(NULL), 2);
	rf_bufpool_drain();
	ck_assert_uint_eq(rf_bufpool_kept(&bytes), 0);
	ck_assert_uint_eq(bytes, 0);
}
END_TEST

START_TEST(test_bufpool_smallest_fit)
{
	rf_bufpool_drain();
	size_t sizes[] = { 4 * RF_BUFPOOL_MIN, RF_BUFPOOL_MIN, 2 * RF_BUFPOOL_MIN };
	char *bufs[3];
	for (size_t i = 0; i < 3; i++) {
		size_t cap;
		bufs[i] = rf_bufpool_get(sizes[i], &cap);
		ck_assert_ptr_nonnull(bufs[i]);
	}
	for (size_t i = 0; i < 3; i++)
		rf_bufpool_put(bufs[i]);
	size_t cap;
	ck_assert_ptr_eq(rf_bufpool_get(RF_BUFPOOL_MIN + 8192, &cap), bufs[2]);
	ck_assert_ptr_eq(rf_bufpool_get(RF_BUFPOOL_MIN, &cap), bufs[1]);
	ck_assert_ptr_eq(rf_bufpool_get(RF_BUFPOOL_MIN, &cap), bufs[0]);
	for (size_t i = 0; i < 3; i++)
		free(bufs[i]);
}
END_TEST

START_TEST(test_bufpool_bounds)
{
	rf_bufpool_drain();
	/* small and huge buffers are freed, not kept */
	rf_bufpool_put(malloc(1000));
	rf_bufpool_put(malloc(RF_BUFPOOL_MAX + 4096));
	ck_assert_uint_eq(rf_bufpool_kept(NULL), 0);
	/* at most RF_BUFPOOL_KEEP buffers */
	for (size_t i = 0; i < RF_BUFPOOL_KEEP + 3; i++)
		rf_bufpool_put(malloc(RF_BUFPOOL_MIN));
	size_t bytes;
	ck_assert_uint_eq(rf_bufpool_kept(&bytes), RF_BUFPOOL_KEEP);
	ck_assert_uint_le(bytes, RF_BUFPOOL_BYTES);
	rf_bufpool_drain();
	/* at most RF_BUFPOOL_BYTES */
	for (size_t i = 0; i < RF_BUFPOOL_KEEP; i++)
		rf_bufpool_put(malloc(RF_BUFPOOL_MAX - 8192));
	ck_assert_uint_lt(rf_bufpool_kept(&bytes), RF_BUFPOOL_KEEP);
	ck_assert_uint_le(bytes, RF_BUFPOOL_BYTES);
	ck_assert_uint_gt(bytes, RF_BUFPOOL_BYTES - RF_BUFPOOL_MAX);
	rf_bufpool_drain();
}
END_TEST

Suite *bufpool_suite(void);

Suite *
bufpool_suite(void)
{
	Suite *s = suite_create("bufpool");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_bufpool_reuse);
	tcase_add_test(tc, test_bufpool_smallest_fit);
	tcase_add_test(tc, test_bufpool_bounds);
	suite_add_tcase(s, tc);
	return s;
}
