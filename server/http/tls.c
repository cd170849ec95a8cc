/* HTTPS credentials for libmicrohttpd (see tls.h).
 *
 * Owns: the credentials loaded from server.tls.* (a certificate chain, its key, the client CA
 * trust list) as one `struct creds`, the current one and those it replaced (kept until
 * RF_TLS_RETIRE_S has passed), and the files' stat stamps. The lock guards all of it; it is held
 * while files are read again after a change, which happens rarely and takes a millisecond.
 *
 * The process-wide pointer `the_tls` is how GnuTLS' certificate callback (which has no user
 * argument; libmicrohttpd keeps the session pointer for itself) finds the context. */
#include "server/http/tls.h"

#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <microhttpd.h>

#include "server/http/log.h"

#define MAX_CHAIN     16
#define MAX_PEERS     16
#define MAX_PEM_BYTES ((size_t)1 << 20)
#define CHECK_EVERY_S 1.0

struct creds {
	gnutls_pcert_st pcerts[MAX_CHAIN];
	unsigned n_pcerts;
	gnutls_privkey_t key;
	gnutls_x509_trust_list_t trust; /* NULL without a client CA */
	double retired_at;              /* monotonic seconds; 0 while current */
	struct creds *next;             /* in the retired list */
};

struct stamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int err; /* errno of stat(), 0 = ok */
};

enum { F_CERT, F_KEY, F_CA, F_COUNT };

struct rf_tls {
	char *files[F_COUNT]; /* F_CA may be NULL */
	pthread_mutex_t lock;
	struct creds *cur;
	struct creds *retired;
	struct stamp stamps[F_COUNT];
	double last_check;
	unsigned reloads;
	struct MHD_OptionItem opts[2];
};

static const char *const keys[F_COUNT] = { "server.tls.certFile", "server.tls.keyFile",
					   "server.tls.clientCAFile" };

static _Atomic(struct rf_tls *) the_tls;

static double
mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
creds_free(struct creds *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->n_pcerts; i++)
		gnutls_pcert_deinit(&c->pcerts[i]);
	if (c->key)
		gnutls_privkey_deinit(c->key);
	if (c->trust)
		gnutls_x509_trust_list_deinit(c->trust, 1);
	free(c);
}

/* The whole file, NUL-terminated, in *ret (bounded by MAX_PEM_BYTES). */
static int
read_pem(const char *path, const char *key, gnutls_datum_t *ret, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot open '%s': %s", key, path, strerror(e));
		return -e;
	}
	unsigned char *buf = malloc(MAX_PEM_BYTES + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, MAX_PEM_BYTES + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || n > MAX_PEM_BYTES) {
		free(buf);
		snprintf(err, errlen, "%s: cannot read '%s'%s", key, path,
			 bad ? "" : ": larger than 1 MiB");
		return bad ? -EIO : -EINVAL;
	}
	buf[n] = 0;
	ret->data = buf;
	ret->size = (unsigned)n;
	return 0;
}

/* Do key and certificate hold the same public key? */
static bool
key_matches(gnutls_privkey_t key, gnutls_pubkey_t cert_pub)
{
	unsigned char a[64], b[64];
	size_t al = sizeof(a), bl = sizeof(b);
	gnutls_pubkey_t pub = NULL;
	bool same = false;
	if (gnutls_pubkey_init(&pub) < 0)
		return false;
	if (gnutls_pubkey_import_privkey(pub, key, 0, 0) == 0 &&
	    gnutls_pubkey_get_key_id(pub, 0, a, &al) == 0 &&
	    gnutls_pubkey_get_key_id(cert_pub, 0, b, &bl) == 0)
		same = al == bl && memcmp(a, b, al) == 0;
	gnutls_pubkey_deinit(pub);
	return same;
}

