// SPDX-License-Identifier: GPL-2.0
/*
 * tools/plan/plan: `svodctl plan` without the rest of svodctl, for the
 * host-side tests (same code: tools/svodctl/cmd_plan.c).
 */
int svodctl_cmd_plan(int argc, char **argv);

int main(int argc, char **argv)
{
	return svodctl_cmd_plan(argc, argv);
}
