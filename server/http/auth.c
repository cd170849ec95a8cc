/* Route access and the bearer token (see auth.h). Owns the token text and its file's stat stamp,
 * guarded by `lock` (held while the small file is read again after a change). */
#include "server/http/auth.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "server/http/log.h"

#define TOKEN_MAX 4096

struct rf_token {
	char *path;
	const char *key;
	pthread_mutex_t lock;
	char *token;
	struct stat st;
	time_t last_check;
};

static int
load(const char *path, const char *key, char **ret, struct stat *st, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot open '%s': %s", key, path, strerror(e));
		return -e;
	}
	char *buf = malloc(TOKEN_MAX + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, TOKEN_MAX + 1, f);
	if (fstat(fileno(f), st) < 0)
		memset(st, 0, sizeof(*st));
	fclose(f);
	while (n > 0 && strchr(" \t\r\n", buf[n - 1]))
		n--;
	buf[n] = 0;
	size_t start = strspn(buf, " \t\r\n");
	if (n > TOKEN_MAX || start == n || memchr(buf, 0, n)) {
		free(buf);
		snprintf(err, errlen, "%s: expected one token of 1 to %d bytes in '%s'", key,
			 TOKEN_MAX, path);
		return -EINVAL;
	}
	memmove(buf, buf + start, n - start + 1);
	*ret = buf;
	return 0;
}

int
rf_token_new(const char *path, const char *key, struct rf_token **ret, char *err, size_t errlen)
{
	struct rf_token *t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path))) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->key = key;
	int r = load(path, key, &t->token, &t->st, err, errlen);
	if (r < 0) {
		free(t->path);
		free(t);
		return r;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->last_check = time(NULL);
	*ret = t;
	return 0;
}

void
rf_token_free(struct rf_token *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->token);
	free(t->path);
	free(t);
}

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Equal strings, in time that depends on the lengths only. */
static bool
equal_ct(const char *a, size_t al, const char *b, size_t bl)
{
	unsigned char d = al != bl;
	for (size_t i = 0; i < al; i++)
		d |= (unsigned char)(a[i] ^ b[i % (bl ? bl : 1)]);
	return bl > 0 && d == 0;
}

bool
rf_token_check(struct rf_token *t, const char *authorization)
{
	if (!t || !authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return false;
	const char *given = authorization + 7;
	while (*given == ' ')
		given++;
	pthread_mutex_lock(&t->lock);
	time_t now = time(NULL);
	if (now != t->last_check) {
		struct stat st;
		t->last_check = now;
		if (stat(t->path, &st) == 0 && !same_file(&st, &t->st)) {
			char err[512], *tok = NULL;
			if (load(t->path, t->key, &tok, &st, err, sizeof(err)) == 0) {
				free(t->token);
				t->token = tok;
				t->st = st;
			} else {
				t->st = st; /* try again at the next change */
				rf_warn("cannot read the changed token file; keeping the previous token",
					"err", err);
			}
		}
	}
	bool ok = equal_ct(given, strlen(given), t->token, strlen(t->token));
	pthread_mutex_unlock(&t->lock);
	return ok;
}

int
rf_http_access_check(enum rf_http_access a, bool have_client_ca, bool peer_verified,
		     struct rf_token *token, const char *authorization, char *detail,
		     size_t detail_len)
{
	switch (a) {
	case RF_HTTP_OPEN:
		return 0;
	case RF_HTTP_CLIENT:
		if (!have_client_ca || peer_verified)
			return 0;
		snprintf(detail, detail_len,
			 "a client certificate signed by server.tls.clientCAFile is required");
		return 401;
	case RF_HTTP_OPERATOR:
		if ((!have_client_ca && !token) || (have_client_ca && peer_verified) ||
		    (token && rf_token_check(token, authorization)))
			return 0;
		snprintf(detail, detail_len, "%s%s%s is required",
			 token ? "the bearer token of server.debugTokenFile" : "",
			 token && have_client_ca ? " or " : "",
			 have_client_ca ? "a client certificate signed by server.tls.clientCAFile"
					: "");
		return 401;
	}
	return 401;
}