/* Read the three files into fresh credentials. */
static int
creds_load(char *const files[F_COUNT], struct creds **ret, char *err, size_t errlen)
{
	gnutls_datum_t pem[F_COUNT] = { { 0 } };
	struct creds *c = calloc(1, sizeof(*c));
	int r = -ENOMEM, g;
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < F_COUNT; i++)
		if (files[i] && (r = read_pem(files[i], keys[i], &pem[i], err, errlen)) < 0)
			goto fail;
	r = -EINVAL;
	c->n_pcerts = MAX_CHAIN;
	g = gnutls_pcert_list_import_x509_raw(c->pcerts, &c->n_pcerts, &pem[F_CERT],
					      GNUTLS_X509_FMT_PEM, 0);
	if (g < 0 || c->n_pcerts == 0) {
		c->n_pcerts = 0;
		snprintf(err, errlen, "%s: '%s' holds no PEM certificate GnuTLS can read: %s",
			 keys[F_CERT], files[F_CERT],
			 g < 0 ? gnutls_strerror(g) : "no CERTIFICATE block");
		goto fail;
	}
	if ((g = gnutls_privkey_init(&c->key)) < 0 ||
	    (g = gnutls_privkey_import_x509_raw(c->key, &pem[F_KEY], GNUTLS_X509_FMT_PEM, NULL,
						0)) < 0) {
		snprintf(err, errlen, "%s: '%s' holds no unencrypted PEM private key: %s",
			 keys[F_KEY], files[F_KEY], gnutls_strerror(g));
		goto fail;
	}
	if (!key_matches(c->key, c->pcerts[0].pubkey)) {
		snprintf(err, errlen,
			 "%s: the key in '%s' does not belong to the certificate in '%s'",
			 keys[F_KEY], files[F_KEY], files[F_CERT]);
		goto fail;
	}
	if (files[F_CA]) {
		if ((g = gnutls_x509_trust_list_init(&c->trust, 0)) < 0) {
			c->trust = NULL;
			r = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		g = gnutls_x509_trust_list_add_trust_mem(c->trust, &pem[F_CA], NULL,
							 GNUTLS_X509_FMT_PEM, 0, 0);
		if (g <= 0) {
			snprintf(err, errlen, "%s: '%s' holds no PEM CA certificate: %s",
				 keys[F_CA], files[F_CA],
				 g < 0 ? gnutls_strerror(g) : "none found");
			goto fail;
		}
	}
	for (int i = 0; i < F_COUNT; i++)
		free(pem[i].data);
	*ret = c;
	return 0;
fail:
	for (int i = 0; i < F_COUNT; i++)
		free(pem[i].data);
	creds_free(c);
	return r;
}

static void
stamp_files(char *const files[F_COUNT], struct stamp out[F_COUNT])
{
	for (int i = 0; i < F_COUNT; i++) {
		struct stat st;
		memset(&out[i], 0, sizeof(out[i]));
		if (!files[i])
			continue;
		if (stat(files[i], &st) < 0) {
			out[i].err = errno;
			continue;
		}
		out[i].dev = st.st_dev;
		out[i].ino = st.st_ino;
		out[i].size = st.st_size;
		out[i].mtime = st.st_mtim;
	}
}

static bool
stamps_equal(const struct stamp *a, const struct stamp *b)
{
	return a->err == b->err && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* At most once a second: when a file changed, load the credentials again. A load that fails
 * (cert-manager writing the certificate before the key) keeps the current ones and is tried
 * again at the next change. */
static void
maybe_reload(struct rf_tls *t)
{
	double now = mono_now();
	pthread_mutex_lock(&t->lock);
	if (now - t->last_check < CHECK_EVERY_S) {
		pthread_mutex_unlock(&t->lock);
		return;
	}
	t->last_check = now;
	while (t->retired && now - t->retired->retired_at > RF_TLS_RETIRE_S) {
		/* the list is newest first: free from the old end */
		struct creds **pp = &t->retired;
		while ((*pp)->next)
			pp = &(*pp)->next;
		creds_free(*pp);
		*pp = NULL;
	}
	struct stamp st[F_COUNT];
	stamp_files(t->files, st);
	bool same = true;
	for (int i = 0; i < F_COUNT; i++)
		same = same && stamps_equal(&st[i], &t->stamps[i]);
	if (same) {
		pthread_mutex_unlock(&t->lock);
		return;
	}
	memcpy(t->stamps, st, sizeof(st));
	char err[512];
	struct creds *c = NULL;
	int r = creds_load(t->files, &c, err, sizeof(err));
	if (r < 0) {
		pthread_mutex_unlock(&t->lock);
		rf_warn("cannot load the changed TLS files; serving with the previous ones", "err",
			err);
		return;
	}
	t->cur->retired_at = now;
	t->cur->next = t->retired;
	t->retired = t->cur;
	t->cur = c;
	char n[16];
	snprintf(n, sizeof(n), "%u", ++t->reloads);
	pthread_mutex_unlock(&t->lock);
	rf_info("loaded the changed TLS files", "certFile", t->files[F_CERT], "reloads", n);
}

static struct creds *
current(struct rf_tls *t)
{
	pthread_mutex_lock(&t->lock);
	struct creds *c = t->cur;
	pthread_mutex_unlock(&t->lock);
	return c;
}

/* Runs at the end of the handshake, when the client sent its Certificate message. */
static int
verify_peer(gnutls_session_t session)
{
	struct rf_tls *t = atomic_load(&the_tls);
	unsigned n = 0;
	const gnutls_datum_t *peers = gnutls_certificate_get_peers(session, &n);
	if (!peers || n == 0)
		return 0; /* none presented: the routes that need one refuse the request */
	if (!t)
		return GNUTLS_E_CERTIFICATE_ERROR;
	gnutls_x509_trust_list_t trust = current(t)->trust;
	if (!trust)
		return GNUTLS_E_CERTIFICATE_ERROR;
	gnutls_x509_crt_t crts[MAX_PEERS];
	unsigned nc = 0;
	int rc = GNUTLS_E_CERTIFICATE_ERROR;
	const char *why = "cannot parse the certificate";
	char reason[256] = "";
	if (n > MAX_PEERS) {
		why = "too many certificates in the chain";
		goto out;
	}
	for (; nc < n; nc++) {
		if (gnutls_x509_crt_init(&crts[nc]) < 0)
			goto out;
		if (gnutls_x509_crt_import(crts[nc], &peers[nc], GNUTLS_X509_FMT_DER) < 0) {
			nc++;
			goto out;
		}
	}
	gnutls_typed_vdata_st purpose = { .type = GNUTLS_DT_KEY_PURPOSE_OID,
					  .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT };
	unsigned status = 0;
	int g = gnutls_x509_trust_list_verify_crt2(trust, crts, nc, &purpose, 1, 0, &status, NULL);
	if (g == 0 && status == 0) {
		rc = 0;
		goto out;
	}
	gnutls_datum_t txt = { 0 };
	if (g < 0) {
		why = gnutls_strerror(g);
	} else if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &txt, 0) ==
		   0) {
		snprintf(reason, sizeof(reason), "%s", (const char *)txt.data);
		gnutls_free(txt.data);
		for (size_t l = strlen(reason); l > 0 && reason[l - 1] == ' '; l--)
			reason[l - 1] = 0;
		why = reason;
	} else {
		why = "not signed by server.tls.clientCAFile";
	}
