// SPDX-License-Identifier: GPL-2.0
/*
 * plan_gen SEED EVENTS: print a generated network schedule (gen.h) in the
 * trace format of `svodctl plan`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gen.h"

int main(int argc, char **argv)
{
	struct svod_plan_event *ev;
	uint32_t n, i, max;

	if (argc != 3) {
		fprintf(stderr, "usage: plan_gen SEED EVENTS\n");
		return 2;
	}
	max = (uint32_t)strtoul(argv[2], NULL, 0);
	if (max < 16) {
		fprintf(stderr, "plan_gen: EVENTS must be at least 16\n");
		return 2;
	}
	ev = calloc(max, sizeof(*ev));
	if (!ev)
		return 1;
	n = plan_gen_network(strtoull(argv[1], NULL, 0), max, ev);
	printf("# plan_gen seed %s: %u events\n", argv[1], n);
	for (i = 0; i < n; i++) {
		if (ev[i].op == SVOD_PLAN_ALLOC)
			printf("alloc %u %llu %llu\n", ev[i].id, (unsigned long long)ev[i].size,
			       (unsigned long long)ev[i].align);
		else
			printf("free %u\n", ev[i].id);
	}
	free(ev);
	return 0;
}
