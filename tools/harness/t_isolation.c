// SPDX-License-Identifier: GPL-2.0
/*
 * t_isolation: the open file is the unit of isolation. Two processes with
 * their own open files cannot resolve or free each other's handles (-ESTALE,
 * even with the same slots live on both sides); a process that dies, even
 * by SIGKILL, gives its bytes back; an open file shared by fork(), dup() or
 * SCM_RIGHTS shares its handle table (documented behaviour) and is released
 * at its last close.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	19
#define NR_H		4

static int fd = -1;
static struct svod_tier_info tier;

static uint64_t tier_free(void)
{
	uint64_t f = 0;

	ht_tier_usage(fd, tier.id, &f, NULL);
	return f;
}

struct child_report {
	uint64_t h[NR_H];
	uint32_t bad_resolve;
	uint32_t bad_free;
	uint32_t bad_forged;
	uint32_t setup_errors;
};

static int is_own(const uint64_t *own, uint64_t h)
{
	unsigned int i;

	for (i = 0; i < NR_H; i++)
		if (own[i] == h)
			return 1;
	return 0;
}

/* Child side of test_cross(): its own open file, the same slots live. */
static void cross_child(int in, int out)
{
	struct child_report rep = {};
	struct svod_resolve r;
	struct svod_alloc a;
	uint64_t theirs[NR_H];
	unsigned int i;
	int cfd, k;
	char go;

	cfd = ht_open();
	for (i = 0; i < NR_H; i++) {
		if (cfd < 0 || svod_alloc(cfd, tier.id, 4096, 0, &a))
			rep.setup_errors++;
		else
			rep.h[i] = a.handle;
	}
	if (ht_read_all(in, theirs, sizeof(theirs)))
		_exit(2);
	for (i = 0; i < NR_H; i++) {
		rep.bad_resolve += svod_resolve(cfd, theirs[i], &r) != -ESTALE;
		rep.bad_free += svod_free(cfd, theirs[i]) != -ESTALE;
		for (k = -64; k <= 64; k++) {
			uint64_t h = theirs[i] + (uint64_t)(int64_t)k;

			if (!is_own(rep.h, h) && svod_resolve(cfd, h, &r) != -ESTALE)
				rep.bad_forged++;
		}
	}
	if (ht_write_all(out, &rep, sizeof(rep)) || ht_read_all(in, &go, 1))
		_exit(2);
	for (i = 0; i < NR_H; i++)
		if (svod_resolve(cfd, rep.h[i], &r))
			_exit(1);
	_exit(0);
}

static void test_cross(void)
{
	int p2c[2], c2p[2], status, ok;
	struct child_report rep = {};
	uint64_t mine[NR_H] = {};
	struct svod_resolve r;
	struct svod_alloc a;
	unsigned int i, bad_resolve = 0, bad_free = 0;
	pid_t pid;

	for (i = 0; i < NR_H; i++)
		if (!svod_alloc(fd, tier.id, 4096, 0, &a))
			mine[i] = a.handle;
	if (pipe(p2c) || pipe(c2p)) {
		tap_diag("pipe failed");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p2c[1]);
		close(c2p[0]);
		cross_child(p2c[0], c2p[1]);
	}
	close(p2c[0]);
	close(c2p[1]);
	ok = pid > 0 && !ht_write_all(p2c[1], mine, sizeof(mine)) &&
	     !ht_read_all(c2p[0], &rep, sizeof(rep)) && !rep.setup_errors;
	if (!ok)
		tap_diag("child setup failed (%u setup errors)", rep.setup_errors);
	tap_ok(ok && rep.bad_resolve == 0, "child_resolve_parent_handles_estale (%u wrong)",
	       rep.bad_resolve);
	tap_ok(ok && rep.bad_free == 0, "child_free_parent_handles_estale (%u wrong)",
	       rep.bad_free);
	tap_ok(ok && rep.bad_forged == 0,
	       "child_forged_neighbours_of_parent_handles_estale (%u wrong of %u)",
	       rep.bad_forged, NR_H * 129);
	for (i = 0; i < NR_H; i++) {
		bad_resolve += svod_resolve(fd, rep.h[i], &r) != -ESTALE;
		bad_free += svod_free(fd, rep.h[i]) != -ESTALE;
	}
	tap_ok(ok && bad_resolve == 0, "parent_resolve_child_handles_estale (%u wrong)",
	       bad_resolve);
	tap_ok(ok && bad_free == 0, "parent_free_child_handles_estale (%u wrong)", bad_free);
	ok = 1;
	for (i = 0; i < NR_H; i++)
		ok &= svod_resolve(fd, mine[i], &r) == 0;
	tap_ok(ok, "parent_handles_survive_foreign_attempts");
	ht_write_all(p2c[1], "g", 1);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(status == 0, "child_handles_survive_foreign_attempts (child status %d)", status);
	close(p2c[1]);
	close(c2p[0]);
	for (i = 0; i < NR_H; i++)
		svod_free(fd, mine[i]);
}

