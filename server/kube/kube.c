/* The kube-apiserver client (see kube.h).
 *
 * Owns: the resolved kubeconfig (immutable after rf_kube_new), the current bearer token, the
 * process-wide token bucket and the stop flag. One mutex (`lock`) guards the token, the bucket and
 * the sleep condition; it is never held across I/O. Each rf_kube_conn owns one CURL easy handle,
 * its header list and its error buffer, and is used by one thread at a time; handles are set up
 * once (TLS, timeouts, callbacks) and reused so that connections stay alive between requests. */
#include "server/kube/kube.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "config/grow.h"
#include "server/http/log.h"

#define KUBECONFIG_MAX   ((size_t)4 * 1024 * 1024)
#define TOKEN_MAX        ((size_t)64 * 1024)
#define DEFAULT_MAX_BODY ((size_t)1024 * 1024 * 1024)

struct rf_kube {
	struct rf_kubeconfig kc;
	char source[600];
	char *user_agent;
	char *base_url;   /* scheme://host[:port] used in request URLs */
	char *connect_to; /* CURLOPT_CONNECT_TO entry when tls-server-name is set */
	long connect_timeout_ms;
	double token_reread_s;
	atomic_bool stop;

	pthread_mutex_t lock; /* token, bucket, wake */
	pthread_cond_t wake;
	struct rf_token_bucket bucket;
	char *token;
	double token_read_at;
	struct stat token_st; /* of the file when it was last read */
	bool token_warned;
};

struct rf_kube_conn {
	struct rf_kube *k;
	CURL *h;
	struct curl_slist *headers;    /* of the last request, set on the handle */
	struct curl_slist *connect_to; /* CURLOPT_CONNECT_TO list */
	char errbuf[CURL_ERROR_SIZE];
	/* the running transfer */
	const struct rf_kube_request *req;
	struct rf_kube_response *resp;
	size_t cap, max;
	int cb_error;
	bool status_known, streaming;
	double last_tick;
};

double
rf_kube_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------------------------------------
 * Pure helpers
 */

void
rf_token_bucket_init(struct rf_token_bucket *b, double rate, double burst, double now)
{
	b->rate = rate;
	b->burst = burst < 1 ? 1 : burst;
	b->tokens = b->burst;
	b->last = now;
}

double
rf_token_bucket_reserve(struct rf_token_bucket *b, double now)
{
	if (!(b->rate > 0) || isinf(b->rate))
		return 0;
	if (now > b->last) {
		b->tokens += (now - b->last) * b->rate;
		if (b->tokens > b->burst)
			b->tokens = b->burst;
		b->last = now;
	}
	b->tokens -= 1;
	return b->tokens >= 0 ? 0 : -b->tokens / b->rate;
}

int
rf_kube_parse_retry_after(const char *value)
{
	char *end;
	while (value && (*value == ' ' || *value == '\t'))
		value++;
	if (!value || !*value)
		return -1;
	long v = strtol(value, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
		end++;
	if (end == value || *end || v < 0 || v > 3600)
		return -1;
	return (int)v;
}

int
rf_kube_minor_version(const char *git_version)
{
	const char *s = git_version;
	char *end;
	if (!s)
		return 0;
	if (*s == 'v')
		s++;
	long major = strtol(s, &end, 10);
	if (end == s || *end != '.')
		return 0;
	s = end + 1;
	long minor = strtol(s, &end, 10);
	if (end == s || major < 1 || major > 9 || minor < 0 || minor > 99)
		return 0;
	return (int)(major * 100 + minor);
}

static const char *
status_text(long code)
{
	switch (code) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 415:
		return "Unsupported Media Type";
	case 422:
		return "Unprocessable Entity";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "";
	}
}

void
rf_kube_describe_failure(const struct rf_kube_response *r, const char *verb, const char *resource,
			 const char *group, char *buf, size_t len)
{
	if (r->status == 401) {
		snprintf(buf, len,
			 "%s (the API server rejected railfit's credentials: check the "
			 "token, tokenFile or client certificate)",
			 r->error);
	} else if (r->status == 403 && verb && resource) {
		snprintf(buf, len,
			 "%s (the RBAC role of railfit needs verb \"%s\" on resource "
			 "\"%s\" in API group \"%s\")",
			 r->error, verb, resource, group ? group : "");
	} else if (r->status == 404 && group && !strcmp(group, "resource.k8s.io") &&
		   !r->reason[0]) {
		snprintf(buf, len,
			 "%s (the API server does not serve resource.k8s.io/v1: "
			 "Kubernetes 1.34 or newer is needed)",
			 r->error);
	} else {
		snprintf(buf, len, "%s", r->error);
	}
}

