/* The reflector's decisions (see reflector_policy.h). */
#include "server/kube/reflector_policy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

void
rf_backoff_init(struct rf_backoff *b)
{
	*b = (struct rf_backoff){ .initial = 0.8,
				  .cap = RF_BACKOFF_CAP,
				  .factor = 2,
				  .jitter = 0.5,
				  .reset_after = 120,
				  .next = 0.8,
				  .last = -1 };
}

void
rf_backoff_reset(struct rf_backoff *b)
{
	b->next = b->initial;
	b->last = -1;
}

double
rf_backoff_delay(double backoff, int retry_after)
{
	if (retry_after <= backoff)
		return backoff;
	return retry_after > RF_RETRY_AFTER_MAX_S ? RF_RETRY_AFTER_MAX_S : retry_after;
}

bool
rf_rv_went_backwards(const char *last, const char *now)
{
	int c = 0;
	return last && *last && rf_rv_compare(now, last, &c) == 0 && c < 0;
}

double
rf_backoff_step(struct rf_backoff *b, double now, double rand01)
{
	if (b->last >= 0 && now - b->last > b->reset_after)
		b->next = b->initial;
	b->last = now;
	double d = b->next;
	double n = d * b->factor;
	b->next = n > b->cap ? b->cap : n;
	if (rand01 < 0)
		rand01 = 0;
	if (rand01 >= 1)
		rand01 = 0.999999;
	return d + d * b->jitter * rand01;
}

long
rf_watch_timeout_seconds(double min_s, double rand01)
{
	double t = floor(min_s * (1.0 + rand01));
	return t < 1 ? 1 : (long)t;
}

long
rf_watch_idle_ms(int64_t watch_timeout_ms)
{
	if (watch_timeout_ms < 5000)
		return 5000;
	if (watch_timeout_ms > 90000)
		return 90000;
	return (long)watch_timeout_ms;
}

