// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * `svodctl demo`: the short scripted session `make demo` shows. Lists the
 * tiers, allocates, resolves, frees, shows the freed handle refused with
 * ESTALE, then starts a holder process and shows it in `svodctl top`.
 * Every step says what it did and whether the result was the expected one;
 * the exit status is 0 only if all were.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "svodctl.h"

#define HOLDER_BYTES_1	(4ULL << 20)
#define HOLDER_BYTES_2	(64ULL << 10)

static int failures;

static void step(const char *what)
{
	printf("\n== %s\n", what);
	fflush(stdout);
}

static void expect(int cond, const char *what)
{
	printf("-> %s: %s\n", what, cond ? "as expected" : "UNEXPECTED");
	fflush(stdout);
	if (!cond)
		failures++;
}

/* The holder: its own open file, two allocations, held until the pipe closes. */
static void holder(uint32_t tier, int ready_fd, int release_fd)
{
	struct svod_alloc a, b;
	char c = 1;
	int fd;

	prctl(PR_SET_NAME, "svod-holder");
	fd = svod_open();
	if (fd < 0 || svod_alloc(fd, tier, HOLDER_BYTES_1, 0, &a) ||
	    svod_alloc(fd, tier, HOLDER_BYTES_2, 0, &b))
		c = 0;
	if (write(ready_fd, &c, 1) != 1)
		_exit(1);
	while (read(release_fd, &c, 1) > 0)
		;
	_exit(0);
}

static void demo_holder(int fd, const struct svod_tier_info *t)
{
	int ready[2], release[2];
	struct svod_tier_info now;
	char *top_argv[] = { "top", NULL };
	char ok = 0;
	pid_t pid;

	step("a second process (svod-holder) allocates 4 MiB + 64 KiB and keeps them");
	if (pipe(ready) || pipe(release)) {
		expect(0, "pipes for the holder");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* Only the holder's own open file should show up under its pid. */
		close(fd);
		close(ready[0]);
		close(release[1]);
		holder(t->id, ready[1], release[0]);
	}
	close(ready[1]);
	close(release[0]);
	if (pid < 0 || read(ready[0], &ok, 1) != 1)
		ok = 0;
	printf("holder pid %d\n", (int)pid);
	expect(ok, "holder allocated");

	step("svodctl top: who holds what");
	optind = 0;
	svodctl_cmd_top(1, top_argv);
	step("svodctl tiers: the holder's bytes are in use");
	svodctl_print_tiers(fd);
	expect(!svod_tier_by_id(fd, t->id, &now) &&
	       now.free_bytes == t->free_bytes - HOLDER_BYTES_1 - HOLDER_BYTES_2,
	       "free bytes dropped by exactly 4 MiB + 64 KiB");

	step("the holder exits: its open file is released, its bytes return");
	close(release[1]);
	close(ready[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	svodctl_print_tiers(fd);
	expect(!svod_tier_by_id(fd, t->id, &now) && now.free_bytes == t->free_bytes,
	       "free bytes back to where they were");
}

/**
 * svodctl_cmd_demo() - `svodctl demo`
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread.
 * Return: 0 if every step gave the expected result, else 1.
 */
int svodctl_cmd_demo(int argc, char **argv)
{
	struct svod_tier_info t;
	struct svod_resolve r;
	struct svod_alloc a;
	int fd, ret;

	if (svodctl_no_opts(argc, argv, &ret))
		return ret;
	if (optind != argc)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = svodctl_session_fd();
	if (fd < 0)
		return svodctl_open_err(argv[0], fd);

	step("svodctl tiers: the tiers of every bound device");
	ret = svodctl_print_tiers(fd);
	if (ret)
		return svodctl_err(argv[0], ret, NULL);
	ret = svod_query_tiers(fd, &t, 1, NULL);
	if (ret <= 0)
		return svodctl_err(argv[0], ret ? ret : -ENODEV, "(no tier)");

	step("alloc 1 MiB in the first tier");
	ret = svod_alloc(fd, t.id, 1 << 20, 0, &a);
	if (ret)
		return svodctl_err("alloc", ret, "%u", t.id);
	printf("handle 0x%" PRIx64 " at device address 0x%" PRIx64 ", %" PRIu64 " bytes\n",
	       (uint64_t)a.handle, (uint64_t)a.device_addr, (uint64_t)a.capacity);
	expect(a.capacity == 1 << 20, "capacity is the size asked for");

	step("resolve the handle");
	ret = svod_resolve(fd, a.handle, &r);
	if (!ret)
		printf("handle 0x%" PRIx64 " -> tier %u, device address 0x%" PRIx64
		       ", %" PRIu64 " bytes\n", (uint64_t)a.handle, r.tier,
		       (uint64_t)r.device_addr, (uint64_t)r.capacity);
	else
		svodctl_err("resolve", ret, "0x%" PRIx64, (uint64_t)a.handle);
	expect(!ret && r.device_addr == a.device_addr && r.tier == t.id,
	       "resolves to the allocation");

	step("free it, then try the old handle again");
	ret = svod_free(fd, a.handle);
	printf("free 0x%" PRIx64 ": %s\n", (uint64_t)a.handle, ret ? svod_errno_name(ret) : "ok");
	ret = svod_resolve(fd, a.handle, &r);
	if (ret)
		svodctl_err("resolve", ret, "0x%" PRIx64, (uint64_t)a.handle);
	fflush(stderr);
	expect(ret == -ESTALE, "the stale handle is refused with ESTALE");
	ret = svod_free(fd, a.handle);
	if (ret)
		svodctl_err("free", ret, "0x%" PRIx64, (uint64_t)a.handle);
	fflush(stderr);
	expect(ret == -ESTALE, "a double free is refused with ESTALE");

	svod_tier_by_id(fd, t.id, &t);
	demo_holder(fd, &t);

	printf("\ndemo: %s\n", failures ? "FAILED" : "every step as expected");
	return failures ? 1 : 0;
}
