/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* An archive's files as a trace's sources (trace_archive.c). */
#ifndef BLOOMTAP_TRACE_ARCHIVE_H
#define BLOOMTAP_TRACE_ARCHIVE_H

#include "trace_search.h"

/* The batch's packets searched in t->archive's files whose windows
 * overlap the batch's times, newest first, leaving out the windows the
 * live ring answered; a damaged file is named once and skipped. */
void trace_query_archive(struct trace_ctx *t);

#endif /* BLOOMTAP_TRACE_ARCHIVE_H */
