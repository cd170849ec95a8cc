/* The shared current generation (see cache.h). One mutex guards the pointer and the small sync
 * table; it is never held while building or freeing a generation. */
#include "server/kube/cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kind_state {
	bool synced;
	bool absent;    /* not served by the API server: not watched */
	double last_ok; /* CLOCK_MONOTONIC seconds */
};

struct rf_cache {
	pthread_mutex_t lock;
	struct rf_cluster *gen;
	bool is_static;
	char source[512];
	struct kind_state kinds[RF_KIND_COUNT];
	double pending_since; /* the oldest change not in the published generation, 0 = none */
};

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *
rf_kind_resource(enum rf_kind k)
{
	static const char *const names[] = {
		"nodes",          "pods",          "resourceslices",
		"resourceclaims", "deviceclasses", "devicetaintrules"
	};
	return k < RF_KIND_COUNT ? names[k] : "?";
}

struct rf_cache *
rf_cache_new(void)
{
	struct rf_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	strcpy(c->source, "apiserver");
	/* a kind never heard from is as stale as the process is old */
	for (int k = 0; k < RF_KIND_COUNT; k++)
		c->kinds[k].last_ok = now_s();
	return c;
}

void
rf_cache_free(struct rf_cache *c)
{
	if (!c)
		return;
	rf_cluster_unref(c->gen);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void
rf_cache_publish(struct rf_cache *c, struct rf_cluster *gen)
{
	pthread_mutex_lock(&c->lock);
	struct rf_cluster *old = c->gen;
	c->gen = gen;
	pthread_mutex_unlock(&c->lock);
	rf_cluster_unref(old); /* outside the lock: freeing a big generation takes time */
}

struct rf_cluster *
rf_cache_get(struct rf_cache *c)
{
	pthread_mutex_lock(&c->lock);
	struct rf_cluster *g = rf_cluster_ref(c->gen);
	pthread_mutex_unlock(&c->lock);
	return g;
}

void
rf_cache_set_synced(struct rf_cache *c, enum rf_kind k, bool synced)
{
	pthread_mutex_lock(&c->lock);
	c->kinds[k].synced = synced;
	if (synced)
		c->kinds[k].last_ok = now_s();
	pthread_mutex_unlock(&c->lock);
}

void
rf_cache_set_absent(struct rf_cache *c, enum rf_kind k, bool absent)
{
	pthread_mutex_lock(&c->lock);
	c->kinds[k].absent = absent;
	c->kinds[k].last_ok = now_s();
	pthread_mutex_unlock(&c->lock);
}

void
rf_cache_touch(struct rf_cache *c, enum rf_kind k)
{
	pthread_mutex_lock(&c->lock);
	c->kinds[k].last_ok = now_s();
	pthread_mutex_unlock(&c->lock);
}

void
rf_cache_set_static(struct rf_cache *c, const char *source)
{
	pthread_mutex_lock(&c->lock);
	c->is_static = true;
	snprintf(c->source, sizeof(c->source), "%s", source);
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		c->kinds[k].synced = true;
		c->kinds[k].last_ok = now_s();
	}
	pthread_mutex_unlock(&c->lock);
}

bool
rf_cache_ready(struct rf_cache *c, long long stale_after_ms, json_t **ret_detail)
{
	json_t *detail = ret_detail ? json_object() : NULL;
	bool ready = true;
	double t = now_s();
	pthread_mutex_lock(&c->lock);
	for (int k = 0; k < RF_KIND_COUNT; k++) {
		const struct kind_state *ks = &c->kinds[k];
		bool stale = !c->is_static && ks->synced && !ks->absent &&
			     (t - ks->last_ok) * 1000.0 > (double)stale_after_ms;
		if ((!ks->synced && !ks->absent) || stale)
			ready = false;
		if (detail) {
			json_t *o = json_object();
			if (ks->absent && !ks->synced)
				json_object_set_new(o, "served", json_false());
			json_object_set_new(o, "synced", json_boolean(ks->synced));
			json_object_set_new(o, "stale", json_boolean(stale));
			json_object_set_new(o, "secondsSinceContact",
					    json_real(c->is_static ? 0 : t - ks->last_ok));
			json_object_set_new(detail, rf_kind_resource(k), o);
		}
	}
	bool has_gen = c->gen != NULL;
	pthread_mutex_unlock(&c->lock);
	if (!has_gen)
		ready = false;
	if (ret_detail)
		*ret_detail = detail;
	return ready;
}

double
rf_cache_staleness(struct rf_cache *c, enum rf_kind k)
{
	pthread_mutex_lock(&c->lock);
	double v = c->is_static || (c->kinds[k].absent && !c->kinds[k].synced)
			   ? 0
			   : now_s() - c->kinds[k].last_ok;
	pthread_mutex_unlock(&c->lock);
	return v;
}

const char *
rf_cache_source(struct rf_cache *c)
{
	return c->source;
}

void
rf_cache_set_pending(struct rf_cache *c, double since)
{
	pthread_mutex_lock(&c->lock);
	c->pending_since = since;
	pthread_mutex_unlock(&c->lock);
}

double
rf_cache_lag(struct rf_cache *c)
{
	pthread_mutex_lock(&c->lock);
	double since = c->pending_since;
	pthread_mutex_unlock(&c->lock);
	return since ? now_s() - since : 0.0;
}