/* ---------------------------------------------------------------------------------------------
 * Configuration
 */

static int
read_small_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	char *buf = malloc(max + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, max + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || n > max) {
		free(buf);
		return bad ? -EIO : -EMSGSIZE;
	}
	buf[n] = 0;
	*ret = buf;
	if (ret_len)
		*ret_len = n;
	return 0;
}

/* Read a token file: whitespace around the token is dropped (client-go trims it). */
static int
read_token(const char *path, char **ret)
{
	char *buf;
	size_t n;
	int r = read_small_file(path, TOKEN_MAX, &buf, &n);
	if (r < 0)
		return r;
	size_t a = 0;
	while (a < n && (buf[a] == ' ' || buf[a] == '\n' || buf[a] == '\r' || buf[a] == '\t'))
		a++;
	while (n > a && (buf[n - 1] == ' ' || buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
			 buf[n - 1] == '\t'))
		n--;
	memmove(buf, buf + a, n - a);
	buf[n - a] = 0;
	if (!buf[0] || strpbrk(buf, "\r\n")) {
		free(buf);
		return -EINVAL;
	}
	*ret = buf;
	return 0;
}

static bool
file_exists(const char *p)
{
	struct stat st;
	return p && *p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int
load_kubeconfig(const char *path, const char *context, struct rf_kubeconfig *kc, char *err,
		size_t errlen)
{
	char *buf = NULL, inner[512];
	size_t len = 0;
	int r = read_small_file(path, KUBECONFIG_MAX, &buf, &len);
	if (r < 0) {
		snprintf(err, errlen, "cannot read kubeconfig '%s': %s", path,
			 r == -EMSGSIZE ? "larger than 4 MiB" : strerror(-r));
		return r == -ENOMEM ? r : r == -ENOENT ? -ENOENT : -EINVAL;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	r = rf_kubeconfig_parse(buf, len, slash && !dir[0] ? "/" : dir, context, kc, inner,
				sizeof(inner));
	free(buf);
	if (r < 0) {
		snprintf(err, errlen, "kubeconfig '%s': %s", path, inner);
		return r;
	}
	return 0;
}

static int
resolve_config(struct rf_kube *k, const struct rf_kube_options *o, char *err, size_t errlen)
{
	const char *sa = o->sa_dir ? o->sa_dir : RF_KUBE_SA_DIR;
	char path[PATH_MAX];
	if (o->kubeconfig && *o->kubeconfig) {
		int r = load_kubeconfig(o->kubeconfig, o->context, &k->kc, err, errlen);
		if (r == 0)
			snprintf(k->source, sizeof(k->source), "kubeconfig %.300s (context %.200s)",
				 o->kubeconfig, k->kc.context);
		return r;
	}
	const char *env = getenv("KUBECONFIG");
	if (env && *env) {
		/* the first existing file of the list; railfit does not merge several files */
		const char *p = env;
		while (*p) {
			const char *colon = strchr(p, ':');
			size_t n = colon ? (size_t)(colon - p) : strlen(p);
			if (n > 0 && n < sizeof(path)) {
				memcpy(path, p, n);
				path[n] = 0;
				if (file_exists(path)) {
					int r = load_kubeconfig(path, o->context, &k->kc, err,
								errlen);
					if (r == 0)
						snprintf(
							k->source, sizeof(k->source),
							"kubeconfig %.300s from $KUBECONFIG (context %.200s)",
							path, k->kc.context);
					return r;
				}
			}
			if (!colon)
				break;
			p = colon + 1;
		}
	}
	const char *home = getenv("HOME");
	if (home && *home) {
		snprintf(path, sizeof(path), "%s/.kube/config", home);
		if (file_exists(path)) {
			int r = load_kubeconfig(path, o->context, &k->kc, err, errlen);
			if (r == 0)
				snprintf(k->source, sizeof(k->source),
					 "kubeconfig %.300s (context %.200s)", path, k->kc.context);
			return r;
		}
	}
	const char *host = getenv("KUBERNETES_SERVICE_HOST"),
		   *port = getenv("KUBERNETES_SERVICE_PORT");
	char tok[PATH_MAX];
	snprintf(tok, sizeof(tok), "%s/token", sa);
	if (host && *host && port && *port && file_exists(tok)) {
		int r = rf_kubeconfig_in_cluster(host, port, sa, &k->kc, err, errlen);
		if (r == 0) {
			snprintf(k->source, sizeof(k->source), "in-cluster service account (%s)",
				 sa);
			if (!file_exists(k->kc.ca_file)) {
				/* client-go logs this and falls back to the system roots */
				rf_warn("in-cluster CA file is missing; using the system CA store",
					"file", k->kc.ca_file);
				free(k->kc.ca_file);
				k->kc.ca_file = NULL;
			}
		}
		return r;
	}
	snprintf(err, errlen,
		 "no kube-apiserver configuration found: pass --kubeconfig F, set kube.kubeconfig "
		 "or $KUBECONFIG, create ~/.kube/config, or run in a pod with a service account "
		 "(KUBERNETES_SERVICE_HOST/PORT and %s)",
		 tok);
	return -EINVAL;
}

static int
check_files(struct rf_kube *k, char *err, size_t errlen)
{
	const struct {
		const char *path, *what;
	} files[] = {
		{ k->kc.ca_file, "certificate-authority" },
		{ k->kc.client_cert_file, "client-certificate" },
		{ k->kc.client_key_file, "client-key" },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!files[i].path)
			continue;
		if (access(files[i].path, R_OK) != 0) {
			int e = errno;
			snprintf(err, errlen, "%s: cannot read %s file '%s': %s", k->source,
				 files[i].what, files[i].path, strerror(e));
			return -EINVAL;
		}
	}
	if (k->kc.token_file) {
		char *t = NULL;
		int r = read_token(k->kc.token_file, &t);
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot read token file '%s': %s", k->source,
				 k->kc.token_file,
				 r == -EINVAL ? "empty or not a single line" : strerror(-r));
			return r == -ENOMEM ? r : -EINVAL;
		}
		k->token = t;
		k->token_read_at = rf_kube_now();
		if (stat(k->kc.token_file, &k->token_st) != 0)
			memset(&k->token_st, 0, sizeof(k->token_st));
	} else if (k->kc.token) {
		if (!(k->token = strdup(k->kc.token)))
			return -ENOMEM;
	}
	return 0;
}