/* A child that allocates @n MiB in its own file, reports, then waits or exits. */
static pid_t holder(unsigned int n, int exit_at_once, int *ready_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct svod_alloc a;
		unsigned int i;
		char ok = 1;
		int cfd;

		close(p[0]);
		cfd = ht_open();
		for (i = 0; i < n; i++)
			if (cfd < 0 || svod_alloc(cfd, tier.id, 1 << 20, 0, &a))
				ok = 0;
		if (write(p[1], &ok, 1) != 1 || exit_at_once)
			_exit(0);
		for (;;)
			pause();
	}
	close(p[1]);
	*ready_fd = p[0];
	return pid;
}

static void test_death(void)
{
	uint64_t base = tier_free();
	int rfd = -1, waited, status;
	char ok = 0;
	pid_t pid;

	pid = holder(8, 0, &rfd);
	if (pid < 0 || read(rfd, &ok, 1) != 1)
		ok = 0;
	tap_ok(ok && tier_free() == base - (8 << 20), "killed_child_bytes_counted");
	if (pid > 0) {
		kill(pid, SIGKILL);
		status = ht_wait_exit(pid);
		if (status != 128 + SIGKILL)
			tap_diag("holder status %d", status);
	}
	close(rfd);
	waited = ht_wait_free(fd, tier.id, base, 2000);
	tap_ok(waited >= 0, "sigkill_child_bytes_back (after %d ms)", waited);

	pid = holder(3, 1, &rfd);
	if (pid < 0 || read(rfd, &ok, 1) != 1)
		ok = 0;
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	close(rfd);
	waited = ht_wait_free(fd, tier.id, base, 2000);
	tap_ok(ok && status == 0 && waited >= 0,
	       "exit_without_close_bytes_back (after %d ms)", waited);
}

static void test_fork_shares(void)
{
	struct svod_resolve r;
	struct svod_alloc a = {};
	int status;
	pid_t pid;

	svod_alloc(fd, tier.id, 4096, 0, &a);
	pid = fork();
	if (pid == 0)
		_exit(svod_resolve(fd, a.handle, &r) || r.device_addr != a.device_addr ||
		      svod_free(fd, a.handle) ? 1 : 0);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(status == 0, "fork_child_resolves_and_frees_parent_handle (status %d)", status);
	tap_errno(svod_resolve(fd, a.handle, &r), -ESTALE,
		  "fork_parent_sees_child_free_estale");
}

static int send_fd(int sock, int sfd, uint64_t h)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sfd, sizeof(int));
	return sendmsg(sock, &msg, 0) == sizeof(h) ? 0 : -1;
}

static int recv_fd(int sock, uint64_t *h)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = h, .iov_len = sizeof(*h) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int rfd;

	if (recvmsg(sock, &msg, 0) != sizeof(*h))
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&rfd, CMSG_DATA(c), sizeof(int));
	return rfd;
}

