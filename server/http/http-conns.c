/* Connections and their deadline. Each connection MHD starts is tracked (the server's list, under
 * its lock) with the time its current request began to be awaited. A client that trickles bytes
 * never goes idle for MHD's idle timeout: a reaper thread shuts down every connection whose
 * request (head and body) has not arrived within request_timeout_ms of the connection's opening
 * or of its previous response (MHD's CLOSED notice comes before it closes the socket, and both
 * take the server's lock, so the reaper never touches a reused descriptor). Threads: MHD's
 * (notices, marks) and the reaper. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "server/http/http-private.h"
#include "server/http/log.h"

static struct conn *
conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* The request on conn has arrived (busy) or been answered (a new one is awaited from now). */
void
rf_http_conn_mark(struct rf_http_server *s, struct MHD_Connection *conn, bool busy)
{
	struct conn *c = conn_of(conn);
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	c->busy = busy;
	if (!busy)
		clock_gettime(CLOCK_MONOTONIC, &c->since);
	pthread_mutex_unlock(&s->lock);
}

void
rf_http_connection_notice(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct rf_http_server *s = cls;
	struct conn *c = *socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(c = calloc(1, sizeof(*c))))
			return; /* untracked: only the idle timeout applies */
		c->fd = ci->connect_fd;
		clock_gettime(CLOCK_MONOTONIC, &c->since);
		pthread_mutex_lock(&s->lock);
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		pthread_mutex_unlock(&s->lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&s->lock);
	free(c);
	*socket_context = NULL;
}

/* Shuts down connections whose request is overdue; MHD then sees the end of the stream and
 * closes them (its CLOSED notice waits for the lock held here). */
void *
rf_http_reaper(void *arg)
{
	struct rf_http_server *s = arg;
	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		struct timespec now, until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += RF_HTTP_REAP_INTERVAL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->wake, &s->lock, &until);
		clock_gettime(CLOCK_MONOTONIC, &now);
		unsigned cut = 0;
		for (struct conn *c = s->conns; c; c = c->next) {
			double age = (double)(now.tv_sec - c->since.tv_sec) * 1000.0 +
				     (double)(now.tv_nsec - c->since.tv_nsec) / 1e6;
			if (c->busy || c->cut || age <= (double)s->timeout_ms)
				continue;
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
			cut++;
		}
		if (cut) {
			pthread_mutex_unlock(&s->lock);
			char n[16];
			snprintf(n, sizeof(n), "%u", cut);
			rf_v(1,
			     "closed connections whose request did not arrive within "
			     "server.requestTimeout",
			     "connections", n);
			for (unsigned i = 0; i < cut; i++)
				rf_http_count_rejected("deadline");
			pthread_mutex_lock(&s->lock);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}
