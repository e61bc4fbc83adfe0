// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * plan_gen SEED EVENTS: print a generated network schedule (gen.h) in the
 * trace format of `svodctl plan`.
 * plan_gen --rect SEED BUFFERS [GRANULE [PINWHEEL_PCT [SHAPE]]]: print a
 * known-optimum instance (rect.h; plan it with --block-size 1), its optimum
 * in a comment line "# optimum N". SHAPE: PLAN_RECT_* flags ORed, 0 to 7
 * (1: the piece to cut picked uniformly, 2: coarse time, 4: slack, few
 * tight steps); 0 by default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "rect.h"

static void print_events(const struct svod_plan_event *ev, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (ev[i].op == SVOD_PLAN_ALLOC)
			printf("alloc %u %llu %llu\n", ev[i].id, (unsigned long long)ev[i].size,
			       (unsigned long long)ev[i].align);
		else
			printf("free %u\n", ev[i].id);
	}
}

static int rect_main(int argc, char **argv)
{
	uint64_t granule = argc > 4 ? strtoull(argv[4], NULL, 0) : 256, opt;
	unsigned int pct = argc > 5 ? (unsigned int)strtoul(argv[5], NULL, 0) : 20;
	unsigned long shape = 0;
	uint32_t nb = (uint32_t)strtoul(argv[3], NULL, 0), n;
	struct svod_plan_event *ev;
	char *end = NULL;

	if (argc > 6) {
		shape = strtoul(argv[6], &end, 0);
		if (!*argv[6] || *end || shape > PLAN_RECT_SHAPES)
			end = NULL;
	}
	if (argc < 4 || argc > 7 || nb < 1 || nb > 1000000 || !granule || (argc > 6 && !end)) {
		fprintf(stderr, "usage: plan_gen --rect SEED BUFFERS [GRANULE [PINWHEEL_PCT "
			"[SHAPE (0-7)]]]\n");
		return 2;
	}
	ev = calloc(2 * (size_t)nb, sizeof(*ev));
	if (!ev)
		return 1;
	n = plan_gen_rect_shape(strtoull(argv[2], NULL, 0), nb, granule, pct, (unsigned int)shape,
				ev, &opt);
	printf("# plan_gen --rect seed %s: %u buffers, shape %lu\n# optimum %llu\n", argv[2],
	       n / 2, shape, (unsigned long long)opt);
	print_events(ev, n);
	free(ev);
	return n ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct svod_plan_event *ev;
	uint32_t n, max;

	if (argc > 1 && !strcmp(argv[1], "--rect"))
		return rect_main(argc, argv);
	if (argc != 3) {
		fprintf(stderr, "usage: plan_gen SEED EVENTS | plan_gen --rect SEED BUFFERS "
			"[GRANULE [PINWHEEL_PCT [SHAPE (0-7)]]]\n");
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
	print_events(ev, n);
	free(ev);
	return 0;
}
