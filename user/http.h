/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's HTTP side (libmicrohttpd): /metrics, /healthz,
 * /api/v1/heavy, /api/v1/trace. */
#ifndef BLOOMTAP_HTTP_H
#define BLOOMTAP_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct agent;
struct MHD_Daemon;

struct MHD_Daemon *bt_http_start(struct agent *a, const char *listen, char *err, size_t errlen);
void bt_http_stop(struct MHD_Daemon *d);
/* 0 when s is ADDR:PORT; *loopback says whether ADDR is. */
int bt_listen_check(const char *s, bool *loopback);
/* 0 when nothing listens on s here (a bind would take it), else -errno
 * (-EADDRINUSE: another process has it). */
int bt_listen_free(const char *s);

#endif /* BLOOMTAP_HTTP_H */
