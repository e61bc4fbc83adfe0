// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tools/plan/plan: `svodctl plan` without the rest of svodctl, for the
 * host-side tests (same code: tools/svodctl/cmd_plan.c).
 */
#include "svodctl.h"

int main(int argc, char **argv)
{
	return svodctl_cmd_plan(argc, argv);
}
