/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by the libFuzzer targets. */
#ifndef BLOOMTAP_FUZZ_H
#define BLOOMTAP_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

/* bloomtap's messages about bad input are expected, not findings: point
 * the stderr stream elsewhere, but leave fd 2 alone, where libFuzzer's own
 * stream (opened before this runs) and the sanitizers' reports write.
 * BT_FUZZ_VERBOSE=1 keeps the messages. */
static inline void fuzz_quiet(void)
{
	FILE *null;

	if (!getenv("BT_FUZZ_VERBOSE") && (null = fopen("/dev/null", "w")))
		stderr = null;
}

#endif /* BLOOMTAP_FUZZ_H */
