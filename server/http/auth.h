/* Who may call a route (DESIGN section 4, README "Threat model"): the verbs need a verified client
 * certificate when the server has a client CA (server.tls.clientCAFile); the debug routes need the
 * bearer token of server.debugTokenFile or a verified client certificate when either is configured;
 * health, readiness, metrics and version stay open (kubelet and Prometheus send neither).
 *
 * The token file is read again when it changes (a Secret volume's ..data swap), at most once a
 * second; tokens are compared in constant time. Threads: rf_token_check() from any thread. */
#ifndef RF_SERVER_AUTH_H
#define RF_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>

enum rf_http_access {
	RF_HTTP_OPEN = 0, /* anyone who reaches the port */
	RF_HTTP_CLIENT,   /* a verified client certificate, when the server has a client CA */
	RF_HTTP_OPERATOR, /* the bearer token or a verified client certificate, when configured */
};

struct rf_token;

/** Read the token file (surrounding whitespace trimmed; empty is an error naming key). */
int rf_token_new(const char *path, const char *key, struct rf_token **ret, char *err,
		 size_t errlen);
void rf_token_free(struct rf_token *t);

/** Does an Authorization header value ("Bearer <token>") carry the token? NULL is no. */
bool rf_token_check(struct rf_token *t, const char *authorization);

/**
 * 0 when the request may go on, else the HTTP status to answer (401) with a reason in detail.
 * have_client_ca: the server verifies client certificates; peer_verified: this connection's
 * client presented one that verified; token: NULL when the server has none.
 */
int rf_http_access_check(enum rf_http_access a, bool have_client_ca, bool peer_verified,
			 struct rf_token *token, const char *authorization, char *detail,
			 size_t detail_len);

#endif
