// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "common.h"
#include "commands.h"
int cmd_demo(int argc, char **argv) { bt_err("demo: not yet"); return 1; }
