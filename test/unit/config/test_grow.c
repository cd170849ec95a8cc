/* The shared helpers of config/: array growth (rf_grow), the bump arena (rf_arena) and the
 * in-memory hash (rf_hash_bytes). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "config/arena.h"
#include "config/grow.h"
#include "config/hash.h"

Suite *grow_suite(void);

START_TEST(test_grow_doubles_and_keeps_contents)
{
	int *a = NULL;
	size_t cap = 0;
	ck_assert_int_eq(rf_grow(&a, &cap, 1, sizeof(*a)), 0);
	ck_assert_uint_eq(cap, 16);
	for (int i = 0; i < 16; i++)
		a[i] = i;
	int *before = a;
	ck_assert_int_eq(rf_grow(&a, &cap, 16, sizeof(*a)), 0); /* fits: nothing happens */
	ck_assert_ptr_eq(a, before);
	ck_assert_int_eq(rf_grow(&a, &cap, 17, sizeof(*a)), 0);
	ck_assert_uint_eq(cap, 32);
	ck_assert_int_eq(rf_grow(&a, &cap, 1000, sizeof(*a)), 0);
	ck_assert_uint_eq(cap, 1024);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(a[i], i);
	free(a);
}
END_TEST

START_TEST(test_grow_overflow_leaves_the_array)
{
	char *a = NULL;
	size_t cap = 0;
	ck_assert_int_eq(rf_grow(&a, &cap, 10, 1), 0);
	char *before = a;
	ck_assert_int_eq(rf_grow(&a, &cap, SIZE_MAX, 1), -ENOMEM);
	ck_assert_int_eq(rf_grow(&a, &cap, SIZE_MAX / 8, 16), -ENOMEM);
	ck_assert_ptr_eq(a, before);
	ck_assert_uint_eq(cap, 16);
	free(a);
}
END_TEST

START_TEST(test_arena_zeroed_aligned_and_limited)
{
	struct rf_arena *a = rf_arena_new();
	ck_assert_ptr_nonnull(a);
	for (int i = 0; i < 1000; i++) {
		unsigned char *p = rf_arena_alloc(a, (size_t)i % 100 + 1);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		for (int k = 0; k < i % 100 + 1; k++)
			ck_assert_uint_eq(p[k], 0);
		memset(p, 0xff, (size_t)i % 100 + 1);
	}
	ck_assert_ptr_nonnull(rf_arena_alloc(a, 3u << 20)); /* bigger than any chunk */
	ck_assert_str_eq(rf_arena_printf(a, "%s-%d", "x", 7), "x-7");
	ck_assert_str_eq(rf_arena_strndup(a, "abcdef", 3), "abc");
	ck_assert_ptr_null(rf_arena_calloc(a, SIZE_MAX / 2, 4));
	rf_arena_free(a);

	/* on the caller's buffer, with a limit */
	char buf[1024];
	struct rf_arena l;
	rf_arena_init_buf(&l, 64 * 1024, buf, sizeof(buf));
	void *first = rf_arena_alloc_raw(&l, 100);
	ck_assert(first >= (void *)buf && first < (void *)(buf + sizeof(buf)));
	ck_assert_ptr_null(rf_arena_alloc_raw(&l, 128 * 1024));
	ck_assert(l.over_limit);
	rf_arena_release(&l);
}
END_TEST

START_TEST(test_arena_sized_holds_a_known_sequence_exactly)
{
	/* the sequence a first arena measured fits a sized one in its single chunk */
	struct rf_arena *a = rf_arena_new();
	for (int i = 0; i < 500; i++)
		ck_assert_ptr_nonnull(rf_arena_alloc(a, (size_t)i % 70 + 1));
	size_t used = rf_arena_used(a);
	ck_assert_uint_eq(used % 16, 0);
	ck_assert_uint_ge(used, 500 * 16);
	struct rf_arena *b = rf_arena_new_sized(used);
	size_t before = b->total;
	for (int i = 0; i < 500; i++)
		ck_assert_ptr_nonnull(rf_arena_alloc(b, (size_t)i % 70 + 1));
	ck_assert_uint_eq(rf_arena_used(b), used);
	ck_assert_uint_eq(b->total, before);         /* no second chunk */
	ck_assert_ptr_nonnull(rf_arena_alloc(b, 1)); /* and it still grows past it */
	ck_assert_uint_gt(b->total, before);
	rf_arena_free(a);
	rf_arena_free(b);
}
END_TEST

/* Node names of a fleet differ in their last bytes ("gpu-node-001959", "gpu-node-001960"): a
 * table's mask keeps the hash's low bits, which must differ too. 8,192 such names in 16,384
 * slots fill about as many as random values would (1 - e^-0.5: ~6,447); without the final mix,
 * 15-byte names whose digits sit in the top bytes of the last word fill ~650. Lengths and
 * every byte count, and equal bytes hash equal. */
START_TEST(test_hash_spreads_names_that_differ_at_the_end)
{
	enum { NAMES = 8192, SLOTS = 16384 };
	static const char *const forms[] = { "hgx", "gpu-node", "node-a" }; /* the formats' */
	static unsigned char used[SLOTS];
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		memset(used, 0, sizeof(used));
		size_t filled = 0;
		for (int i = 0; i < NAMES; i++) {
			char name[32];
			int n = f == 0   ? snprintf(name, sizeof(name), "hgx-%04d", i)
				: f == 1 ? snprintf(name, sizeof(name), "gpu-node-%06d", i)
					 : snprintf(name, sizeof(name), "node-a-%d.fleet", i);
			uint64_t h = rf_hash_bytes(name, (size_t)n);
			ck_assert_uint_eq(h, rf_hash_bytes(name, (size_t)n));
			filled += !used[h & (SLOTS - 1)];
			used[h & (SLOTS - 1)] = 1;
			/* the 32 high bits a slot keeps to pass over other names uncompared */
			ck_assert_uint_ne(h >> 32, rf_hash_bytes(name, (size_t)n - 1) >> 32);
		}
		ck_assert_msg(filled > 6000, "%s: %zu slots of %d", forms[f], filled, SLOTS);
	}
	/* the bytes alone: not their address, nor what follows them */
	char buf[48];
	for (size_t off = 0; off < 8; off++) {
		memset(buf, (int)('x' + off), sizeof(buf));
		memcpy(buf + off, "gpu-node-001959", 15);
		ck_assert_uint_eq(rf_hash_bytes(buf + off, 15),
				  rf_hash_bytes("gpu-node-001959", 15));
	}
	ck_assert_uint_ne(rf_hash_bytes("a", 1), rf_hash_bytes("a\0", 2));
	ck_assert_uint_ne(rf_hash_bytes("node-a-long-name-of-a-fleet", 27),
			  rf_hash_bytes("node-b-long-name-of-a-fleet", 27));
}
END_TEST

Suite *
grow_suite(void)
{
	Suite *s = suite_create("grow");
	TCase *tc = tcase_create("grow");
	tcase_add_test(tc, test_grow_doubles_and_keeps_contents);
	tcase_add_test(tc, test_grow_overflow_leaves_the_array);
	tcase_add_test(tc, test_arena_zeroed_aligned_and_limited);
	tcase_add_test(tc, test_arena_sized_holds_a_known_sequence_exactly);
	tcase_add_test(tc, test_hash_spreads_names_that_differ_at_the_end);
	suite_add_tcase(s, tc);
	return s;
}
