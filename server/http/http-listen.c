/* The listening socket: "host:port", "[v6]:port" or ":port" parsed and bound (":port" on every
 * IPv6 and IPv4 address when the host has IPv6, else on IPv4), non-blocking for MHD. Called once
 * by rf_http_start(). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "server/http/http-private.h"

/* Split "host:port", "[v6]:port" or ":port" into host (may be "") and port. */
static int
split_listen(const char *listen, char *host, size_t hostlen, char *port, size_t portlen)
{
	if (!listen || !*listen)
		return -EINVAL;
	const char *colon;
	const char *h;
	size_t hl;
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		h = listen + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
		if (hl == 0)
			return -EINVAL;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return -EINVAL;
		h = listen;
		hl = (size_t)(colon - listen);
		if (memchr(h, ':', hl)) /* a bare IPv6 address needs brackets */
			return -EINVAL;
	}
	const char *p = colon + 1;
	size_t pl = strlen(p);
	if (pl == 0 || pl >= portlen || hl >= hostlen)
		return -EINVAL;
	for (size_t i = 0; i < pl; i++)
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
	char *end;
	unsigned long v = strtoul(p, &end, 10);
	if (*end || v > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, p, pl + 1);
	return 0;
}

static int
open_listener(const struct addrinfo *ai, bool dual_stack)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual_stack ? &zero : &one, sizeof(int));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, RF_HTTP_BACKLOG) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int
rf_http_listen_on(const char *listen, int *ret_fd, int *ret_family, char *err, size_t errlen)
{
	char host[256], port[16];
	if (split_listen(listen, host, sizeof(host), port, sizeof(port)) < 0) {
		snprintf(err, errlen,
			 "invalid listen address \"%s\": expected host:port, [ipv6]:port or :port",
			 listen ? listen : "");
		return -EINVAL;
	}
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res = NULL;
	bool any = host[0] == '\0';
	if (any)
		hints.ai_family = AF_INET6;
	int gai = getaddrinfo(any ? NULL : host, port, &hints, &res);
	if (gai != 0 && any) {
		hints.ai_family = AF_INET;
		gai = getaddrinfo(NULL, port, &hints, &res);
	}
	if (gai != 0) {
		snprintf(err, errlen, "invalid listen address \"%s\": %s", listen,
			 gai_strerror(gai));
		return -EINVAL;
	}
	int fd = -EADDRNOTAVAIL;
	int family = AF_UNSPEC;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = open_listener(ai, any);
		if (fd >= 0) {
			family = ai->ai_family;
			break;
		}
	}
	freeaddrinfo(res);
	if (fd < 0 && any) {
		/* No IPv6 on this host: all IPv4 interfaces. */
		struct addrinfo h4 = { .ai_family = AF_INET,
				       .ai_socktype = SOCK_STREAM,
				       .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
		if (getaddrinfo(NULL, port, &h4, &res) == 0) {
			for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
				fd = open_listener(ai, false);
				if (fd >= 0) {
					family = ai->ai_family;
					break;
				}
			}
			freeaddrinfo(res);
		}
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on \"%s\": %s", listen, strerror(-fd));
		return fd;
	}
	*ret_fd = fd;
	*ret_family = family;
	return 0;
}