/* With tls-server-name, requests name that host (SNI and certificate check) and CONNECT_TO sends
 * them to the real server. */
static int
setup_urls(struct rf_kube *k)
{
	const char *s = k->kc.server;
	const char *host = strstr(s, "://") + 3;
	const char *path = strchr(host, '/');
	size_t hostlen = path ? (size_t)(path - host) : strlen(host);
	if (!k->kc.tls_server_name || strncmp(s, "https://", 8) != 0) {
		k->base_url = strdup(s);
		return k->base_url ? 0 : -ENOMEM;
	}
	/* split host[:port] */
	char hp[512];
	if (hostlen >= sizeof(hp))
		return -EINVAL;
	memcpy(hp, host, hostlen);
	hp[hostlen] = 0;
	const char *port = "443";
	char *colon = hp[0] == '[' ? strstr(hp, "]:") : strrchr(hp, ':');
	if (colon) {
		if (*colon == ']')
			colon++;
		*colon = 0;
		port = colon + 1;
	}
	size_t n = strlen(k->kc.tls_server_name) + strlen(port) + (path ? strlen(path) : 0) + 16;
	k->base_url = malloc(n);
	k->connect_to = malloc(strlen(hp) + strlen(port) * 2 + 8);
	if (!k->base_url || !k->connect_to)
		return -ENOMEM;
	snprintf(k->base_url, n, "https://%s:%s%s", k->kc.tls_server_name, port, path ? path : "");
	snprintf(k->connect_to, strlen(hp) + strlen(port) * 2 + 8, "::%s:%s", hp, port);
	return 0;
}