out:
	for (unsigned i = 0; i < nc; i++)
		gnutls_x509_crt_deinit(crts[i]);
	if (rc != 0)
		rf_warn("TLS client certificate rejected", "err", why);
	return rc;
}

/* GnuTLS asks for the server's certificate while it reads the ClientHello: hand over the current
 * one, and ask for the client's (the CertificateRequest goes out later in the same flight). */
static int
retrieve_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
	      const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
	      unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
	(void)req_ca_rdn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	struct rf_tls *t = atomic_load(&the_tls);
	if (!t)
		return -1;
	maybe_reload(t);
	struct creds *c = current(t);
	*pcert = c->pcerts;
	*pcert_length = c->n_pcerts;
	*privkey = c->key;
	if (c->trust) {
		gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
		gnutls_session_set_verify_function(session, verify_peer);
	}
	return 0;
}

int
rf_tls_new(const struct rf_tls_options *o, struct rf_tls **ret, char *err, size_t errlen)
{
	if (!o || !o->cert_file || !*o->cert_file || !o->key_file || !*o->key_file) {
		snprintf(err, errlen, "server.tls: expected certFile and keyFile");
		return -EINVAL;
	}
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
	    MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES) {
		snprintf(err, errlen,
			 "server.tls: this libmicrohttpd was built without HTTPS (GnuTLS) support");
		return -ENOTSUP;
	}
	struct rf_tls *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	int r = -ENOMEM;
	bool ca = o->client_ca_file && *o->client_ca_file;
	if (!(t->files[F_CERT] = strdup(o->cert_file)) ||
	    !(t->files[F_KEY] = strdup(o->key_file)) ||
	    (ca && !(t->files[F_CA] = strdup(o->client_ca_file)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	stamp_files(t->files, t->stamps);
	if ((r = creds_load(t->files, &t->cur, err, errlen)) < 0)
		goto fail;
	t->last_check = mono_now();
	gnutls_certificate_retrieve_function2 *fn = retrieve_cert;
	void *p;
	memcpy(&p, &fn, sizeof(p)); /* MHD_OptionItem carries the callback as a data pointer */
	t->opts[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_CERT_CALLBACK, 0, p };
	t->opts[1] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	struct rf_tls *none = NULL;
	if (!atomic_compare_exchange_strong(&the_tls, &none, t)) {
		snprintf(err, errlen, "server.tls: a TLS context exists already");
		r = -EBUSY;
		goto fail;
	}
	*ret = t;
	return 0;
fail:
	rf_tls_free(t);
	return r;
}

void
rf_tls_free(struct rf_tls *t)
{
	if (!t)
		return;
	struct rf_tls *me = t;
	atomic_compare_exchange_strong(&the_tls, &me, NULL);
	creds_free(t->cur);
	while (t->retired) {
		struct creds *n = t->retired->next;
		creds_free(t->retired);
		t->retired = n;
	}
	for (int i = 0; i < F_COUNT; i++)
		free(t->files[i]);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

bool
rf_tls_wants_client_cert(const struct rf_tls *t)
{
	return t && t->files[F_CA];
}

const void *
rf_tls_mhd_options(const struct rf_tls *t)
{
	return t ? t->opts : NULL;
}

bool
rf_tls_peer_verified(void *mhd_connection)
{
	if (!mhd_connection)
		return false;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		(struct MHD_Connection *)mhd_connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	unsigned n = 0;
	/* a presented certificate that did not verify failed the handshake (verify_peer) */
	return gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n) && n > 0;
}

unsigned
rf_tls_reloads(const struct rf_tls *t)
{
	if (!t)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&t->lock);
	unsigned n = t->reloads;
	pthread_mutex_unlock((pthread_mutex_t *)&t->lock);
	return n;
}
