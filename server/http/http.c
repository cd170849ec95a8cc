/* The HTTP front end on libmicrohttpd (DESIGN section 4, STYLE 3.4/3.5): starting and stopping a
 * server. A server owns its listening socket (http-listen.c), the MHD daemon with its polling
 * threads (a pool of min(4, ncpu) by default) that run the access handler (http-request.c), and a
 * reaper thread (http-conns.c). The limits: MHD's per-address and total connection limits and its
 * idle timeout (request_timeout_ms rounded up to seconds), the arrival deadline (http-conns.c),
 * the head limits (http-head.c), the body cap and the process-wide body budget (http-body.c).
 * http-private.h lists the files and what each does. */
#include "server/http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/http/http-private.h"
#include "server/http/log.h"
#include "server/http/tls.h"

__attribute__((format(printf, 2, 0))) static void
mhd_logger(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	rf_warn(msg, "component", "libmicrohttpd");
}

static void
free_server(struct rf_http_server *s)
{
	/* MHD sent a CLOSED notice for every connection it started */
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	free(s->route_list);
	free(s->access);
	free(s);
}

/* The options this file adds to MHD's (an MHD_OPTION_ARRAY, so that the daemon's argument list
 * stays as it was): connection tracking, the target check, the per-address limit. */
static void
set_limits(struct rf_http_server *s, const struct rf_http_options *o)
{
	size_t i = 0;
	s->limits[i++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION,
						  (intptr_t)rf_http_connection_notice, s };
	s->limits[i++] = (struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK,
						  (intptr_t)rf_http_target_seen, s };
	if (o->max_per_address)
		s->limits[i++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
							  (intptr_t)o->max_per_address, NULL };
	s->limits[i] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
}

int
rf_http_start(const struct rf_http_options *o, const struct rf_http_route *routes, size_t n_routes,
	      struct rf_http_server **ret, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!o || (!routes && n_routes > 0) || !ret) {
		snprintf(err, errlen, "invalid arguments");
		return -EINVAL;
	}
	if (o->max_body_bytes < 0) {
		snprintf(err, errlen, "server.maxBodyBytes: expected a size >= 0");
		return -EINVAL;
	}
	for (size_t i = 0; i < n_routes; i++) {
		if (!routes[i].path || !routes[i].fn) {
			snprintf(err, errlen, "route %zu: path and handler are required", i);
			return -EINVAL;
		}
	}
	struct rf_http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->listen_fd = -1;
	s->routes = routes;
	s->n_routes = n_routes;
	s->max_body = (uint64_t)o->max_body_bytes > SIZE_MAX - 1 ? SIZE_MAX - 1
								 : (size_t)o->max_body_bytes;
	s->timeout_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : 1000;
	s->max_buffered = o->max_buffered_bytes > 0 ? o->max_buffered_bytes : 0;
	s->tls = o->tls;
	s->token = o->token;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	if (o->access && n_routes && (s->access = malloc(n_routes * sizeof(*s->access))))
		memcpy(s->access, o->access, n_routes * sizeof(*s->access));
	if (o->access && n_routes && !s->access) {
		free_server(s);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->route_list = rf_http_describe_routes(routes, n_routes);
	if (!s->route_list) {
		free_server(s);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}

	int family = AF_UNSPEC;
	int r = rf_http_listen_on(o->listen, &s->listen_fd, &family, err, errlen);
	if (r < 0) {
		free_server(s);
		return r;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(s->listen_fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			s->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			s->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}

	unsigned threads = o->threads;
	if (threads == 0) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		threads = ncpu < 1 ? 1 : ncpu > 4 ? 4 : (unsigned)ncpu;
	}
	int64_t tmo_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : 1000;
	int64_t tmo_s64 = (tmo_ms + 999) / 1000;
	unsigned int tmo_s = tmo_s64 < 1 ? 1u : tmo_s64 > 86400 ? 86400u : (unsigned int)tmo_s64;

	unsigned int conn_limit =
		o->max_connections ? o->max_connections : RF_HTTP_CONNECTION_LIMIT;
	set_limits(s, o);

	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	if (family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* HTTPS: the certificate callback and its friends (tls.c) */
	static const struct MHD_OptionItem no_tls[] = { { MHD_OPTION_END, 0, NULL } };
	const struct MHD_OptionItem *tls_opts = no_tls;
	if (o->tls) {
		flags |= MHD_USE_TLS;
		tls_opts = rf_tls_mhd_options(o->tls);
	}

	if (threads > 1)
		s->daemon = MHD_start_daemon(
			flags, 0, NULL, NULL, rf_http_access_handler, s, MHD_OPTION_EXTERNAL_LOGGER,
			mhd_logger, NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd,
			MHD_OPTION_CONNECTION_TIMEOUT, tmo_s, MHD_OPTION_CONNECTION_LIMIT,
			conn_limit, MHD_OPTION_CONNECTION_MEMORY_LIMIT, RF_HTTP_CONNECTION_MEMORY,
			MHD_OPTION_NOTIFY_COMPLETED, rf_http_request_completed, s,
			MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)threads, MHD_OPTION_ARRAY,
			s->limits, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
	else
		s->daemon = MHD_start_daemon(
			flags, 0, NULL, NULL, rf_http_access_handler, s, MHD_OPTION_EXTERNAL_LOGGER,
			mhd_logger, NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd,
			MHD_OPTION_CONNECTION_TIMEOUT, tmo_s, MHD_OPTION_CONNECTION_LIMIT,
			conn_limit, MHD_OPTION_CONNECTION_MEMORY_LIMIT, RF_HTTP_CONNECTION_MEMORY,
			MHD_OPTION_NOTIFY_COMPLETED, rf_http_request_completed, s, MHD_OPTION_ARRAY,
			s->limits, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
	if (!s->daemon) {
		snprintf(err, errlen, "cannot start the HTTP server on \"%s\" (libmicrohttpd)",
			 o->listen);
		close(s->listen_fd);
		free_server(s);
		return -EIO;
	}
	int e = pthread_create(&s->reaper, NULL, rf_http_reaper, s);
	if (e) {
		snprintf(err, errlen, "cannot start the HTTP server's reaper thread: %s",
			 strerror(e));
		rf_http_stop(s);
		return -e;
	}
	s->reaper_started = true;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (di && di->port)
		s->port = di->port;
	*ret = s;
	return 0;
}

uint16_t
rf_http_port(const struct rf_http_server *s)
{
	return s ? s->port : 0;
}

void
rf_http_stop(struct rf_http_server *s)
{
	if (!s)
		return;
	if (s->reaper_started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->reaper, NULL);
	}
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	/* MHD closes a listen socket it was given along with the daemon. */
	free_server(s);
}