int
rf_kube_new(const struct rf_kube_options *o, struct rf_kube **ret, char *err, size_t errlen)
{
	struct rf_kube *k = calloc(1, sizeof(*k));
	int r = -ENOMEM;
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wake, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&k->stop, false);
	if ((r = resolve_config(k, o, err, errlen)) < 0)
		goto fail;
	if ((r = check_files(k, err, errlen)) < 0)
		goto fail;
	k->user_agent = strdup(o->user_agent ? o->user_agent : "railfit");
	if (!k->user_agent || (r = setup_urls(k)) < 0) {
		r = r < 0 ? r : -ENOMEM;
		snprintf(err, errlen, r == -ENOMEM ? "out of memory" : "bad server URL");
		goto fail;
	}
	k->connect_timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
	k->token_reread_s = o->token_reread_s > 0 ? o->token_reread_s : 60;
	double burst = o->burst ? (double)o->burst : (o->qps > 0 ? ceil(2 * o->qps) : 1);
	if (isinf(burst) || burst > 1e6)
		burst = 1e6;
	rf_token_bucket_init(&k->bucket, o->qps, burst, rf_kube_now());
	*ret = k;
	return 0;
fail:
	rf_kube_free(k);
	return r;
}

void
rf_kube_free(struct rf_kube *k)
{
	if (!k)
		return;
	rf_kubeconfig_release(&k->kc);
	if (k->token) {
		memset(k->token, 0, strlen(k->token));
		free(k->token);
	}
	free(k->user_agent);
	free(k->base_url);
	free(k->connect_to);
	pthread_cond_destroy(&k->wake);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

void
rf_kube_stop(struct rf_kube *k)
{
	pthread_mutex_lock(&k->lock);
	atomic_store(&k->stop, true);
	pthread_cond_broadcast(&k->wake);
	pthread_mutex_unlock(&k->lock);
}

bool
rf_kube_stopping(const struct rf_kube *k)
{
	return atomic_load(&((struct rf_kube *)k)->stop);
}

int
rf_kube_sleep(struct rf_kube *k, double seconds)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double whole = floor(seconds);
	ts.tv_sec += (time_t)whole;
	ts.tv_nsec += (long)((seconds - whole) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&k->lock);
	while (!atomic_load(&k->stop)) {
		if (pthread_cond_timedwait(&k->wake, &k->lock, &ts) == ETIMEDOUT)
			break;
	}
	bool stop = atomic_load(&k->stop);
	pthread_mutex_unlock(&k->lock);
	return stop ? -ECANCELED : 0;
}

const char *
rf_kube_server(const struct rf_kube *k)
{
	return k->kc.server;
}

const char *
rf_kube_source(const struct rf_kube *k)
{
	return k->source;
}

/* A copy of the current token; force re-reads the file now (after a 401). NULL when none. */
static char *
current_token(struct rf_kube *k, bool force)
{
	char *copy = NULL;
	pthread_mutex_lock(&k->lock);
	double now = rf_kube_now();
	struct stat st;
	bool changed = false;
	if (k->kc.token_file && stat(k->kc.token_file, &st) == 0)
		/* kubelet swaps a new ..data directory in: another inode, or another mtime */
		changed = st.st_ino != k->token_st.st_ino || st.st_dev != k->token_st.st_dev ||
			  st.st_mtim.tv_sec != k->token_st.st_mtim.tv_sec ||
			  st.st_mtim.tv_nsec != k->token_st.st_mtim.tv_nsec;
	if (k->kc.token_file && (force || changed || now - k->token_read_at >= k->token_reread_s)) {
		char *t = NULL;
		int r = read_token(k->kc.token_file, &t);
		k->token_read_at = now;
		if (changed)
			k->token_st = st;
		if (r == 0) {
			if (k->token) {
				memset(k->token, 0, strlen(k->token));
				free(k->token);
			}
			k->token = t;
			k->token_warned = false;
		} else if (!k->token_warned) {
			/* keep the last good token, as client-go does */
			k->token_warned = true;
			rf_warn("cannot re-read the token file; keeping the last token", "file",
				k->kc.token_file, "error", strerror(-r));
		}
	}
	if (k->token)
		copy = strdup(k->token);
	pthread_mutex_unlock(&k->lock);
	return copy;
}

static int
wait_rate_limit(struct rf_kube *k)
{
	pthread_mutex_lock(&k->lock);
	double w = rf_token_bucket_reserve(&k->bucket, rf_kube_now());
	pthread_mutex_unlock(&k->lock);
	if (w > 0)
		return rf_kube_sleep(k, w);
	return rf_kube_stopping(k) ? -ECANCELED : 0;
}

/* ---------------------------------------------------------------------------------------------
 * Connections
 */

