/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's --web-config: the Prometheus exporter-toolkit's web
 * configuration file (YAML), the part of it bloomtap implements:
 *
 *   tls_server_config:
 *     cert_file: server.crt       # PEM; relative to the file's directory
 *     key_file: server.key
 *   basic_auth_users:
 *     prometheus: $2b$10$...     # bcrypt, checked with crypt(3)
 *
 * Anything else in it is an error, never silently ignored: a setting the
 * operator believes in and the agent does not apply is the worst case. */
#ifndef BLOOMTAP_WEBCONFIG_H
#define BLOOMTAP_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BT_WEB_MAX_USERS 64

struct bt_web_user {
	char *name;
	char *hash;		/* bcrypt: $2a$, $2b$ or $2y$ */
	/* HMAC-SHA-256 under a per-process random key of the last password
	 * that matched: a scrape a second would otherwise cost a bcrypt
	 * (tens of ms) each */
	uint8_t ok_mac[32];
	bool ok_valid;
};

struct bt_web_cfg {
	char *path;
	char *cert_pem, *key_pem;	/* NULL without TLS */
	size_t cert_len, key_len;
	/* GnuTLS priorities from tls_server_config's min_version and
	 * cipher_suites: TLS 1.2 and 1.3, AEAD suites with ECDHE only, the
	 * Prometheus exporter toolkit's defaults, unless they narrow them */
	char priorities[512];
	struct bt_web_user users[BT_WEB_MAX_USERS];
	int nusers;
};

/* Reads and checks path: the YAML, the certificate and key (parsed by
 * GnuTLS, and matching), each user's hash (crypt(3) must take it). 0, or
 * -errno with a message in err naming the file and the key. */
int bt_web_config_load(const char *path, struct bt_web_cfg *w, char *err, size_t errlen);
void bt_web_config_free(struct bt_web_cfg *w);
/* The hash an unknown user's password is checked against: the dearest
 * user's (bcrypt's cost, the 2^cost rounds of its "$2b$NN$"), so that a
 * wrong password costs a name that is no user what it costs the dearest
 * user; NULL without users. */
const char *bt_web_dummy_hash(const struct bt_web_cfg *w);
/* Whether user and password match an entry: 1, or 0. Thread-safe: the
 * bcrypt runs outside the cache's lock. When the answer needs a bcrypt
 * (anything but a password already checked) and may_bcrypt is false,
 * -EAGAIN without running it. A 0 has cost at least a bcrypt at the
 * highest cost among the users: an unknown name's is checked against
 * bt_web_dummy_hash(), a known user's wrong password against its own
 * hash and, when that is cheaper, the dummy too. */
int bt_web_auth(struct bt_web_cfg *w, const char *user, const char *password, bool may_bcrypt);
/* Called with each hash bt_web_auth runs a bcrypt against, before it
 * runs; NULL (the agent's) for none: the unit tests see which hashes a
 * check cost without timing it. */
extern void (*bt_web_bcrypt_hook)(const char *hash);

#endif /* BLOOMTAP_WEBCONFIG_H */
