/* HTTPS for the HTTP front end (server.tls, DESIGN section 4): libmicrohttpd's GnuTLS support with
 * the server certificate handed over per handshake, so that files rotated on disk (cert-manager,
 * a Secret volume's ..data swap) take effect without a restart, and client certificates verified
 * against server.tls.clientCAFile by railfit itself (the CA file is rotated the same way).
 *
 * A handshake whose client presents a certificate that does not verify fails (TLS alert); a
 * client that presents none completes the handshake, and rf_tls_peer_verified() tells routes that
 * require one (the verbs) to refuse it, so that kubelet probes and Prometheus, which send none,
 * still reach /healthz, /readyz and /metrics on the same port.
 *
 * Threads: rf_tls_new()/rf_tls_free() on the main thread; the callbacks run on MHD threads and
 * take the context's lock only to look at the files (at most once a second) and swap credentials.
 * Superseded credentials are freed RF_TLS_RETIRE_S seconds later (handshakes still using them
 * have long finished) or with the context. One context per process (GnuTLS' certificate callback
 * carries no user pointer); several servers may share it. */
#ifndef RF_SERVER_TLS_H
#define RF_SERVER_TLS_H

#include <stdbool.h>
#include <stddef.h>

#define RF_TLS_RETIRE_S 600

struct rf_tls_options {
	const char *cert_file;      /* PEM, the server certificate (and its chain) */
	const char *key_file;       /* PEM, its private key */
	const char *client_ca_file; /* PEM CA bundle; NULL or "" = no client certificates */
};

struct rf_tls;

/**
 * Load the files (the key must match the certificate). -EINVAL (with a message naming the
 * configuration key and what is wrong), -ENOENT/-EACCES (file), -EBUSY (a context exists already),
 * -ENOTSUP (libmicrohttpd built without TLS) or -ENOMEM.
 */
int rf_tls_new(const struct rf_tls_options *o, struct rf_tls **ret, char *err, size_t errlen);

/** Free; accepts NULL. Only after every server using it has stopped. */
void rf_tls_free(struct rf_tls *t);

/** Whether client certificates are requested and verified (clientCAFile set). */
bool rf_tls_wants_client_cert(const struct rf_tls *t);

/**
 * The libmicrohttpd options that turn a daemon started with MHD_USE_TLS into t's HTTPS server: an
 * array of struct MHD_OptionItem ending with MHD_OPTION_END, for MHD_OPTION_ARRAY. Borrowed from t.
 */
const void *rf_tls_mhd_options(const struct rf_tls *t);

/**
 * Whether the client of this connection (struct MHD_Connection *) presented a certificate that
 * verified against the client CA at the handshake. false on a plain-HTTP connection.
 */
bool rf_tls_peer_verified(void *mhd_connection);

/** How many times the certificate files were loaded again after a change (for tests and logs). */
unsigned rf_tls_reloads(const struct rf_tls *t);

#endif