static size_t
on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct rf_kube_conn *c = userdata;
	struct rf_kube_response *resp = c->resp;
	size_t n = size * nmemb;
	if (!c->status_known) {
		long st = 0;
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &st);
		resp->status = st;
		c->status_known = true;
		c->streaming = c->req->on_data && st >= 200 && st < 300;
	}
	if (c->streaming) {
		int r = c->req->on_data(c->req->userdata, ptr, n);
		if (r < 0) {
			c->cb_error = r;
			return CURL_WRITEFUNC_ERROR;
		}
		return n;
	}
	/* error bodies of streamed requests are small; bound them harder */
	size_t max = c->req->on_data ? (size_t)1024 * 1024 : c->max;
	if (resp->body_len + n > max) {
		c->cb_error = -EMSGSIZE;
		return CURL_WRITEFUNC_ERROR;
	}
	if (rf_grow(&resp->body, &c->cap, resp->body_len + n + 1, 1) < 0) {
		c->cb_error = -ENOMEM;
		return CURL_WRITEFUNC_ERROR;
	}
	memcpy(resp->body + resp->body_len, ptr, n);
	resp->body_len += n;
	resp->body[resp->body_len] = 0;
	return n;
}

static size_t
on_header(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct rf_kube_conn *c = userdata;
	size_t n = size * nitems;
	if (n > 5 && !strncmp(buf, "HTTP/", 5)) {
		c->resp->retry_after = -1; /* a new response (after 100 Continue) */
	} else if ((n == 2 && buf[0] == '\r') || (n == 1 && buf[0] == '\n')) {
		/* end of the headers: the status is known before any body byte (a watch may stay
		 * silent for a long time) */
		long st = 0;
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &st);
		if (st >= 200 && !c->status_known) {
			c->resp->status = st;
			c->status_known = true;
			c->streaming = c->req->on_data && st >= 200 && st < 300;
			if (c->streaming)
				c->last_tick = 0; /* tick at once: the watch is open */
		}
	} else if (n > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
		char v[32];
		size_t vl = n - 12 < sizeof(v) - 1 ? n - 12 : sizeof(v) - 1;
		memcpy(v, buf + 12, vl);
		v[vl] = 0;
		c->resp->retry_after = rf_kube_parse_retry_after(v);
	}
	return n;
}

static int
on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
	    curl_off_t ulnow)
{
	struct rf_kube_conn *c = userdata;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (atomic_load(&c->k->stop))
		return 1;
	if (c->streaming && c->req->on_tick) {
		double now = rf_kube_now();
		if (now - c->last_tick >= 1.0) {
			c->last_tick = now;
			int r = c->req->on_tick(c->req->userdata);
			if (r < 0) {
				c->cb_error = r;
				return 1;
			}
		}
	}
	return 0;
}

#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (curl_easy_setopt(c->h, opt, val) != CURLE_OK)                                  \
			goto fail;                                                                 \
	} while (0)

