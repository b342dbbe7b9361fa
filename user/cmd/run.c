// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* run: the agent (agent/agent.c), the one command that stays running. */
#include "commands.h"
#include "agent/agent.h"

int cmd_run(int argc, char **argv)
{
	return bt_agent_main(argc, argv);
}
