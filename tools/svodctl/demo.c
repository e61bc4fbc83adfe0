// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * `svodctl demo`: the short scripted session `make demo` shows. Lists the
 * tiers, allocates, resolves, frees, shows the freed handle refused with
 * ESTALE; stages asynchronously and waits on the transfer's fence with
 * poll(); maps an allocation and writes through the mapping; shares it with
 * a second process (a dma-buf fd over a Unix socket, imported there and
 * read back); then starts a holder process and shows it in `svodctl top`.
 * Every step says what it did and whether the result was the expected one;
 * the exit status is 0 only if all were.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "svodctl.h"

#define HOLDER_BYTES_1	(4ULL << 20)
#define HOLDER_BYTES_2	(64ULL << 10)
#define XFER_BYTES	(256u << 10)
#define SHARE_BYTES	(64u << 10)

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

/* A byte of the demo's pattern: differs from its neighbours and from 0. */
static uint8_t pattern(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 31 + seed) | 1;
}

static int bytes_match(const uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(i, seed))
			return 0;
	return 1;
}

/* An asynchronous STAGE with a sync_file fence, waited for with poll(). */
static void demo_async(int fd, const struct svod_tier_info *t)
{
	static uint8_t src[XFER_BYTES], back[XFER_BYTES];
	struct pollfd p = { .events = POLLIN };
	struct svod_alloc a;
	uint64_t seqno = 0, done = 0;
	int ret, status = 1, fence = -1, before = -1, after = -1;
	size_t i;

	step("stage 256 KiB asynchronously; wait on its fence with poll()");
	for (i = 0; i < sizeof(src); i++)
		src[i] = pattern(i, 1);
	ret = svod_alloc(fd, t->id, sizeof(src), 0, &a);
	if (!ret)
		ret = svod_stage_async(fd, a.handle, 0, src, sizeof(src), 0, &seqno, &fence);
	if (ret) {
		svodctl_err("stage", ret, "asynchronous");
		expect(0, "the asynchronous STAGE is queued");
		return;
	}
	p.fd = fence;
	before = poll(&p, 1, 0);
	printf("queued: timeline value %" PRIu64 ", fence fd %d (%s at once)\n", seqno, fence,
	       before > 0 ? "signalled" : "not signalled");
	after = poll(&p, 1, 60000);
	ret = svod_wait(fd, seqno, 0, &status, &done);
	printf("poll returned %d; WAIT: status %d, %" PRIu64 " bytes moved\n", after, status, done);
	expect(after == 1 && !ret && !status && done == sizeof(src),
	       "the fence signals when every byte is in the BAR");
	ret = svod_read(fd, a.handle, 0, back, sizeof(back), 0, NULL);
	expect(!ret && !memcmp(src, back, sizeof(src)), "READ gives the staged bytes back");
	close(fence);
	svod_free(fd, a.handle);
}

/* The second process: imports the dma-buf it is sent and reads it back. */
static void share_reader(int sock)
{
	static uint8_t back[SHARE_BYTES];
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	struct svod_import im;
	int fd, dmabuf = -1, ok;

	prctl(PR_SET_NAME, "svod-reader");
	if (recvmsg(sock, &msg, 0) == 1 && (c = CMSG_FIRSTHDR(&msg)) &&
	    c->cmsg_type == SCM_RIGHTS)
		memcpy(&dmabuf, CMSG_DATA(c), sizeof(int));
	fd = svod_open();
	ok = fd >= 0 && dmabuf >= 0 && !svod_import(fd, dmabuf, &im) &&
	     !svod_read(fd, im.handle, 0, back, sizeof(back), 0, NULL) &&
	     bytes_match(back, sizeof(back), 2);
	if (ok)
		printf("svod-reader (pid %d): imported handle 0x%" PRIx64 ", read %u bytes\n",
		       (int)getpid(), (uint64_t)im.handle, SHARE_BYTES);
	fflush(stdout);
	_exit(ok ? 0 : 1);
}

/* A mapped allocation, written through the mapping, shared with a reader. */
static void demo_map_share(int fd, const struct svod_tier_info *t)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	static uint8_t back[SHARE_BYTES];
	struct svod_alloc a;
	uint8_t *m = NULL;
	uint64_t size = 0;
	int ret, dmabuf = -1, sv[2], st = -1;
	pid_t pid;
	size_t i;

	step("map 64 KiB into this process and write through the mapping");
	ret = svod_alloc_flags(fd, t->id, SHARE_BYTES, 0, SVOD_ALLOC_MAPPABLE, &a);
	if (!ret)
		ret = svod_map(fd, a.handle, (void **)&m, &size);
	if (ret) {
		svodctl_err("map", ret, "%u", t->id);
		expect(0, "the allocation is mapped");
		return;
	}
	for (i = 0; i < SHARE_BYTES; i++)
		m[i] = pattern(i, 2);
	ret = svod_read(fd, a.handle, 0, back, sizeof(back), 0, NULL);
	printf("mapped %" PRIu64 " bytes at %p; READ through the handle: %s\n", size, (void *)m,
	       ret ? svod_errno_name(ret) : "ok");
	expect(!ret && bytes_match(back, sizeof(back), 2),
	       "the stores are in the device's memory");

	step("share it: export a dma-buf, send it to a second process, which imports and reads it");
	ret = svod_export(fd, a.handle, 0, &dmabuf, NULL);
	if (ret || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		svodctl_err("export", ret ? ret : -errno, "0x%" PRIx64, (uint64_t)a.handle);
		expect(0, "the allocation is exported");
		goto out;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		share_reader(sv[1]);
	}
	close(sv[1]);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &dmabuf, sizeof(int));
	if (pid > 0 && sendmsg(sv[0], &msg, 0) == 1 && waitpid(pid, &st, 0) == pid)
		st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	close(sv[0]);
	printf("dma-buf fd %d sent; the reader exited with %d\n", dmabuf, st);
	expect(st == 0, "the second process read the bytes written through the mapping");
	close(dmabuf);
out:
	svod_unmap(m, size);
	svod_free(fd, a.handle);
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

	demo_async(fd, &t);
	demo_map_share(fd, &t);
	svod_tier_by_id(fd, t.id, &t);
	demo_holder(fd, &t);

	printf("\ndemo: %s\n", failures ? "FAILED" : "every step as expected");
	return failures ? 1 : 0;
}