struct rf_kube_conn *
rf_kube_conn_new(struct rf_kube *k)
{
	struct rf_kube_conn *c = calloc(1, sizeof(*c));
	const struct rf_kubeconfig *kc = &k->kc;
	if (!c)
		return NULL;
	c->k = k;
	c->h = curl_easy_init();
	if (!c->h)
		goto fail;
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_USERAGENT, k->user_agent);
	SET(CURLOPT_CONNECTTIMEOUT_MS, k->connect_timeout_ms);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	SET(CURLOPT_TCP_KEEPIDLE, 30L);
	SET(CURLOPT_TCP_KEEPINTVL, 15L);
	SET(CURLOPT_ERRORBUFFER, c->errbuf);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, c);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, c);
	SET(CURLOPT_XFERINFOFUNCTION, on_progress);
	SET(CURLOPT_XFERINFODATA, c);
	SET(CURLOPT_NOPROGRESS, 0L);
	SET(CURLOPT_ACCEPT_ENCODING, ""); /* gzip for large lists */
	/* a replaced CA file is picked up within a minute */
	SET(CURLOPT_CA_CACHE_TIMEOUT, 60L);
	if (kc->insecure_skip_tls_verify) {
		SET(CURLOPT_SSL_VERIFYPEER, 0L);
		SET(CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (kc->ca_data) {
		struct curl_blob b = { kc->ca_data, kc->ca_data_len, CURL_BLOB_COPY };
		SET(CURLOPT_CAINFO_BLOB, &b);
	} else if (kc->ca_file) {
		SET(CURLOPT_CAINFO, kc->ca_file);
	}
	if (kc->client_cert_data) {
		struct curl_blob b = { kc->client_cert_data, kc->client_cert_data_len,
				       CURL_BLOB_COPY };
		SET(CURLOPT_SSLCERT_BLOB, &b);
		SET(CURLOPT_SSLCERTTYPE, "PEM");
	} else if (kc->client_cert_file) {
		SET(CURLOPT_SSLCERT, kc->client_cert_file);
		SET(CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (kc->client_key_data) {
		struct curl_blob b = { kc->client_key_data, kc->client_key_data_len,
				       CURL_BLOB_COPY };
		SET(CURLOPT_SSLKEY_BLOB, &b);
		SET(CURLOPT_SSLKEYTYPE, "PEM");
	} else if (kc->client_key_file) {
		SET(CURLOPT_SSLKEY, kc->client_key_file);
		SET(CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (kc->proxy_url)
		SET(CURLOPT_PROXY, kc->proxy_url);
	if (kc->username) {
		SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		SET(CURLOPT_USERNAME, kc->username);
		SET(CURLOPT_PASSWORD, kc->password ? kc->password : "");
	}
	if (k->connect_to) {
		/* libcurl does not copy the list: it lives until after curl_easy_cleanup() */
		if (!(c->connect_to = curl_slist_append(NULL, k->connect_to)))
			goto fail;
		SET(CURLOPT_CONNECT_TO, c->connect_to);
	}
	return c;
fail:
	rf_kube_conn_free(c);
	return NULL;
}

void
rf_kube_conn_free(struct rf_kube_conn *c)
{
	if (!c)
		return;
	if (c->h)
		curl_easy_cleanup(c->h);
	curl_slist_free_all(c->headers);
	curl_slist_free_all(c->connect_to);
	free(c);
}

void
rf_kube_response_release(struct rf_kube_response *r)
{
	if (!r)
		return;
	free(r->body);
	r->body = NULL;
	r->body_len = 0;
}

/* Fill reason/error (and retry_after from details) for a non-2xx response. */
static void
parse_status(struct rf_kube_response *r, const char *method, const char *path)
{
	const char *msg = NULL;
	char text[300];
	json_t *j = NULL;
	if (r->body_len && r->body[0] == '{')
		j = json_loadb(r->body, r->body_len, 0, NULL);
	if (json_is_object(j)) {
		msg = json_string_value(json_object_get(j, "message"));
		const char *reason = json_string_value(json_object_get(j, "reason"));
		if (reason)
			snprintf(r->reason, sizeof(r->reason), "%s", reason);
		json_t *ra = json_object_get(json_object_get(j, "details"), "retryAfterSeconds");
		if (r->retry_after < 0 && json_is_integer(ra) && json_integer_value(ra) > 0 &&
		    json_integer_value(ra) <= 3600)
			r->retry_after = (int)json_integer_value(ra);
	}
	if (!msg && r->body_len) {
		/* text bodies ("404 page not found", APF's "Too many requests ..."): first line */
		size_t n = 0;
		while (n < r->body_len && n < sizeof(text) - 1 && r->body[n] != '\n' &&
		       r->body[n] != '\r') {
			unsigned char ch = (unsigned char)r->body[n];
			text[n] = ch >= 0x20 && ch != 0x7f ? (char)ch : '?';
			n++;
		}
		text[n] = 0;
		msg = text;
	}
	snprintf(r->error, sizeof(r->error), "%s %s: %ld %s%s%s", method, path, r->status,
		 status_text(r->status), msg && *msg ? ": " : "", msg ? msg : "");
	json_decref(j);
}

static int
map_curl_error(CURLcode cc)
{
	switch (cc) {
	case CURLE_ABORTED_BY_CALLBACK:
		return -ECANCELED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return -ECONNRESET;
	default:
		return -EPROTO;
	}
}

static int
perform(struct rf_kube_conn *c, const struct rf_kube_request *req, struct rf_kube_response *resp,
	bool force_token)
{
	struct rf_kube *k = c->k;
	const char *method = req->method ? req->method : "GET";
	struct curl_slist *h = NULL, *t;
	char *url = NULL, *auth = NULL, *token = NULL;
	int r;

	memset(resp, 0, sizeof(*resp));
	resp->retry_after = -1;
	c->req = req;
	c->resp = resp;
	c->cap = 0;
	c->max = req->max_body ? req->max_body : DEFAULT_MAX_BODY;
	c->cb_error = 0;
	c->status_known = false;
	c->streaming = false;
	c->last_tick = rf_kube_now();
	c->errbuf[0] = 0;

	if ((r = wait_rate_limit(k)) < 0) {
		snprintf(resp->error, sizeof(resp->error), "stopping");
		return r;
	}
	size_t ul = strlen(k->base_url) + strlen(req->path) + 1;
	url = malloc(ul);
	if (!url)
		goto oom;
	snprintf(url, ul, "%s%s", k->base_url, req->path);
	if (!(t = curl_slist_append(h, "Accept: application/json")))
		goto oom;
	h = t;
	if (!(t = curl_slist_append(h, "Expect:")))
		goto oom;
	h = t;
	if ((token = current_token(k, force_token))) {
		size_t al = strlen(token) + 32;
		if (!(auth = malloc(al)))
			goto oom;
		snprintf(auth, al, "Authorization: Bearer %s", token);
		if (!(t = curl_slist_append(h, auth)))
			goto oom;
		h = t;
	}
	if (req->body) {
		char ct[128];
		snprintf(ct, sizeof(ct), "Content-Type: %s",
			 req->content_type ? req->content_type : "application/json");
		if (!(t = curl_slist_append(h, ct)))
			goto oom;
		h = t;
	}
	CURLcode cc = CURLE_OK;
#define OPT(o, v)                                                                                  \
	if (cc == CURLE_OK)                                                                        \
	cc = curl_easy_setopt(c->h, o, v)
	OPT(CURLOPT_URL, url);
	OPT(CURLOPT_HTTPHEADER, h);
	if (!strcmp(method, "GET")) {
		OPT(CURLOPT_CUSTOMREQUEST, (char *)NULL);
		OPT(CURLOPT_HTTPGET, 1L);
	} else if (!strcmp(method, "POST")) {
		OPT(CURLOPT_CUSTOMREQUEST, (char *)NULL);
		OPT(CURLOPT_POST, 1L);
		OPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		OPT(CURLOPT_POSTFIELDS, req->body ? req->body : "");
	} else {
		OPT(CURLOPT_POST, 1L);
		OPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		OPT(CURLOPT_POSTFIELDS, req->body ? req->body : "");
		OPT(CURLOPT_CUSTOMREQUEST, method);
	}
	OPT(CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : 0L);
	long idle_s = req->idle_ms > 0 ? (req->idle_ms + 999) / 1000 : 60;
	OPT(CURLOPT_LOW_SPEED_LIMIT, 1L);
	OPT(CURLOPT_LOW_SPEED_TIME, idle_s);
#undef OPT
	if (cc != CURLE_OK) {
		snprintf(resp->error, sizeof(resp->error), "cannot set up the request: %s",
			 curl_easy_strerror(cc));
		r = -EPROTO;
		goto out;
	}
	/* the previous header list is no longer referenced by the handle */
	curl_slist_free_all(c->headers);
	c->headers = h;
	h = NULL;

	cc = curl_easy_perform(c->h);
	/* the header list stays set until the next request replaces it (libcurl does not copy) */
	if (!c->status_known && cc == CURLE_OK) {
		long st = 0;
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &st);
		resp->status = st;
	}
	if (cc == CURLE_OK) {
		r = 0;
		if (resp->status < 200 || resp->status > 299)
			parse_status(resp, method, req->path);
		goto out;
	}
	if ((cc == CURLE_WRITE_ERROR || cc == CURLE_ABORTED_BY_CALLBACK) && c->cb_error)
		r = c->cb_error;
	else
		r = map_curl_error(cc);
	if (r == -EMSGSIZE)
		snprintf(resp->error, sizeof(resp->error), "%s %s: response body too large", method,
			 req->path);
	else if ((cc == CURLE_WRITE_ERROR || cc == CURLE_ABORTED_BY_CALLBACK) && c->cb_error)
		snprintf(resp->error, sizeof(resp->error), "%s %s: stream aborted: %s", method,
			 req->path, strerror(-r));
	else if (r == -ECONNREFUSED || r == -EHOSTUNREACH)
		snprintf(resp->error, sizeof(resp->error),
			 "cannot connect to the API server at %.200s (%.300s): %.200s",
			 k->kc.server, k->source,
			 c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
	else if (r == -ETIMEDOUT && !resp->status)
		snprintf(resp->error, sizeof(resp->error),
			 "%s %s: no answer from the API server at %s: %s", method, req->path,
			 k->kc.server, c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
	else
		snprintf(resp->error, sizeof(resp->error), "%s %s: %s", method, req->path,
			 c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
	goto out;
oom:
	snprintf(resp->error, sizeof(resp->error), "out of memory");
	r = -ENOMEM;
out:
	curl_slist_free_all(h);
	free(url);
	if (auth) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	if (token) {
		memset(token, 0, strlen(token));
		free(token);
	}
	c->req = NULL;
	c->resp = NULL;
	return r;
}

int
rf_kube_do(struct rf_kube_conn *c, const struct rf_kube_request *req, struct rf_kube_response *ret)
{
	int r = perform(c, req, ret, false);
	if (r == 0 && ret->status == 401 && c->k->kc.token_file) {
		/* the token may have rotated: re-read it and try once more (client-go) */
		rf_kube_response_release(ret);
		r = perform(c, req, ret, true);
	}
	return r;
}

int
rf_kube_server_version(struct rf_kube_conn *c, char *buf, size_t len, char *err, size_t errlen)
{
	struct rf_kube_response resp;
	struct rf_kube_request req = { .path = "/version",
				       .timeout_ms = 5000,
				       .max_body = 1024 * 1024 };
	int r = rf_kube_do(c, &req, &resp);
	if (r < 0) {
		snprintf(err, errlen, "%s", resp.error);
		goto out;
	}
	if (resp.status != 200) {
		rf_kube_describe_failure(&resp, "get", "/version", NULL, err, errlen);
		r = -EPROTO;
		goto out;
	}
	json_t *j = json_loadb(resp.body, resp.body_len, 0, NULL);
	const char *gv = json_string_value(json_object_get(j, "gitVersion"));
	if (!gv) {
		snprintf(err, errlen, "GET /version: no gitVersion in the answer");
		r = -EPROTO;
	} else {
		snprintf(buf, len, "%s", gv);
		r = 0;
	}
	json_decref(j);
out:
	rf_kube_response_release(&resp);
	return r;
}

int
rf_kube_patch_node_annotation(struct rf_kube_conn *c, const char *node, const char *key,
			      const char *value, char *err, size_t errlen)
{
	json_t *patch = json_pack("{s:{s:{s:o}}}", "metadata", "annotations", key,
				  value ? json_string(value) : json_null());
	char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	char *name = curl_easy_escape(c->h, node, 0);
	char path[600];
	struct rf_kube_response resp = { 0 };
	int r = -ENOMEM;
	json_decref(patch);
	if (!body || !name) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	struct rf_kube_request req = { .method = "PATCH",
				       .path = path,
				       .body = body,
				       .body_len = strlen(body),
				       .content_type = "application/merge-patch+json",
				       .timeout_ms = 10000,
				       .max_body = 16 * 1024 * 1024 };
	r = rf_kube_do(c, &req, &resp);
	if (r < 0) {
		snprintf(err, errlen, "%s", resp.error);
		goto out;
	}
	if (resp.status == 200 || resp.status == 201) {
		r = 0;
		goto out;
	}
	rf_kube_describe_failure(&resp, "patch", "nodes", "", err, errlen);
	r = resp.status == 404                         ? -ENOENT
	    : resp.status == 401 || resp.status == 403 ? -EACCES
						       : -EPROTO;
out:
	rf_kube_response_release(&resp);
	curl_free(name);
	free(body);
	return r;
}

struct rf_kube_options
rf_kube_options_from_config(const struct rf_config *cfg, const char *kubeconfig_flag,
			    const char *user_agent)
{
	const char *kc = kubeconfig_flag && kubeconfig_flag[0]             ? kubeconfig_flag
			 : cfg->kube.kubeconfig && cfg->kube.kubeconfig[0] ? cfg->kube.kubeconfig
									   : NULL;
	return (struct rf_kube_options){
		.kubeconfig = kc,
		.qps = cfg->kube.qps,
		.user_agent = user_agent,
		.sa_dir = getenv("RAILFIT_SA_DIR"),
	};
}