int
rf_rv_compare(const char *a, const char *b, int *ret)
{
	if (!a || !b || !*a || !*b)
		return -EINVAL;
	for (const char *p = a; *p; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	for (const char *p = b; *p; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	while (*a == '0' && a[1])
		a++;
	while (*b == '0' && b[1])
		b++;
	size_t la = strlen(a), lb = strlen(b);
	int c = la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
	*ret = c < 0 ? -1 : c > 0 ? 1 : 0;
	return 0;
}

bool
rf_kube_is_expired(long status, const char *reason)
{
	return status == 410 || (reason && (!strcmp(reason, "Expired") || !strcmp(reason, "Gone")));
}

/* ---------------------------------------------------------------------------------------------
 * Restart reasons (railfit_watch_restarts_total)
 */

static const char *
http_reason(long status)
{
	if (status == 429)
		return "http-429";
	if (status >= 500)
		return "http-5xx";
	if (rf_kube_is_expired(status, NULL))
		return "expired";
	return "http-4xx";
}

static const char *
transport_reason(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
		return "timeout";
	case -ECONNRESET:
		return "closed";
	case -ECONNREFUSED:
	case -EHOSTUNREACH:
		return "connect";
	default:
		return "error"; /* TLS, a broken response, out of memory */
	}
}

int
rf_path_add_param(char *buf, size_t len, const char *key, const char *value)
{
	char *e = curl_easy_escape(NULL, value, 0); /* the handle is unused since 7.82 */
	if (!e)
		return -ENOMEM;
	size_t used = strlen(buf);
	int n = snprintf(buf + used, len - used, "%s%s=%s", strchr(buf, '?') ? "&" : "?", key, e);
	curl_free(e);
	return n < 0 || (size_t)n >= len - used ? -ENAMETOOLONG : 0;
}

/* ---------------------------------------------------------------------------------------------
 * List
 */

const char *
rf_list_rv(bool rv_unavailable, bool synced, const char *last_rv)
{
	return rv_unavailable ? "" : !synced ? "0" : last_rv;
}

int
rf_list_page_size(const char *rv, bool paginated_before)
{
	return (!rv[0] || !strcmp(rv, "0") || paginated_before) ? RF_LIST_PAGE_SIZE : 0;
}

bool
rf_list_rv_too_large(long status, const char *body)
{
	return status == 504 && body &&
	       (strstr(body, "ResourceVersionTooLarge") ||
		strstr(body, "Too large resource version"));
}

bool
rf_list_retry_without_rv(long status, const char *reason, bool too_large)
{
	return rf_kube_is_expired(status, reason) || too_large;
}

const char *
rf_list_failure(int rc, long status, int retry_after, int *ret_retry_after)
{
	*ret_retry_after = rc == 1 && (status == 429 || status >= 500) ? retry_after : -1;
	return rc == 1 ? http_reason(status) : transport_reason(rc);
}

/* ---------------------------------------------------------------------------------------------
 * Watch
 */

int
rf_watch_path(char *buf, size_t len, const char *base, const char *field_selector, const char *rv,
	      long timeout_s)
{
	char ts[24];
	int rc;
	if (!len)
		return -ENAMETOOLONG;
	snprintf(ts, sizeof(ts), "%ld", timeout_s);
	snprintf(buf, len, "%s?allowWatchBookmarks=true", base);
	if ((field_selector &&
	     (rc = rf_path_add_param(buf, len, "fieldSelector", field_selector)) < 0) ||
	    (rc = rf_path_add_param(buf, len, "resourceVersion", rv)) < 0 ||
	    (rc = rf_path_add_param(buf, len, "timeoutSeconds", ts)) < 0 ||
	    (rc = rf_path_add_param(buf, len, "watch", "true")) < 0)
		return rc;
	return 0;
}

enum rf_event_action
rf_watch_event_action(const struct rf_watch_event *ev, const char *kind, size_t rv_max,
		      const char **ret_rv)
{
	*ret_rv = NULL;
	if (ev->type == RF_WATCH_ERROR)
		return RF_EVENT_ABORT;
	const char *k = json_string_value(json_object_get(ev->object, "kind"));
	if (k && strcmp(k, kind) != 0)
		return RF_EVENT_SKIP;
	if (ev->rv && strlen(ev->rv) < rv_max)
		*ret_rv = ev->rv;
	return ev->type == RF_WATCH_BOOKMARK ? RF_EVENT_BOOKMARK : RF_EVENT_APPLY;
}

struct rf_watch_verdict
rf_watch_classify(const struct rf_watch_end *e)
{
	struct rf_watch_verdict v = { .next = RF_NEXT_RELIST,
				      .failure = true,
				      .retry_after = -1,
				      .detail = RF_DETAIL_STREAM };
	if (e->rc == -ECANCELED && e->failure == RF_SF_NONE)
		return (struct rf_watch_verdict){ .next = RF_NEXT_STOP,
						  .retry_after = -1,
						  .detail = RF_DETAIL_NONE };
	if (e->status >= 200 && e->status < 300) {
		switch (e->failure) {
		case RF_SF_ERROR_EVENT:
			if (rf_kube_is_expired(e->err_code, e->err_reason)) {
				/* relist at the last RV: a list at RV=N is at least that fresh */
				v.reason = "expired";
			} else if (e->err_code == 429) {
				v.reason = "http-429";
				v.next = RF_NEXT_BACKOFF_REWATCH;
			} else {
				v.reason = "error";
			}
			return v;
		case RF_SF_GARBAGE:
			v.reason = "garbage";
			v.detail = RF_DETAIL_BROKEN;
			return v;
		case RF_SF_OVERSIZE:
			v.reason = "oversize";
			return v;
		case RF_SF_STORE:
			v.reason = "error";
			return v;
		case RF_SF_RV_RESET:
			v.reason = "rv-reset";
			return v;
		case RF_SF_NONE:
			break;
		}
		/* the stream ended: cleanly, by a dropped connection or by the idle limit */
		if (e->elapsed < 1.0 && e->n_events == 0) {
			/* client-go's "very short watch": something is wrong, do not spin */
			v.reason = "short";
			v.detail = RF_DETAIL_SHORT;
			return v;
		}
		v.next = RF_NEXT_REWATCH;
		v.failure = false;
		v.detail = RF_DETAIL_NONE;
		if (e->pending) /* that event was not applied; the server resends it */
			v.reason = "truncated";
		else if (e->rc == -ETIMEDOUT)
			v.reason = "timeout";
		else if (e->rc == 0 && e->elapsed >= (double)e->timeout_s - 1.0)
			v.reason = "timeout";
		else
			v.reason = "closed";
		v.healthy = e->n_events || e->elapsed >= 1.0;
		return v;
	}
	if (e->rc < 0) {
		/* no response: connection refused is retried as a watch (client-go), the rest
		 * relists */
		v.reason = transport_reason(e->rc);
		v.detail = RF_DETAIL_TRANSPORT;
		v.next = e->rc == -ECONNREFUSED ? RF_NEXT_BACKOFF_REWATCH : RF_NEXT_RELIST;
		return v;
	}
	v.detail = RF_DETAIL_HTTP;
	if (e->status == 429) {
		v.reason = "http-429";
		v.retry_after = e->retry_after;
		v.next = RF_NEXT_BACKOFF_REWATCH;
	} else {
		v.reason = http_reason(e->status);
		v.retry_after = e->status >= 500 ? e->retry_after : -1;
	}
	return v;
}

bool
rf_watch_check_rv(const struct rf_watch_verdict *v)
{
	if (v->next != RF_NEXT_REWATCH && v->next != RF_NEXT_BACKOFF_REWATCH)
		return false;
	return !v->reason || strcmp(v->reason, "timeout") != 0;
}
