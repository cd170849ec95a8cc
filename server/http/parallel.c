/* Fork-join pool (see parallel.h). Jobs wait in a list; a worker joins the oldest job that
 * still has chunks, takes chunks with an atomic counter, and leaves when none are left. The
 * caller of a job takes chunks the same way, then waits for the workers still inside it. */
#include "server/http/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct job {
	rf_parallel_fn *fn;
	void *ctx;
	size_t n, chunk;
	atomic_size_t next;
	unsigned inside;   /* workers running chunks of it; under the pool lock */
	struct job *later; /* the list of jobs with chunks left */
};

struct rf_parallel {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was posted, or stop */
	pthread_cond_t left; /* a worker left a job */
	struct job *jobs;
	bool stop;
	unsigned n_threads;
	pthread_t *threads;
};

/* Take chunks until none are left. */
static void
run_chunks(struct job *j, unsigned worker)
{
	for (;;) {
		size_t begin = atomic_fetch_add(&j->next, j->chunk);
		if (begin >= j->n)
			return;
		size_t end = begin + j->chunk < j->n ? begin + j->chunk : j->n;
		j->fn(j->ctx, worker, begin, end);
	}
}

static void
unlink_job(struct rf_parallel *p, struct job *j)
{
	for (struct job **pp = &p->jobs; *pp; pp = &(*pp)->later)
		if (*pp == j) {
			*pp = j->later;
			return;
		}
}

struct worker_arg {
	struct rf_parallel *p;
	unsigned id;
};

static void *
worker_main(void *arg)
{
	struct rf_parallel *p = ((struct worker_arg *)arg)->p;
	unsigned id = ((struct worker_arg *)arg)->id;
	free(arg);
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct job *j = p->jobs;
		if (!j) {
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		j->inside++;
		pthread_mutex_unlock(&p->lock);
		run_chunks(j, id);
		pthread_mutex_lock(&p->lock);
		unlink_job(p, j); /* no chunks left: nobody else should join it */
		j->inside--;
		pthread_cond_broadcast(&p->left);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct rf_parallel *
rf_parallel_new(unsigned threads)
{
	struct rf_parallel *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->left, NULL);
	p->threads = calloc(threads + 1, sizeof(*p->threads));
	if (!p->threads)
		goto fail;
	for (unsigned i = 0; i < threads; i++) {
		struct worker_arg *a = malloc(sizeof(*a));
		if (!a)
			goto fail;
		*a = (struct worker_arg){ p, i + 1 };
		if (pthread_create(&p->threads[i], NULL, worker_main, a) != 0) {
			free(a);
			goto fail;
		}
		p->n_threads++;
	}
	return p;
fail:
	rf_parallel_free(p);
	return NULL;
}

void
rf_parallel_free(struct rf_parallel *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->left);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

unsigned
rf_parallel_width(const struct rf_parallel *p)
{
	return p ? p->n_threads + 1 : 1;
}

void
rf_parallel_for(struct rf_parallel *p, size_t n, size_t chunk, rf_parallel_fn *fn, void *ctx)
{
	struct job j = { .fn = fn, .ctx = ctx, .n = n, .chunk = chunk ? chunk : 1 };
	atomic_init(&j.next, 0);
	if (!p || !p->n_threads || n <= j.chunk) {
		run_chunks(&j, 0);
		return;
	}
	pthread_mutex_lock(&p->lock);
	struct job **tail = &p->jobs;
	while (*tail)
		tail = &(*tail)->later;
	*tail = &j;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);

	run_chunks(&j, 0);

	pthread_mutex_lock(&p->lock);
	unlink_job(p, &j);
	while (j.inside)
		pthread_cond_wait(&p->left, &p->lock);
	pthread_mutex_unlock(&p->lock);
}
