// SPDX-License-Identifier: GPL-2.0
/*
 * Plain randomized differential run (no fuzzer engine): feeds seeded random
 * scripts to the differential driver. Usage: svod-core-random [seed [runs]].
 * A difference aborts with the seed printed first, so it can be replayed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "diff.h"

/* splitmix64: small, seedable, identical everywhere. */
static uint64_t next_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	unsigned long runs = argc > 2 ? strtoul(argv[2], NULL, 0) : 2000;
	unsigned long run, ops = 0;
	uint64_t state = seed;
	static uint8_t buf[8192];
	size_t len, i;

	fprintf(stderr, "# seed %llu, %lu runs\n", (unsigned long long)seed, runs);
	for (run = 0; run < runs; run++) {
		len = next_rand(&state) % sizeof(buf);
		for (i = 0; i < len; i++)
			buf[i] = next_rand(&state);
		svod_core_diff(buf, len);
		ops += svod_diff_ops;
	}
	printf("# %lu runs, %lu operations checked against the model (seed %llu)\n",
	       runs, ops, (unsigned long long)seed);
	return 0;
}
