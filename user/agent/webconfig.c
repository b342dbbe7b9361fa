// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* --web-config: the exporter-toolkit's file, read with libyaml, the
 * certificate checked with GnuTLS (the library libmicrohttpd serves TLS
 * with), passwords with libxcrypt's crypt(3). */
#include <crypt.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <yaml.h>
#include "webconfig.h"

#define PEM_MAX (1 << 20)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t mac_key[32];
static bool mac_key_set;

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

/* A file named in the config, relative to the config's directory as the
 * exporter-toolkit has it; read whole, NUL-terminated. */
static int read_named(const char *config, const char *name, char **out, size_t *len,
		      char *err, size_t errlen)
{
	char path[PATH_MAX];
	const char *slash = strrchr(config, '/');
	FILE *f;
	char *buf;
	size_t n;

	if (name[0] == '/' || !slash)
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - config), config, name);
	if (!(f = fopen(path, "r")))
		return fail(err, errlen, -errno, "%s: %s: %s", config, path, strerror(errno));
	buf = malloc(PEM_MAX + 1);
	n = buf ? fread(buf, 1, PEM_MAX + 1, f) : 0;
	fclose(f);
	if (!buf)
		return fail(err, errlen, -ENOMEM, "out of memory");
	if (n > PEM_MAX) {
		free(buf);
		return fail(err, errlen, -EFBIG, "%s: %s: over 1 MiB, not a PEM file", config, path);
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* The certificate (the first of the file's chain) and the key parse, and
 * belong together: the same public key. Parsed object by object, not
 * through a credentials structure (GnuTLS 3.7's leaks a certificate when
 * the key does not match). */
static int check_tls(struct bt_web_cfg *w, char *err, size_t errlen)
{
	gnutls_datum_t cert = { (unsigned char *)w->cert_pem, w->cert_len };
	gnutls_datum_t key = { (unsigned char *)w->key_pem, w->key_len };
	unsigned char cid[64], kid[64];
	size_t clen = sizeof(cid), klen = sizeof(kid);
	gnutls_x509_crt_t *crts = NULL;
	gnutls_x509_privkey_t pk = NULL;
	unsigned int n = 0;
	int rc;

	rc = gnutls_x509_crt_list_import2(&crts, &n, &cert, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0 || !n) {
		snprintf(err, errlen, "%s: tls_server_config: the certificate does not parse: %s",
			 w->path, rc < 0 ? gnutls_strerror(rc) : "no certificate in the file");
		rc = -EINVAL;
		goto out;
	}
	if ((rc = gnutls_x509_privkey_init(&pk)) < 0 ||
	    (rc = gnutls_x509_privkey_import2(pk, &key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(err, errlen, "%s: tls_server_config: the key does not parse: %s", w->path,
			 gnutls_strerror(rc));
		rc = -EINVAL;
		goto out;
	}
	if (gnutls_x509_crt_get_key_id(crts[0], 0, cid, &clen) < 0 ||
	    gnutls_x509_privkey_get_key_id(pk, 0, kid, &klen) < 0 || clen != klen ||
	    memcmp(cid, kid, clen)) {
		snprintf(err, errlen, "%s: tls_server_config: the key is not the certificate's",
			 w->path);
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
out:
	for (unsigned int i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	if (pk)
		gnutls_x509_privkey_deinit(pk);
	return rc;
}

/* crypt(3) takes the hash as its own setting: a hash it cannot parse gives
 * NULL (crypt_rn), never a match. */
static bool bcrypt_ok(const char *hash)
{
	struct crypt_data cd = { 0 };

	return (!strncmp(hash, "$2a$", 4) || !strncmp(hash, "$2b$", 4) ||
		!strncmp(hash, "$2y$", 4)) &&
	       crypt_rn("", hash, &cd, sizeof(cd)) && cd.output[0] == '$';
}

/* htpasswd -nB prints USER:HASH: a value of that form, a name without
 * '$' then ":$2", is its whole line pasted */
static bool htpasswd_line(const char *v)
{
	const char *colon = strchr(v, ':');

	return colon && colon > v && !memchr(v, '$', colon - v) && !strncmp(colon + 1, "$2", 2);
}

static const char *scalar(yaml_document_t *d, yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The exporter toolkit's names (Go's) of the TLS 1.2 suites bloomtap
 * offers, as GnuTLS's key exchange and cipher: AEAD with ECDHE only. */
static const struct suite {
	const char *go, *kx, *cipher;
} suites[] = {
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA", "CHACHA20-POLY1305" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305" },
};

/* Appends "+item" to buf unless it is there already. */
static void add_item(char *buf, size_t len, const char *item)
{
	char want[64];

	snprintf(want, sizeof(want), ":+%s:", item);
	if (!strstr(buf, want) && strlen(buf) + strlen(want) < len)
		snprintf(buf + strlen(buf), len - strlen(buf), "+%s:", item);
}

/* min_version (TLS12, TLS13) and cipher_suites (a list of suites' names)
 * as GnuTLS priorities. Go applies cipher_suites to TLS 1.2 alone; with
 * GnuTLS the ciphers chosen bound TLS 1.3's too. */
static int tls_priorities(yaml_document_t *d, const char *min, yaml_node_t *list,
			  struct bt_web_cfg *w, char *err, size_t errlen)
{
	char kx[128] = ":", ciphers[128] = ":";
	const char *vers = "+VERS-TLS1.3:+VERS-TLS1.2";

	if (min && !strcmp(min, "TLS13"))
		vers = "+VERS-TLS1.3";
	else if (min && strcmp(min, "TLS12"))
		return fail(err, errlen, -EINVAL, "%s: tls_server_config: min_version %s: bloomtap "
			    "offers TLS12 or TLS13 (TLS 1.0 and 1.1 are never offered)", w->path, min);
	if (!list) {	/* every suite of the table: the toolkit's default */
		for (size_t j = 0; j < sizeof(suites) / sizeof(suites[0]); j++) {
			add_item(kx, sizeof(kx), suites[j].kx);
			add_item(ciphers, sizeof(ciphers), suites[j].cipher);
		}
	} else if (list->type != YAML_SEQUENCE_NODE || list->data.sequence.items.start ==
		   list->data.sequence.items.top) {
		return fail(err, errlen, -EINVAL, "%s: tls_server_config: cipher_suites: a list "
			    "of suites' names", w->path);
	} else {
		for (yaml_node_item_t *i = list->data.sequence.items.start;
		     i < list->data.sequence.items.top; i++) {
			const char *name = scalar(d, yaml_document_get_node(d, *i));
			const struct suite *s = NULL;

			for (size_t j = 0; name && j < sizeof(suites) / sizeof(suites[0]) && !s; j++)
				if (!strcmp(name, suites[j].go))
					s = &suites[j];
			if (!s)
				return fail(err, errlen, -EINVAL, "%s: tls_server_config: cipher_suites: "
					    "%s is not offered by bloomtap (AEAD suites with ECDHE "
					    "only: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, ...)",
					    w->path, name ? name : "?");
			add_item(kx, sizeof(kx), s->kx);
			add_item(ciphers, sizeof(ciphers), s->cipher);
		}
	}
	/* kx and ciphers begin with ':' and end with ':' */
	kx[strlen(kx) - 1] = 0;
	ciphers[strlen(ciphers) - 1] = 0;
	snprintf(w->priorities, sizeof(w->priorities), "NORMAL:-VERS-ALL:%s:-CIPHER-ALL%s:"
		 "-MAC-ALL:+AEAD:-KX-ALL%s", vers, ciphers, kx);
	return 0;
}

static int load_tls(yaml_document_t *d, yaml_node_t *m, struct bt_web_cfg *w, char *err,
		    size_t errlen)
{
	const char *cert = NULL, *key = NULL, *min = NULL;
	yaml_node_t *list = NULL;
	int rc;

	if (m->type != YAML_MAPPING_NODE)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config: expected cert_file and "
			    "key_file", w->path);
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(d, yaml_document_get_node(d, p->key));
		yaml_node_t *vn = yaml_document_get_node(d, p->value);
		const char *v = scalar(d, vn);

		if (k && !strcmp(k, "cipher_suites")) {
			list = vn;
			continue;
		}
		if (!k || !v)
			return fail(err, errlen, -EINVAL, "%s: tls_server_config: every entry is "
				    "'name: value'", w->path);
		if (!strcmp(k, "cert_file"))
			cert = v;
		else if (!strcmp(k, "key_file"))
			key = v;
		else if (!strcmp(k, "min_version"))
			min = v;
		else
			return fail(err, errlen, -EINVAL, "%s: tls_server_config: %s is not "
				    "supported by bloomtap (cert_file, key_file, min_version and "
				    "cipher_suites are)", w->path, k);
	}
	if (!cert || !key || !*cert || !*key)
		return fail(err, errlen, -EINVAL, "%s: tls_server_config needs both cert_file and "
			    "key_file", w->path);
	if ((rc = tls_priorities(d, min, list, w, err, errlen)))
		return rc;
	if ((rc = read_named(w->path, cert, &w->cert_pem, &w->cert_len, err, errlen)) ||
	    (rc = read_named(w->path, key, &w->key_pem, &w->key_len, err, errlen)))
		return rc;
	return check_tls(w, err, errlen);
}

static int load_users(yaml_document_t *d, yaml_node_t *m, struct bt_web_cfg *w, char *err,
		      size_t errlen)
{
	if (m->type != YAML_MAPPING_NODE)
		return fail(err, errlen, -EINVAL, "%s: basic_auth_users: expected 'user: bcrypt "
			    "hash' lines", w->path);
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *u = scalar(d, yaml_document_get_node(d, p->key));
		const char *h = scalar(d, yaml_document_get_node(d, p->value));

		if (!u || !h || !*u || strchr(u, ':'))
			return fail(err, errlen, -EINVAL, "%s: basic_auth_users: every entry is "
				    "'user: bcrypt hash', the user without ':'", w->path);
		if (!bcrypt_ok(h) && htpasswd_line(h))
			return fail(err, errlen, -EINVAL, "%s: basic_auth_users: %s: the value is "
				    "htpasswd's whole line, USER:HASH: paste only the part after "
				    "'%.*s:'", w->path, u, (int)(strchr(h, ':') - h), h);
		if (!bcrypt_ok(h))
			return fail(err, errlen, -EINVAL, "%s: basic_auth_users: %s: not a bcrypt "
				    "hash ($2b$...; make one with htpasswd -nBC 10 USER)", w->path, u);
		for (int i = 0; i < w->nusers; i++)
			if (!strcmp(w->users[i].name, u))
				return fail(err, errlen, -EINVAL, "%s: basic_auth_users: %s twice",
					    w->path, u);
		if (w->nusers == BT_WEB_MAX_USERS)
			return fail(err, errlen, -E2BIG, "%s: basic_auth_users: at most %d", w->path,
				    BT_WEB_MAX_USERS);
		w->users[w->nusers].name = strdup(u);
		w->users[w->nusers].hash = strdup(h);
		if (!w->users[w->nusers++].hash || !w->users[w->nusers - 1].name)
			return fail(err, errlen, -ENOMEM, "out of memory");
	}
	return 0;
}

int bt_web_config_load(const char *path, struct bt_web_cfg *w, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	FILE *f;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (!(w->path = strdup(path)))
		return fail(err, errlen, -ENOMEM, "out of memory");
	if (!(f = fopen(path, "r"))) {
		rc = fail(err, errlen, -errno, "--web-config %s: %s", path, strerror(errno));
		bt_web_config_free(w);
		return rc;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = fail(err, errlen, -EINVAL, "%s:%zu: not YAML: %s", path,
			  parser.problem_mark.line + 1, parser.problem ? parser.problem : "?");
		yaml_parser_delete(&parser);
		fclose(f);
		bt_web_config_free(w);
		return rc;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE)
		rc = fail(err, errlen, -EINVAL, "%s: expected tls_server_config and "
			  "basic_auth_users", path);
	for (yaml_node_pair_t *p = root && !rc ? root->data.mapping.pairs.start : NULL;
	     p && !rc && p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar(&doc, yaml_document_get_node(&doc, p->key));
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);

		if (k && !strcmp(k, "tls_server_config"))
			rc = load_tls(&doc, v, w, err, errlen);
		else if (k && !strcmp(k, "basic_auth_users"))
			rc = load_users(&doc, v, w, err, errlen);
		else
			rc = fail(err, errlen, -EINVAL, "%s: %s is not supported by bloomtap "
				  "(tls_server_config and basic_auth_users are)", path, k ? k : "?");
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (rc)
		bt_web_config_free(w);
	return rc;
}

void bt_web_config_free(struct bt_web_cfg *w)
{
	for (int i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
	}
	free(w->cert_pem);
	if (w->key_pem)
		explicit_bzero(w->key_pem, w->key_len);
	free(w->key_pem);
	free(w->path);
	memset(w, 0, sizeof(*w));
}

static bool password_mac(const char *password, uint8_t mac[32])
{
	pthread_mutex_lock(&cache_lock);
	if (!mac_key_set)
		mac_key_set = getrandom(mac_key, sizeof(mac_key), 0) == sizeof(mac_key);
	pthread_mutex_unlock(&cache_lock);
	return mac_key_set && !gnutls_hmac_fast(GNUTLS_MAC_SHA256, mac_key, sizeof(mac_key),
						 password, strlen(password), mac);
}

/* A bcrypt hash's cost: "$2b$12$..." is 12 (load_users checked the form) */
static int bcrypt_cost(const char *hash)
{
	return atoi(hash + 4);
}

const char *bt_web_dummy_hash(const struct bt_web_cfg *w)
{
	const char *dearest = NULL;

	for (int i = 0; i < w->nusers; i++)
		if (!dearest || bcrypt_cost(w->users[i].hash) > bcrypt_cost(dearest))
			dearest = w->users[i].hash;
	return dearest;
}

void (*bt_web_bcrypt_hook)(const char *hash);

/* One bcrypt of password against hash into cd (32 KiB: not on a
 * connection thread's stack): whether it matches. */
static bool bcrypt_match(const char *password, const char *hash, struct crypt_data *cd)
{
	bool ok;

	if (bt_web_bcrypt_hook)
		bt_web_bcrypt_hook(hash);
	ok = crypt_rn(password, hash, cd, sizeof(*cd)) && strlen(cd->output) == strlen(hash) &&
	     !gnutls_memcmp(cd->output, hash, strlen(hash));
	explicit_bzero(cd, sizeof(*cd));
	return ok;
}

int bt_web_auth(struct bt_web_cfg *w, const char *user, const char *password, bool may_bcrypt)
{
	const char *dummy = bt_web_dummy_hash(w);
	struct bt_web_user *u = NULL;
	struct crypt_data *cd;
	uint8_t mac[32];
	bool have_mac, ok = false;

	for (int i = 0; i < w->nusers && !u; i++)
		if (!strcmp(w->users[i].name, user))
			u = &w->users[i];
	have_mac = u && password_mac(password, mac);
	pthread_mutex_lock(&cache_lock);
	ok = have_mac && u->ok_valid && !gnutls_memcmp(mac, u->ok_mac, sizeof(mac));
	pthread_mutex_unlock(&cache_lock);
	if (ok)
		return 1;
	if (!may_bcrypt)
		return -EAGAIN;
	if (!(cd = calloc(1, sizeof(*cd))))
		return 0;
	/* every failure costs at least a bcrypt at the highest cost among the
	 * users: an unknown name's against the dearest hash, a cheaper
	 * user's wrong password that one too, so that the time tells no
	 * name, cheap or dear */
	if (u)
		ok = bcrypt_match(password, u->hash, cd);
	if (!ok && dummy && (!u || bcrypt_cost(u->hash) < bcrypt_cost(dummy)))
		bcrypt_match(password, dummy, cd);
	free(cd);
	if (ok && have_mac) {
		pthread_mutex_lock(&cache_lock);
		memcpy(u->ok_mac, mac, sizeof(mac));
		u->ok_valid = true;
		pthread_mutex_unlock(&cache_lock);
	}
	return ok;
}
