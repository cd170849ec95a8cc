/* The reflector's decisions (see reflector_policy.h). */
#include "server/kube/reflector_policy.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void
rf_backoff_init(struct rf_backoff *b)
{
	*b = (struct rf_backoff){ .initial = 0.8,
				  .cap = 30,
				  .factor = 2,
				  .jitter = 1.0,
				  .reset_after = 120,
				  .next = 0.8,
				  .last = -1 };
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