static void test_scm_rights(void)
{
	uint64_t base = tier_free(), h = 0;
	struct svod_resolve r;
	int sv[2], rfd = -1, status, waited;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		tap_diag("socketpair failed");
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct svod_alloc a;
		int cfd = ht_open();
		char go;

		close(sv[0]);
		if (cfd < 0 || svod_alloc(cfd, tier.id, 1 << 20, 0, &a) ||
		    send_fd(sv[1], cfd, a.handle) || read(sv[1], &go, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	if (pid > 0)
		rfd = recv_fd(sv[0], &h);
	tap_ok(rfd >= 0 && svod_resolve(rfd, h, &r) == 0 && r.capacity == 1 << 20,
	       "scm_rights_received_file_resolves_sender_handle");
	tap_errno(svod_resolve(fd, h, &r), -ESTALE, "scm_rights_own_file_still_isolated");
	if (write(sv[0], "g", 1) != 1)
		tap_diag("release write failed");
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(status == 0 && tier_free() == base - (1 << 20) &&
	       svod_resolve(rfd, h, &r) == 0,
	       "scm_rights_file_outlives_sender (status %d)", status);
	if (rfd >= 0)
		close(rfd);
	waited = ht_wait_free(fd, tier.id, base, 2000);
	tap_ok(waited >= 0, "scm_rights_last_close_releases (after %d ms)", waited);
	close(sv[0]);
}

static void test_dup(void)
{
	struct svod_resolve r;
	struct svod_alloc a = {};
	int d, ok;

	svod_alloc(fd, tier.id, 4096, 0, &a);
	d = dup(fd);
	ok = d >= 0 && svod_resolve(d, a.handle, &r) == 0;
	if (d >= 0)
		close(d);
	ok = ok && svod_resolve(fd, a.handle, &r) == 0 && svod_free(fd, a.handle) == 0;
	tap_ok(ok, "dup_shares_table_and_close_of_dup_keeps_it");
}

struct storm_shared {
	uint64_t latest[2];	/* shared between the two processes: __atomic */
	uint32_t bad[2];
	uint32_t errors[2];
};

static void cross_storm(struct storm_shared *sh, int me, unsigned int iters)
{
	struct svod_resolve r;
	struct svod_alloc a;
	uint64_t theirs;
	unsigned int i;
	int sfd = ht_open();

	for (i = 0; i < iters; i++) {
		if (sfd < 0 || svod_alloc(sfd, tier.id, 4096, 0, &a)) {
			sh->errors[me]++;
			continue;
		}
		__atomic_store_n(&sh->latest[me], a.handle, __ATOMIC_RELAXED);
		theirs = __atomic_load_n(&sh->latest[!me], __ATOMIC_RELAXED);
		if (theirs && svod_resolve(sfd, theirs, &r) != -ESTALE)
			sh->bad[me]++;
		if (svod_free(sfd, a.handle))
			sh->errors[me]++;
	}
}

static void test_concurrent(void)
{
	struct storm_shared *sh;
	int status;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		tap_diag("mmap failed");
		return;
	}
	pid = fork();
	if (pid == 0) {
		cross_storm(sh, 1, 400);
		_exit(0);
	}
	cross_storm(sh, 0, 400);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(status == 0 && !sh->bad[0] && !sh->bad[1] && !sh->errors[0] && !sh->errors[1],
	       "concurrent_cross_attempts_estale (wrong %u/%u, errors %u/%u)",
	       sh->bad[0], sh->bad[1], sh->errors[0], sh->errors[1]);
	munmap(sh, sizeof(*sh));
}

int main(void)
{
	uint64_t base;
	uint32_t live = 1;
	int ret;

	tap_plan(NR_CASES);
	/* A child that died early must fail a case, not kill the parent. */
	signal(SIGPIPE, SIG_IGN);
	fd = ht_open();
	if (fd < 0) {
		tap_diag("open /dev/svod: %s", svod_errno_name(fd));
		return tap_done();
	}
	ret = ht_first_tier(fd, &tier);
	if (ret) {
		tap_diag("no tier: %s", svod_errno_name(ret));
		if (!getenv("SVOD_DEV"))
			return tap_done();
	}
	base = tier_free();
	test_cross();
	test_death();
	test_fork_shares();
	test_scm_rights();
	test_dup();
	test_concurrent();
	ht_tier_usage(fd, tier.id, NULL, &live);
	tap_ok(tier_free() == base && live == 0, "tier_back_to_baseline");
	svod_close(fd);
	return tap_done();
}
