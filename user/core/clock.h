/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The datapath's clock (CLOCK_BOOTTIME: window times) and the one people
 * read (CLOCK_REALTIME: archive files, answers). */
#ifndef BLOOMTAP_CLOCK_H
#define BLOOMTAP_CLOCK_H

#include <linux/types.h>

/* CLOCK_BOOTTIME (the datapath's window times) to CLOCK_REALTIME ns. */
__u64 bt_boot_to_real(__u64 boot_ns);
/* The offset bt_boot_to_real adds. */
__s64 bt_real_minus_boot(void);
__u64 bt_boot_ns(void);

#endif /* BLOOMTAP_CLOCK_H */
