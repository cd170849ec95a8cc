/* The growing text buffer: appends, printf growth, sticky failure at the size cap, a start on
 * the caller's storage, and what steal returns. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "config/strbuf.h"

START_TEST(test_strbuf_append)
{
	struct rf_strbuf b = { 0 };
	char *s = rf_strbuf_steal(&b);
	ck_assert_str_eq(s, ""); /* nothing written: an empty string, not NULL */
	free(s);

	rf_strbuf_puts(&b, "ab");
	rf_strbuf_putc(&b, 'c');
	rf_strbuf_putn(&b, "d\0e", 3);
	ck_assert_uint_eq(b.len, 6);
	ck_assert_mem_eq(b.s, "abcd\0e", 7);
	rf_strbuf_printf(&b, "%s-%d", "x", 42);
	ck_assert_uint_eq(b.len, 10);
	ck_assert_mem_eq(b.s + 6, "x-42", 5);
	/* A long printf grows the buffer in one go. */
	char big[5000];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rf_strbuf_printf(&b, "[%s]", big);
	ck_assert_uint_eq(b.len, 10 + 2 + sizeof(big) - 1);
	ck_assert_uint_eq(strlen(b.s + 10), 2 + sizeof(big) - 1);
	ck_assert(!b.oom);
	s = rf_strbuf_steal(&b);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s[10], '[');
	ck_assert_ptr_null(b.s);
	ck_assert_uint_eq(b.len, 0);
	free(s);
}
END_TEST

START_TEST(test_strbuf_cap_sticky)
{
	struct rf_strbuf b = { .max = 8 };
	rf_strbuf_puts(&b, "12345678"); /* exactly max */
	ck_assert(!b.oom);
	ck_assert_str_eq(b.s, "12345678");
	rf_strbuf_putc(&b, '9');
	ck_assert(b.oom);
	ck_assert_str_eq(b.s, "12345678"); /* what was written stays readable */
	rf_strbuf_puts(&b, "");            /* sticky: even an empty append is refused */
	ck_assert(b.oom);
	ck_assert_ptr_null(rf_strbuf_steal(&b));
	ck_assert(!b.oom); /* steal empties the buffer */

	b = (struct rf_strbuf){ .max = 4 };
	rf_strbuf_puts(&b, "ab");
	rf_strbuf_printf(&b, "%s", "cde");
	ck_assert(b.oom);
	ck_assert_str_eq(b.s, "ab");
	rf_strbuf_release(&b);
}
END_TEST

START_TEST(test_strbuf_init_with)
{
	char stack[8];
	struct rf_strbuf b;
	rf_strbuf_init_with(&b, stack, sizeof(stack), 0);
	rf_strbuf_puts(&b, "1234567");
	ck_assert_ptr_eq(b.s, stack);
	rf_strbuf_puts(&b, "89"); /* moves to the heap, keeping the text */
	ck_assert_ptr_ne(b.s, stack);
	ck_assert_str_eq(b.s, "123456789");
	rf_strbuf_release(&b);

	rf_strbuf_init_with(&b, stack, sizeof(stack), 0);
	rf_strbuf_puts(&b, "abc");
	char *s = rf_strbuf_steal(&b); /* a copy: the stack is not the caller's to free */
	ck_assert_ptr_ne(s, stack);
	ck_assert_str_eq(s, "abc");
	free(s);

	rf_strbuf_init_with(&b, stack, sizeof(stack), 10);
	rf_strbuf_puts(&b, "0123456789");
	ck_assert(!b.oom);
	rf_strbuf_putc(&b, 'x');
	ck_assert(b.oom);
	ck_assert_str_eq(b.s, "0123456789");
	rf_strbuf_release(&b); /* frees the heap part, never the stack */
}
END_TEST

START_TEST(test_strbuf_adopt)
{
	struct rf_strbuf b;
	char *mem = malloc(8);
	ck_assert_ptr_nonnull(mem);
	memset(mem, 'x', 8);
	rf_strbuf_adopt(&b, mem, 8, 12);
	ck_assert_str_eq(b.s, ""); /* NUL-terminated from the start */
	rf_strbuf_puts(&b, "abcdefg");
	ck_assert_ptr_eq(b.s, mem); /* 7 bytes and the NUL fit: no growth */
	rf_strbuf_puts(&b, "hij");
	ck_assert_str_eq(b.s, "abcdefghij"); /* grown with realloc, past its 8 bytes */
	rf_strbuf_puts(&b, "klm");           /* past max 12: sticky failure */
	ck_assert(b.oom);
	ck_assert_ptr_null(rf_strbuf_steal(&b));
	/* handed over as any heap text */
	rf_strbuf_adopt(&b, malloc(4), 4, 0);
	rf_strbuf_puts(&b, "ok");
	char *s = rf_strbuf_steal(&b);
	ck_assert_str_eq(s, "ok");
	free(s);
}
END_TEST

Suite *strbuf_suite(void);

START_TEST(test_strbuf_reserve)
{
	struct rf_strbuf b = { 0 };
	rf_strbuf_reserve(&b, 1000);
	ck_assert_uint_ge(b.cap, 1001);
	ck_assert_uint_eq(b.len, 0);
	char *s = b.s;
	rf_strbuf_puts(&b, "abc");
	ck_assert_ptr_eq(b.s, s); /* no growth */
	rf_strbuf_release(&b);
	struct rf_strbuf capped = { .max = 10 };
	rf_strbuf_reserve(&capped, 11);
	ck_assert(capped.oom);
	rf_strbuf_release(&capped);
}
END_TEST

Suite *
strbuf_suite(void)
{
	Suite *s = suite_create("strbuf");
	TCase *tc = tcase_create("strbuf");
	tcase_add_test(tc, test_strbuf_append);
	tcase_add_test(tc, test_strbuf_cap_sticky);
	tcase_add_test(tc, test_strbuf_init_with);
	tcase_add_test(tc, test_strbuf_reserve);
	tcase_add_test(tc, test_strbuf_adopt);
	suite_add_tcase(s, tc);
	return s;
}
