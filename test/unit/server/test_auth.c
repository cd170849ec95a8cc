/* Who may call a route (server/http/auth.c): the verbs and a client CA, the debug routes and a
 * bearer token or a client certificate, and the token file read again when it changes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "server/http/auth.h"

START_TEST(test_auth_access_table)
{
	char d[256];
	/* open routes, and protected ones on a server that protects nothing */
	ck_assert_int_eq(rf_http_access_check(RF_HTTP_OPEN, true, false, NULL, NULL, d, sizeof(d)),
			 0);
	ck_assert_int_eq(
		rf_http_access_check(RF_HTTP_CLIENT, false, false, NULL, NULL, d, sizeof(d)), 0);
	ck_assert_int_eq(
		rf_http_access_check(RF_HTTP_OPERATOR, false, false, NULL, NULL, d, sizeof(d)), 0);
	/* a client CA: a verified certificate, nothing else */
	ck_assert_int_eq(
		rf_http_access_check(RF_HTTP_CLIENT, true, false, NULL, NULL, d, sizeof(d)), 401);
	ck_assert_ptr_nonnull(strstr(d, "server.tls.clientCAFile"));
	ck_assert_int_eq(rf_http_access_check(RF_HTTP_CLIENT, true, true, NULL, NULL, d, sizeof(d)),
			 0);
	ck_assert_int_eq(
		rf_http_access_check(RF_HTTP_OPERATOR, true, false, NULL, NULL, d, sizeof(d)), 401);
	ck_assert_int_eq(
		rf_http_access_check(RF_HTTP_OPERATOR, true, true, NULL, NULL, d, sizeof(d)), 0);
}
END_TEST

START_TEST(test_auth_token)
{
	char path[] = "/tmp/rf-token-XXXXXX", err[256], d[256];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "  abc123\n", 9), 9);
	close(fd);
	struct rf_token *t = NULL;
	ck_assert_int_eq(rf_token_new(path, "server.debugTokenFile", &t, err, sizeof(err)), 0);
	ck_assert(rf_token_check(t, "Bearer abc123"));
	ck_assert(rf_token_check(t, "bearer abc123"));
	ck_assert(!rf_token_check(t, "Bearer abc12"));
	ck_assert(!rf_token_check(t, "Bearer abc1234"));
	ck_assert(!rf_token_check(t, "Basic abc123"));
	ck_assert(!rf_token_check(t, "Bearer "));
	ck_assert(!rf_token_check(t, NULL));
	/* the operator routes take the token, or a certificate when there is a client CA */
	ck_assert_int_eq(rf_http_access_check(RF_HTTP_OPERATOR, false, false, t, "Bearer abc123", d,
					      sizeof(d)),
			 0);
	ck_assert_int_eq(
		rf_http_access_check(RF_HTTP_OPERATOR, false, false, t, "Bearer x", d, sizeof(d)),
		401);
	ck_assert_ptr_nonnull(strstr(d, "server.debugTokenFile"));
	ck_assert_ptr_null(strstr(d, "clientCAFile"));
	ck_assert_int_eq(rf_http_access_check(RF_HTTP_OPERATOR, true, false, t, NULL, d, sizeof(d)),
			 401);
	ck_assert_ptr_nonnull(strstr(d, "server.debugTokenFile or a client certificate"));
	ck_assert_int_eq(rf_http_access_check(RF_HTTP_OPERATOR, true, true, t, NULL, d, sizeof(d)),
			 0);
	/* the verbs do not take the token */
	ck_assert_int_eq(
		rf_http_access_check(RF_HTTP_CLIENT, true, false, t, "Bearer abc123", d, sizeof(d)),
		401);
	/* rotated: a new file renamed over the old one */
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	FILE *f = fopen(tmp, "w");
	ck_assert_ptr_nonnull(f);
	fputs("xyz789", f);
	fclose(f);
	ck_assert_int_eq(rename(tmp, path), 0);
	sleep(1);
	ck_assert(rf_token_check(t, "Bearer xyz789"));
	ck_assert(!rf_token_check(t, "Bearer abc123"));
	rf_token_free(t);
	/* empty and missing files */
	f = fopen(path, "w");
	fputs(" \n", f);
	fclose(f);
	ck_assert_int_eq(rf_token_new(path, "server.debugTokenFile", &t, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "server.debugTokenFile: expected one token"));
	unlink(path);
	ck_assert_int_lt(rf_token_new(path, "server.debugTokenFile", &t, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "cannot open"));
}
END_TEST

Suite *auth_suite(void);

Suite *
auth_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("auth");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_auth_access_table);
	tcase_add_test(tc, test_auth_token);
	suite_add_tcase(s, tc);
	return s;
}
