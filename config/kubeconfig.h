/* kubeconfig files and in-cluster configuration (DESIGN section 3, reference/kube-watch.md
 * sections 10 and 11), turned into the one set of connection facts railfit's API client needs.
 *
 * rf_kubeconfig_parse() reads a kubeconfig document (YAML or JSON) with libyaml, picks the context
 * (an explicit one, else current-context), resolves its cluster and user, decodes the base64
 * `*-data` fields and resolves relative file paths against the kubeconfig's directory, as
 * client-go does. Only what railfit supports is accepted; anything it cannot honour (exec and
 * auth-provider plugins, a CA together with insecure-skip-tls-verify, a certificate without its
 * key) is an error naming the field. Unknown keys are ignored (kubeconfigs carry many fields
 * railfit does not use). Pure logic, no I/O: reading the files is the caller's business. */
#ifndef RF_CONFIG_KUBECONFIG_H
#define RF_CONFIG_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

/** The resolved connection facts. Every pointer is owned (NULL when not set). */
struct rf_kubeconfig {
	char *context;      /* the context used, "" for in-cluster */
	char *cluster_name; /* "" for in-cluster */
	char *user_name;    /* "" for in-cluster */
	char *namespace;    /* the context's namespace, or NULL */

	char *server; /* "https://host:6443" or "http://127.0.0.1:8001" (no trailing slash) */
	char *tls_server_name;
	char *proxy_url;
	bool insecure_skip_tls_verify;
	char *ca_file;          /* PEM file */
	unsigned char *ca_data; /* PEM bytes (decoded certificate-authority-data) */
	size_t ca_data_len;

	char *client_cert_file;
	unsigned char *client_cert_data; /* PEM bytes */
	size_t client_cert_data_len;
	char *client_key_file;
	unsigned char *client_key_data; /* PEM bytes */
	size_t client_key_data_len;

	char *token;      /* a static bearer token */
	char *token_file; /* re-read periodically and after a 401; wins over token when readable */
	char *username;   /* basic auth */
	char *password;
};

/**
 * Parse a kubeconfig document.
 * @param base_dir directory relative paths are resolved against (the file's directory), or NULL to
 *        keep them as written.
 * @param context the context to use; NULL or "" = current-context.
 * On success *ret is filled (the caller releases it); on failure it is untouched and err holds a
 * message naming the field, e.g. `users[name="admin"].user.exec: exec credential plugins are not
 * supported; use a token, tokenFile or client certificate`.
 * @return 0, -EINVAL or -ENOMEM.
 */
int rf_kubeconfig_parse(const char *buf, size_t len, const char *base_dir, const char *context,
			struct rf_kubeconfig *ret, char *err, size_t errlen);

/**
 * The in-cluster configuration as client-go's InClusterConfig builds it: server
 * "https://HOST:PORT" (IPv6 hosts bracketed), token file "<sa_dir>/token", CA file
 * "<sa_dir>/ca.crt". No file is read here.
 * @return 0, -EINVAL (empty host or port, with a message) or -ENOMEM.
 */
int rf_kubeconfig_in_cluster(const char *host, const char *port, const char *sa_dir,
			     struct rf_kubeconfig *ret, char *err, size_t errlen);

/** Free what *kc owns (secrets are wiped first) and zero it. Accepts a zeroed struct. */
void rf_kubeconfig_release(struct rf_kubeconfig *kc);

/**
 * Decode standard base64 (Go's []byte in JSON/YAML): padding optional, CR/LF/space ignored.
 * *ret is malloc'd with a NUL after the data (not counted in *ret_len).
 * @return 0, -EINVAL (not base64) or -ENOMEM.
 */
int rf_base64_decode(const char *in, size_t len, unsigned char **ret, size_t *ret_len);

#endif
