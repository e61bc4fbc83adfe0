// SPDX-License-Identifier: GPL-2.0
/*
 * t_mmap: mapping an allocation (SVOD_IOCTL_MAP_OFFSET + mmap()) and its
 * revocation.
 *
 * 1. Bytes written through the mapping are in the BAR at the allocation's
 *    offset (read back through sysfs resource2_wc) and READ returns them;
 *    STAGE is visible through the mapping; fdinfo counts mapped bytes.
 * 2. Every refusal has its errno: stale, foreign and unaligned handles,
 *    bad flags, MAP_PRIVATE, PROT_EXEC, another file's offset, an unknown
 *    offset, a length beyond the allocation, mprotect(PROT_EXEC), growing
 *    mremap(), a mapping as a STAGE buffer.
 * 3. fork(), MADV_DONTFORK, shrinking mremap(), partial munmap(), a
 *    mapping that outlives its fd and /proc/self/mem (ptrace()'s access)
 *    behave as Documentation/uapi.rst says.
 * 4. After FREE, tier replacement and unbind, a child touching the old
 *    mapping dies of SIGBUS, also once another file owns the same range;
 *    threads faulting the mapping while it is freed see SIGBUS and never
 *    the next owner's bytes. With fault injection (test kernel), every
 *    failed allocation of MAP_OFFSET and mmap() is ENOMEM (or EFAULT) and
 *    leaves nothing behind, and every failed allocation (page tables) of the
 *    first read or write of a mapping is retried by the kernel: the access
 *    sees the right bytes, never a signal (Documentation/svod.rst).
 * 5. Figures: memcpy into and out of the svod mapping against the same
 *    range mapped through resource2_wc (and, for reference, inside one
 *    whole-BAR resource2_wc mapping), all at congruent addresses (bench()),
 *    4 KiB to 64 MiB (the whole of the rig's BAR 2; "# bench:" lines):
 *    interquartile means of the times of copies that alternate between the
 *    sides (bench_one()); and the first touch (mmap, memcpy into every
 *    page, munmap) through svod and through resource2_wc.
 * With --manifest, a keeper writes a pattern through a mapping and holds it
 * until power-off, for the host to find in the BAR's backing file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define BENCH_SAMPLES	(1u << 15)
#define BENCH_MIN_S	(bench_debug ? 1.0 : 3.0)
#define BENCH_MIN_SAMPLES	151
#define BENCH_MAX_S	12.0
#define BENCH_FIRST_TOUCH_S	(bench_debug ? 0.3 : 1.0)
#define BENCH_SAMPLE_BYTES	(256u << 10)
/* Beyond the index bits of any TLB, QEMU's softmmu one (2^22 entries) too. */
#define BENCH_SPAN	(1ul << 34)
#define MAX_SIZE	(64u << 20)
#define SZ_2M		(2ul << 20)
/* What one fault of svod's fills at most (driver/mmap.c). */
#define FILL_BYTES	(64ul << 20)
#define RACE_THREADS	4
#define RACE_ROUNDS	20
#define RACE_PAGES	16
#define NEXT_OWNER	0xa5

static const uint32_t sizes[] = {
	4u << 10, 64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20,
};

#define NR_CASES	(63 + ARRAY_SIZE(sizes) * 3)

static int fd = -1;
/*
 * The test kernel (KASAN, lockdep, kmemleak): its copy figures are a debug
 * build's, so each one is timed for at least 1 s (first touch 0.3 s), not
 * 3 s (1 s); the stock boot measures at full length.
 */
static int bench_debug;
static size_t page;
static struct svod_tier_info tier;
static volatile uint8_t *wc;
static uint64_t wc_len;
static int wc_fd = -1;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Maps @len bytes of @f at @off exactly at @addr. Return: 0 or -errno. */
static int map_at(uint8_t *addr, size_t len, int f, uint64_t off)
{
	void *p = mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f, (off_t)off);

	return p == MAP_FAILED ? -errno : p == addr ? 0 : -EFAULT;
}

/* A mappable allocation of @size bytes on @f, mapped whole. */
static int alloc_map(int f, uint64_t size, struct svod_alloc *a, uint8_t **p)
{
	uint64_t len;
	void *addr;
	int ret;

	ret = svod_alloc_flags(f, tier.id, size, 0, SVOD_ALLOC_MAPPABLE, a);
	if (ret)
		return ret;
	ret = svod_map(f, a->handle, &addr, &len);
	if (ret) {
		svod_free(f, a->handle);
		return ret;
	}
	*p = addr;
	return 0;
}

/*
 * Touches @p in a child (a read, and a write if @write). Return: the signal
 * that killed the child, 0 if it survived, -1 if it could not run.
 */
static int touch_in_child(volatile uint8_t *p, int write)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		uint8_t v = p[0];

		if (write)
			p[0] = (uint8_t)(v + 1);
		_exit(0);
	}
	st = ht_wait_exit(pid);
	return st >= 128 ? st - 128 : st ? -1 : 0;
}

static volatile uint8_t *map_resource2_wc(void)
{
	char path[256];
	void *p;
	int rfd;

	if (ht_bar_size(tier.device, 2, &wc_len))
		return NULL;
	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource2_wc", tier.device);
	rfd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (rfd < 0)
		return NULL;
	p = mmap(NULL, wc_len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	if (p == MAP_FAILED) {
		close(rfd);
		return NULL;
	}
	wc_fd = rfd;
	return p;
}

/* The "svod-mapped-<tier>" value of @f's fdinfo, or "" */
static void fdinfo_mapped(int f, char *out, size_t len)
{
	char path[64], line[256], key[SVOD_NAME_LEN + 16];
	FILE *fi;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", f);
	snprintf(key, sizeof(key), "svod-mapped-%s:\t", tier.name);
	fi = fopen(path, "re");
	if (!fi)
		return;
	while (fgets(line, sizeof(line), fi)) {
		if (!strncmp(line, key, strlen(key))) {
			snprintf(out, len, "%.*s", (int)strcspn(line + strlen(key), "\n"),
				 line + strlen(key));
			break;
		}
	}
	fclose(fi);
}

/* An O_RDONLY fd maps read-only MAP_SHARED (VM_MAYSHARE without VM_SHARED). */
static void test_read_only_fd(void)
{
	int ro = open(SVOD_DEV_PATH, O_RDONLY | O_CLOEXEC);
	struct svod_alloc a = {};
	uint8_t buf[16];
	uint64_t off = 0;
	void *p = MAP_FAILED, *w = MAP_FAILED;
	int ret;

	ret = ro < 0 ? -errno : svod_alloc_flags(ro, tier.id, page, 0, SVOD_ALLOC_MAPPABLE, &a);
	memset(buf, 0x77, sizeof(buf));
	ret = ret ? ret : svod_stage(ro, a.handle, 0, buf, sizeof(buf), 0, NULL);
	ret = ret ? ret : svod_map_offset(ro, a.handle, &off, NULL);
	if (!ret) {
		p = mmap(NULL, page, PROT_READ, MAP_SHARED, ro, (off_t)off);
		w = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, ro, (off_t)off);
	}
	tap_ok(!ret && p != MAP_FAILED && !memcmp(p, buf, sizeof(buf)) && w == MAP_FAILED &&
	       errno == EACCES, "read_only_fd_maps_shared_read_only (%s)", svod_errno_name(ret));
	if (p != MAP_FAILED)
		munmap(p, page);
	if (w != MAP_FAILED)
		munmap(w, page);
	if (ro >= 0)
		close(ro);
}

static void test_data(void)
{
	uint8_t buf[8192], back[8192], *p = NULL;
	struct svod_alloc a = {};
	uint64_t off = 0, off2 = 0, size = 0;
	char mapped[64];
	int ret;

	ret = alloc_map(fd, 5000, &a, &p);
	tap_ok(!ret && a.capacity == 2 * page && a.device_addr % page == 0,
	       "alloc_mappable_rounds_to_whole_aligned_pages (%s, capacity %llu)",
	       svod_errno_name(ret), (unsigned long long)a.capacity);
	if (ret)
		return;
	ret = svod_map_offset(fd, a.handle, &off, &size);
	tap_ok(!ret && !svod_map_offset(fd, a.handle, &off2, NULL) && off == off2 &&
	       size == a.capacity, "map_offset_stable_and_sized");

	ht_fill_xorshift(buf, sizeof(buf), 7);
	memcpy(p, buf, sizeof(buf));
	__sync_synchronize();
	ret = svod_read(fd, a.handle, 0, back, sizeof(back), 0, NULL);
	tap_ok(!ret && !memcmp(buf, back, sizeof(back)), "mapping_write_seen_by_read");
	ret = ht_bar2_offset(&tier, a.device_addr, &off);
	tap_ok(!ret && wc && !memcmp(buf, (const void *)(wc + off), sizeof(buf)),
	       "mapping_write_in_bar_at_allocation_offset (bar2 +0x%llx)",
	       (unsigned long long)off);

	ht_fill_xorshift(buf, sizeof(buf), 11);
	ret = svod_stage(fd, a.handle, 0, buf, sizeof(buf), 0, NULL);
	tap_ok(!ret && !memcmp(buf, p, sizeof(buf)), "stage_visible_through_mapping");

	fdinfo_mapped(fd, mapped, sizeof(mapped));
	tap_ok(!strcmp(mapped, "8 KiB"), "fdinfo_counts_mapped_bytes (%s)", mapped);
	ret = svod_stage(fd, a.handle, 0, p, 64, 0, NULL);
	tap_errno(ret, -EFAULT, "mapping_as_stage_buffer_efault");
	test_read_only_fd();
	svod_unmap(p, a.capacity);
	fdinfo_mapped(fd, mapped, sizeof(mapped));
	tap_ok(!strcmp(mapped, "0"), "fdinfo_mapped_zero_after_munmap (%s)", mapped);
	svod_free(fd, a.handle);
}

static void test_refusals(void)
{
	struct svod_map_offset m = {};
	struct svod_alloc a = {}, u = {}, f = {};
	uint64_t off = 0, got = 0;
	int fd2 = ht_open();
	void *p;
	int ret;

	ret = svod_alloc_flags(fd, tier.id, page, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_map_offset(fd, a.handle, &off, NULL);
	if (!tap_ok(!ret && fd2 >= 0, "refusals_setup (%s)", svod_errno_name(ret)))
		return;
	tap_errno(svod_alloc_flags(fd, tier.id, page, 0, 1u << 7, &u), -EINVAL,
		  "alloc_unknown_flag_einval");
	m.handle = a.handle;
	m.flags = 1;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_MAP_OFFSET, &m), -EINVAL, "map_offset_flags_einval");
	m.flags = 0;
	m.pad = 1;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_MAP_OFFSET, &m), -EINVAL, "map_offset_pad_einval");
	tap_errno(svod_map_offset(fd2, a.handle, &got, NULL), -ESTALE,
		  "map_offset_foreign_handle_estale");
	ret = svod_alloc(fd, tier.id, 100, 0, &u);
	tap_errno(ret ? ret : svod_map_offset(fd, u.handle, &got, NULL), -EOPNOTSUPP,
		  "map_offset_unaligned_allocation_eopnotsupp");
	svod_free(fd, u.handle);
	tap_errno(svod_map_offset(fd, u.handle, &got, NULL), -ESTALE,
		  "map_offset_stale_handle_estale");

	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)off);
	tap_errno(p == MAP_FAILED ? -errno : 0, -EINVAL, "mmap_private_einval");
	p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_SHARED, fd, (off_t)off);
	tap_errno(p == MAP_FAILED ? -errno : 0, -EPERM, "mmap_prot_exec_eperm");
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd2, (off_t)off);
	tap_errno(p == MAP_FAILED ? -errno : 0, -EACCES, "mmap_other_files_offset_eacces");
	p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, (off_t)off);
	tap_errno(p == MAP_FAILED ? -errno : 0, -ENXIO, "mmap_beyond_allocation_enxio");
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	tap_errno(p == MAP_FAILED ? -errno : 0, -EINVAL, "mmap_unknown_offset_einval");

	/* Once freed, its offset names nothing, even for a new allocation. */
	svod_free(fd, a.handle);
	ret = svod_alloc_flags(fd, tier.id, page, 0, SVOD_ALLOC_MAPPABLE, &f);
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, (off_t)off);
	tap_errno(p == MAP_FAILED ? -errno : ret, -EINVAL, "mmap_freed_offset_einval");
	svod_free(fd, f.handle);
	close(fd2);
}

static void test_vma_ops(void)
{
	struct svod_alloc a = {};
	uint8_t *p = NULL, *q;
	uint8_t back[4];
	void *r;
	pid_t pid;
	int ret;

	ret = alloc_map(fd, 4 * page, &a, &p);
	if (!tap_ok(!ret, "vma_setup (%s)", svod_errno_name(ret)))
		return;
	memset(p, 0, 4 * page);
	tap_errno(mprotect(p, page, PROT_READ | PROT_EXEC) ? -errno : 0, -EACCES,
		  "mprotect_exec_eacces");
	q = mremap(p, 4 * page, 8 * page, MREMAP_MAYMOVE);
	tap_errno(q == MAP_FAILED ? -errno : 0, -EFAULT, "mremap_grow_efault");

	pid = fork();
	if (!pid) {
		p[1] = 0x42;
		_exit(0);
	}
	ret = pid > 0 ? ht_wait_exit(pid) : -1;
	ret = ret ? -1 : svod_read(fd, a.handle, 1, back, 1, 0, NULL);
	tap_ok(!ret && back[0] == 0x42, "fork_child_shares_mapping");

	/* Shrink in place, then move: the same pages at the new place. */
	q = mremap(p, 4 * page, 3 * page, 0);
	tap_ok(q == p && touch_in_child(p + 3 * page, 0) == SIGSEGV,
	       "mremap_shrink_in_place");
	r = mmap(NULL, 3 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = r == MAP_FAILED ? r : mremap(p, 3 * page, 3 * page,
					 MREMAP_MAYMOVE | MREMAP_FIXED, r);
	tap_ok(q != MAP_FAILED && q == r && q[1] == 0x42, "mremap_move_keeps_pages");
	if (q != MAP_FAILED)
		p = q;

	tap_errno(madvise(p + 2 * page, page, MADV_DONTFORK) ? -errno : 0, 0,
		  "madv_dontfork_accepted");
	ret = touch_in_child(p + 2 * page, 0);
	tap_ok(ret == SIGSEGV && touch_in_child(p, 0) == 0,
	       "madv_dontfork_child_lacks_that_part (sig %d)", ret);

	tap_errno(munmap(p + page, page) ? -errno : 0, 0, "partial_munmap");
	p[0] = 1;
	p[2 * page] = 2;
	ret = svod_read(fd, a.handle, 2 * page, back, 1, 0, NULL);
	tap_ok(!ret && back[0] == 2 && touch_in_child(p + page, 0) == SIGSEGV,
	       "partial_munmap_rest_works_hole_segv");
	munmap(p, page);
	munmap(p + 2 * page, page);
	svod_free(fd, a.handle);
}

/* The mapping keeps the file: close(fd) leaves it working until munmap. */
static void test_outlives_fd(void)
{
	struct svod_alloc a = {};
	uint64_t free0 = 0;
	uint8_t *p = NULL;
	int f = ht_open(), ret, waited;

	ret = f < 0 ? f : ht_tier_usage(fd, tier.id, &free0, NULL);
	ret = ret ? ret : alloc_map(f, page, &a, &p);
	if (!ret) {
		p[0] = 0x5a;
		close(f);
	}
	tap_ok(!ret && p[0] == 0x5a && touch_in_child(p, 1) == 0,
	       "mapping_outlives_its_fd");
	if (ret)
		return;
	svod_unmap(p, page);
	waited = ht_wait_free(fd, tier.id, free0, 5000);
	tap_ok(waited >= 0, "munmap_of_last_mapping_after_close_releases (%d ms)", waited);
}

/* After FREE, a child touching the old mapping dies; so after re-use. */
static void test_free_revokes(void)
{
	struct svod_alloc a = {}, b = {};
	uint8_t buf[64], *p = NULL;
	int fd2 = ht_open(), sig, ret;

	ret = alloc_map(fd, page, &a, &p);
	if (!tap_ok(!ret && fd2 >= 0, "revoke_setup (%s)", svod_errno_name(ret)))
		return;
	p[0] = 1;
	tap_errno(svod_free(fd, a.handle), 0, "free_mapped_allocation");
	sig = touch_in_child(p, 0);
	tap_ok(sig == SIGBUS, "after_free_child_read_sigbus (%d)", sig);
	sig = touch_in_child(p, 1);
	tap_ok(sig == SIGBUS, "after_free_child_write_sigbus (%d)", sig);

	ret = svod_alloc_flags(fd2, tier.id, page, 0, SVOD_ALLOC_MAPPABLE, &b);
	memset(buf, NEXT_OWNER, sizeof(buf));
	ret = ret ? ret : svod_stage(fd2, b.handle, 0, buf, sizeof(buf), 0, NULL);
	sig = touch_in_child(p, 0);
	tap_ok(!ret && b.device_addr == a.device_addr && sig == SIGBUS,
	       "next_owner_at_same_range_not_visible_sigbus (%d)", sig);
	svod_free(fd2, b.handle);
	munmap(p, page);
	close(fd2);
}

/*
 * /proc/self/mem, as ptrace() does, reads and writes a mapping through its
 * vma's .access: a page never touched (faulted in for the read) shows what
 * STAGE wrote, a write shows in READ, a read that starts 64 bytes before
 * the end of a touched mapping stops there (not running on into the next
 * allocation in the BAR), and after FREE a read is EIO and returns no byte.
 */
static void test_proc_mem(void)
{
	int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	uint8_t want[64], got[4096], next[4096], *res;
	struct svod_alloc a = {}, b = {};
	uint64_t off = 0;
	unsigned int k, theirs = 0;
	ssize_t n;
	int ret;

	/* The mapping's page, then a page with nothing mapped. */
	res = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = res == MAP_FAILED || mem < 0 ? -errno : 0;
	ret = ret ? ret : svod_alloc_flags(fd, tier.id, page, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_alloc_flags(fd, tier.id, page, 0, SVOD_ALLOC_MAPPABLE, &b);
	ret = ret ? ret : svod_map_offset(fd, a.handle, &off, NULL);
	ret = ret ? ret : map_at(res, page, fd, off);
	memset(next, NEXT_OWNER, sizeof(next));
	ht_fill_xorshift(want, sizeof(want), 23);
	ret = ret ? ret : svod_stage(fd, b.handle, 0, next, page, 0, NULL);
	ret = ret ? ret : svod_stage(fd, a.handle, 0, want, sizeof(want), 0, NULL);
	ret = ret ? ret : svod_stage(fd, a.handle, page - 64, want, sizeof(want), 0, NULL);
	if (!tap_ok(!ret, "proc_mem_setup (%s, next allocation %sadjacent)", ht_err(ret),
		    b.device_addr == a.device_addr + page ? "" : "not "))
		goto out;
	munmap(res + page, page);

	n = pread(mem, got, sizeof(want), (off_t)(uintptr_t)res);
	tap_ok(n == sizeof(want) && !memcmp(got, want, sizeof(want)),
	       "proc_mem_reads_untouched_mapping (%zd, %s)", n, n < 0 ? strerror(errno) : "");
	/* Touched, so the read finds a PTE without the fault-in. */
	(void)*(volatile uint8_t *)(res + page - 1);
	n = pread(mem, got, sizeof(got), (off_t)(uintptr_t)(res + page - 64));
	for (k = 64; n > 64 && k < (size_t)n; k++)
		theirs += got[k] == NEXT_OWNER;
	tap_ok(n == 64 && !memcmp(got, want, 64),
	       "proc_mem_read_stops_at_mapping_end (%zd bytes, %u of the next allocation)",
	       n, theirs);
	ht_fill_xorshift(want, sizeof(want), 29);
	n = pwrite(mem, want, sizeof(want), (off_t)(uintptr_t)(res + 128));
	ret = svod_read(fd, a.handle, 128, got, sizeof(want), 0, NULL);
	tap_ok(n == sizeof(want) && !ret && !memcmp(got, want, sizeof(want)),
	       "proc_mem_write_seen_by_read (%zd, %s)", n, ht_err(ret));

	ret = svod_free(fd, a.handle);
	a.handle = 0;
	errno = 0;
	n = pread(mem, got, sizeof(want), (off_t)(uintptr_t)res);
	tap_ok(!ret && n < 0 && errno == EIO, "proc_mem_after_free_eio (%zd, %s)", n,
	       strerror(errno));
out:
	if (a.handle)
		svod_free(fd, a.handle);
	if (b.handle)
		svod_free(fd, b.handle);
	if (res != MAP_FAILED)
		munmap(res, 2 * page);
	if (mem >= 0)
		close(mem);
}

/*
 * Revocation between two faults of one mapping: 4 MiB placed across a
 * FILL_BYTES boundary, so that the first touch fills the first half (its
 * window) and leaves the second half to a fault of its own. FREE between
 * the two, the range staged by another file since: a touch of the page
 * faulted before, of another page that fault filled, and of the half never
 * faulted all raise SIGBUS in this process, none shows the next owner.
 */
static void test_revoke_between_faults(void)
{
	size_t len = 2 * SZ_2M, half = SZ_2M;
	uint8_t *res, *p = MAP_FAILED, *buf = malloc(len);
	struct svod_alloc a = {}, b = {};
	int fd2 = ht_open(), ret, s0 = -1, s1 = -1, s2 = -1;
	uint64_t off = 0;

	res = mmap(NULL, 2 * FILL_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	ret = res == MAP_FAILED || !buf || fd2 < 0 ? -ENOMEM :
	      svod_alloc_flags(fd, tier.id, len, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_map_offset(fd, a.handle, &off, NULL);
	if (!ret) {
		/* The boundary inside the reservation, half the mapping below it. */
		p = (uint8_t *)(((uintptr_t)res + FILL_BYTES - 1) & ~(FILL_BYTES - 1)) - half;
		ret = map_at(p, len, fd, off);
	}
	if (!ret) {
		p[0] = 1;
		p[half - page] = 2;
		ret = svod_free(fd, a.handle);
	}
	ret = ret ? ret : svod_alloc_flags(fd2, tier.id, len, 0, SVOD_ALLOC_MAPPABLE, &b);
	if (!ret) {
		memset(buf, NEXT_OWNER, len);
		ret = svod_stage(fd2, b.handle, 0, buf, len, 0, NULL);
	}
	if (!ret) {
		s0 = ht_touch(p, 0);
		s1 = ht_touch(p + half - page, 0);
		s2 = ht_touch(p + half, 0);
	}
	tap_ok(!ret && b.device_addr == a.device_addr && s0 == SIGBUS && s1 == SIGBUS &&
	       s2 == SIGBUS, "revoke_between_two_faults_sigbus (%s; faulted page sig %d, filled page sig %d, unfaulted half sig %d)",
	       ht_err(ret), s0, s1, s2);
	if (b.handle)
		svod_free(fd2, b.handle);
	if (res != MAP_FAILED)
		munmap(res, 2 * FILL_BYTES);
	if (fd2 >= 0)
		close(fd2);
	free(buf);
}

/*
 * One grant mapped twice in one process (and a third time from its second
 * page on): each mapping sees what the others write, the last unmapping of
 * one leaves the others working, and FREE revokes them all.
 */
static void test_map_twice(void)
{
	uint8_t *p = MAP_FAILED, *q = MAP_FAILED, *r = MAP_FAILED;
	struct svod_alloc a = {};
	uint64_t off = 0;
	int ret, same = 0, after = 0, sp = -1, sq = -1;

	ret = svod_alloc_flags(fd, tier.id, 4 * page, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_map_offset(fd, a.handle, &off, NULL);
	if (!ret) {
		p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
		q = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
		r = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 (off_t)(off + page));
		ret = p == MAP_FAILED || q == MAP_FAILED || r == MAP_FAILED ? -errno : 0;
	}
	if (!ret) {
		p[0] = 0x11;
		q[3 * page] = 0x22;
		r[page] = 0x33;
		__sync_synchronize();
		same = q[0] == 0x11 && p[3 * page] == 0x22 && r[2 * page] == 0x22 &&
		       p[2 * page] == 0x33 && q[2 * page] == 0x33;
		munmap(r, 3 * page);
		r = MAP_FAILED;
		p[page] = 0x44;
		after = q[page] == 0x44;
	}
	tap_ok(!ret && same && after, "map_same_grant_twice_shares_bytes (%s)",
	       ht_err(ret));
	if (!ret) {
		ret = svod_free(fd, a.handle);
		sp = ht_touch(p + 3 * page, 0);
		sq = ht_touch(q, 0);
	}
	tap_ok(!ret && sp == SIGBUS && sq == SIGBUS,
	       "map_same_grant_twice_free_revokes_both (%s; sig %d, %d)", ht_err(ret),
	       sp, sq);
	if (p != MAP_FAILED)
		munmap(p, 4 * page);
	if (q != MAP_FAILED)
		munmap(q, 4 * page);
	if (r != MAP_FAILED)
		munmap(r, 3 * page);
}

#define PAT_MEMTYPES	"/sys/kernel/debug/x86/pat_memtype_list"
#define MEMTYPE_MAPS	100000u
#define MEMTYPE_GRANTS	10000u
/* A kernel with kmemleak (the test kernel: KASAN, lockdep) is ~100x slower. */
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"
#define MEMTYPE_DEBUG_DIV	20u

/* Lines of PAT_MEMTYPES (a header, then one reservation each), or -errno. */
static long pat_memtypes(void)
{
	char chunk[4096];
	long lines = 0;
	ssize_t n, i;
	int f = open(PAT_MEMTYPES, O_RDONLY | O_CLOEXEC);

	if (f < 0)
		return -errno;
	while ((n = read(f, chunk, sizeof(chunk))) > 0)
		for (i = 0; i < n; i++)
			lines += chunk[i] == '\n';
	close(f);
	return n < 0 ? -errno : lines;
}

/*
 * No memory type reservation outlives a mapping: PAT's list of them
 * (x86 with PAT, debugfs) has as many lines after MEMTYPE_MAPS rounds of
 * mmap(), a write into its second page and munmap() of one grant, and
 * MEMTYPE_GRANTS rounds of ALLOC, MAP_OFFSET, mmap(), write, munmap() and
 * FREE, as before them (each count MEMTYPE_DEBUG_DIV times smaller on a
 * kernel with kmemleak, to stay within a minute; the counts are printed). The list is seen to count: one more resource2_wc
 * mapping (which reserves its memory type at mmap()) is one more line.
 */
static void test_memtype_no_leak(void)
{
	long before = pat_memtypes(), during = -1, mid = -1, after = -1;
	struct svod_alloc a = {}, g;
	uint64_t off = 0;
	double t0 = now_s(), t1 = 0;
	unsigned int n = 0, m = 0, div = access(KMEMLEAK, F_OK) ? 1 : MEMTYPE_DEBUG_DIV;
	uint8_t *q;
	void *w, *p;
	int ret;

	if (before < 0) {
		tap_skip("no " PAT_MEMTYPES " (no PAT, or no debugfs)",
			 "memtype_list_counts_a_resource2_wc_mapping");
		tap_skip("no " PAT_MEMTYPES " (no PAT, or no debugfs)",
			 "map_unmap_leaves_no_memtype");
		return;
	}
	w = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, wc_fd, 0);
	if (w != MAP_FAILED) {
		during = pat_memtypes();
		munmap(w, page);
	}
	tap_ok(during == before + 1 && pat_memtypes() == before,
	       "memtype_list_counts_a_resource2_wc_mapping (%ld, %ld with it)", before, during);
	ret = svod_alloc_flags(fd, tier.id, 2 * page, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_map_offset(fd, a.handle, &off, NULL);
	for (; !ret && n < MEMTYPE_MAPS / div; n++) {
		p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
		if (p == MAP_FAILED) {
			ret = -errno;
			break;
		}
		((volatile uint8_t *)p)[page] = (uint8_t)n;
		munmap(p, 2 * page);
	}
	if (!ret)
		ret = svod_free(fd, a.handle);
	mid = pat_memtypes();
	t1 = now_s();
	for (; !ret && m < MEMTYPE_GRANTS / div; m++) {
		ret = alloc_map(fd, 2 * page, &g, &q);
		if (ret)
			break;
		((volatile uint8_t *)q)[page] = (uint8_t)m;
		munmap(q, 2 * page);
		ret = svod_free(fd, g.handle);
	}
	after = pat_memtypes();
	tap_ok(!ret && mid == before && after == before,
	       "map_unmap_leaves_no_memtype (%s; %ld lines before, %ld after %u mappings in %.1f s, %ld after %u grants mapped in %.1f s)",
	       ht_err(ret), before, mid, n, t1 - t0, after, m, now_s() - t1);
}

static void test_tier_replacement(void)
{
	char orig[4096], text[4300];
	struct svod_tier_info t2;
	struct svod_alloc a = {}, b = {};
	uint8_t buf[64], *p = NULL;
	int f2 = ht_open(), ret, sig;

	ret = svod_tiers_read(tier.device, orig, sizeof(orig)) < 0 ? -EIO : 0;
	ret = ret ? ret : alloc_map(fd, page, &a, &p);
	if (!tap_ok(!ret && f2 >= 0, "replace_setup (%s)", svod_errno_name(ret)))
		return;
	snprintf(text, sizeof(text), "%s bar=2 offset=0 size=0x%llx align=4096\n",
		 tier.name, (unsigned long long)tier.capacity);
	p[0] = 3;
	ret = svod_tiers_write(tier.device, text);
	tap_ok(ret == -EBUSY && p[0] == 3, "replace_mapped_tier_ebusy_mapping_works (%s)",
	       svod_errno_name(ret));
	svod_free(fd, a.handle);
	ret = svod_tiers_write(tier.device, text);
	ret = ret ? ret : svod_tier_by_device(f2, tier.device, &t2);
	ret = ret ? ret : svod_alloc_flags(f2, t2.id, page, 0, SVOD_ALLOC_MAPPABLE, &b);
	memset(buf, NEXT_OWNER, sizeof(buf));
	ret = ret ? ret : svod_stage(f2, b.handle, 0, buf, sizeof(buf), 0, NULL);
	sig = touch_in_child(p, 0);
	tap_ok(!ret && t2.id != tier.id && b.device_addr == a.device_addr && sig == SIGBUS,
	       "after_tier_replacement_old_mapping_sigbus (%s, sig %d)",
	       svod_errno_name(ret), sig);
	svod_free(f2, b.handle);
	munmap(p, page);

	/* Device base 0x800 at BAR offset 0: no page-aligned range in the BAR. */
	snprintf(text, sizeof(text), "%s bar=2 offset=0 size=0x%llx base=0x800\n",
		 tier.name, (unsigned long long)tier.capacity);
	ret = svod_tiers_write(tier.device, text);
	ret = ret ? ret : svod_tier_by_device(f2, tier.device, &t2);
	ret = ret ? ret : svod_alloc_flags(f2, t2.id, page, 0, SVOD_ALLOC_MAPPABLE, &b);
	tap_errno(ret, -EOPNOTSUPP, "alloc_mappable_in_tier_off_page_eopnotsupp");
	close(f2);
	ret = svod_tiers_write(tier.device, orig);
	ret = ret ? ret : svod_tier_by_device(fd, tier.device, &tier);
	tap_errno(ret, 0, "declaration_restored");
}

struct racer {
	pthread_t thread;
	volatile uint8_t *p;
	unsigned int idx;
	int sigbus;
	int saw_next_owner;
};

static __thread sigjmp_buf racer_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(racer_jmp, 1);
}

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	volatile unsigned int i = 0;

	if (sigsetjmp(racer_jmp, 1)) {
		r->sigbus = 1;
		return NULL;
	}
	for (;; i++) {
		volatile uint8_t *b = r->p + (i % RACE_PAGES) * page + r->idx * 8;

		if (*b == NEXT_OWNER)
			r->saw_next_owner = 1;
		*b = (uint8_t)r->idx;
	}
	return NULL;
}

/* Threads fault a mapping while it is freed and its range re-used. */
static void test_race(void)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	struct racer r[RACE_THREADS];
	unsigned int round, i, sigbus = 0, seen = 0, bad = 0;
	struct svod_alloc a, b;
	uint8_t *p, *buf = malloc(RACE_PAGES * page);
	int fd2 = ht_open();

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	memset(buf, NEXT_OWNER, RACE_PAGES * page);
	for (round = 0; round < RACE_ROUNDS && buf && fd2 >= 0 && !bad; round++) {
		if (alloc_map(fd, RACE_PAGES * page, &a, &p)) {
			bad++;
			break;
		}
		for (i = 0; i < RACE_THREADS; i++) {
			r[i] = (struct racer){ .p = p, .idx = i };
			pthread_create(&r[i].thread, NULL, racer_main, &r[i]);
		}
		usleep(2000 + round * 500);
		bad += svod_free(fd, a.handle) != 0;
		bad += svod_alloc_flags(fd2, tier.id, RACE_PAGES * page, 0,
					SVOD_ALLOC_MAPPABLE, &b) != 0;
		bad += svod_stage(fd2, b.handle, 0, buf, RACE_PAGES * page, 0, NULL) != 0;
		for (i = 0; i < RACE_THREADS; i++) {
			pthread_join(r[i].thread, NULL);
			sigbus += r[i].sigbus;
			seen += r[i].saw_next_owner;
		}
		svod_free(fd2, b.handle);
		munmap(p, RACE_PAGES * page);
	}
	sigaction(SIGBUS, &old, NULL);
	tap_ok(!bad && round == RACE_ROUNDS && sigbus == RACE_ROUNDS * RACE_THREADS &&
	       !seen, "free_while_threads_fault_sigbus_never_next_owner (%u rounds, %u sigbus, %u saw next owner)",
	       round, sigbus, seen);
	free(buf);
	if (fd2 >= 0)
		close(fd2);
}

#define FAILSLAB_WAIT	"/sys/kernel/debug/failslab/ignore-gfp-wait"

/* Arms fail-nth for the @n-th injection point of this thread (0: disarm). */
static int fail_nth(int ff, unsigned int n)
{
	char v[16];
	int len = snprintf(v, sizeof(v), "%u", n);

	return pwrite(ff, v, (size_t)len, 0) == len ? 0 : -errno;
}

/* Did the armed injection fire (the counter reads 0)? Disarms it. */
static int fail_nth_fired(int ff)
{
	char v[16] = "";
	ssize_t n = pread(ff, v, sizeof(v) - 1, 0);

	fail_nth(ff, 0);
	return n > 0 && atoi(v) == 0;
}

/*
 * One round: a fresh mappable page; MAP_OFFSET (@step 0) or mmap() (@step 1)
 * with the @n-th injection point failed. A failure must be ENOMEM or EFAULT
 * and change nothing: the same call then works and the mapping holds what
 * is written. Return: 1 if the call went through (n was past its last
 * injection point), 0 if it failed as it should, -1 on a surprise.
 */
static int injected_round(int ff, unsigned int step, unsigned int n)
{
	struct svod_alloc a;
	void *p = MAP_FAILED;
	uint64_t off = 0;
	int ret, fired, result;

	if (svod_alloc_flags(fd, tier.id, page, 0, SVOD_ALLOC_MAPPABLE, &a))
		return -1;
	ret = step ? svod_map_offset(fd, a.handle, &off, NULL) : 0;
	if (!ret) {
		fail_nth(ff, n);
		if (step) {
			p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
			ret = p == MAP_FAILED ? -errno : 0;
		} else {
			ret = svod_map_offset(fd, a.handle, &off, NULL);
		}
		fired = fail_nth_fired(ff);
		result = !fired ? (ret ? -1 : 1) :
			 ret && ret != -ENOMEM && ret != -EFAULT ? -1 : 0;
	} else {
		result = -1;
	}
	if (result >= 0 && !step && ret)
		result = svod_map_offset(fd, a.handle, &off, NULL) ? -1 : result;
	if (result >= 0 && p == MAP_FAILED)
		p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED) {
		result = -1;
	} else {
		*(volatile uint8_t *)p = (uint8_t)n;
		result = *(volatile uint8_t *)p == (uint8_t)n ? result : -1;
		munmap(p, page);
	}
	return svod_free(fd, a.handle) ? -1 : result;
}

/* Faults the injection points report without a stack dump ("verbose"). */
static const char *const fault_attrs[] = { "failslab", "fail_page_alloc", "fail_usercopy" };

/*
 * Sets each fault attribute's verbose to @val, saving the old values first
 * (or restores them, @val NULL). debugfs attributes are not seekable: plain
 * read() and write() on fresh opens.
 */
static void fault_verbose(const char *val, char (*saved)[8])
{
	char path[96];
	unsigned int i;
	ssize_t n;
	int f;

	for (i = 0; i < ARRAY_SIZE(fault_attrs); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/verbose", fault_attrs[i]);
		f = val ? open(path, O_RDONLY | O_CLOEXEC) : -1;
		if (f >= 0) {
			n = read(f, saved[i], sizeof(saved[i]) - 1);
			saved[i][n > 0 ? n : 0] = '\0';
			close(f);
		}
		f = open(path, O_WRONLY | O_CLOEXEC);
		if (f < 0 || write(f, val ? val : saved[i], strlen(val ? val : saved[i])) < 0)
			tap_diag("could not set %s: %s", path, strerror(errno));
		if (f >= 0)
			close(f);
	}
}

/* Fault injection (test kernel) into MAP_OFFSET and mmap(), point by point. */
static void test_fault_injection(void)
{
	static const char *const names[] = { "map_offset", "mmap" };
	int ff = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	int wait = open(FAILSLAB_WAIT, O_RDWR | O_CLOEXEC);
	char verbose[ARRAY_SIZE(fault_attrs)][8] = { "2", "2", "2" };
	unsigned int n, step;
	int r = 0;

	if (ff < 0 || wait < 0 || pwrite(wait, "N", 1, 0) != 1) {
		for (step = 0; step < 2; step++)
			tap_skip("no fail-nth or failslab (CONFIG_FAULT_INJECTION)",
				 "%s_under_fail_nth", names[step]);
		goto out;
	}
	/* A stack dump per injected failure would read as a kernel splat. */
	fault_verbose("0", verbose);
	for (step = 0; step < 2; step++) {
		for (n = 1, r = 0; n < 400 && r == 0; n++)
			r = injected_round(ff, step, n);
		tap_ok(r == 1, "%s_under_fail_nth_enomem_or_efault_then_works (%u injection points)",
		       names[step], n - 2);
	}
	fault_verbose(NULL, verbose);
	if (pwrite(wait, "Y", 1, 0) != 1)
		tap_diag("could not restore " FAILSLAB_WAIT);
out:
	if (ff >= 0)
		close(ff);
	if (wait >= 0)
		close(wait);
}

#define DBG		"/sys/kernel/debug/"
#define FAULT_PAGES	4
#define FAULT_WRITE_LEN	64
#define FAULT_MAX_N	64

/* How a fault child ended (its exit status). */
enum { FAULT_FIRED, FAULT_CLEAN, FAULT_WRONG, FAULT_SETUP };

/* A debugfs attribute the fault sweep sets, and its old value. */
struct dbg_attr {
	const char *rel;
	const char *val;
	char saved[16];
};

static int dbg_io(const char *rel, char *buf, size_t len, int wr)
{
	char path[128];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), DBG "%s", rel);
	f = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = wr ? write(f, buf, strlen(buf)) : read(f, buf, len - 1);
	if (!wr && n >= 0)
		buf[n] = '\0';
	close(f);
	return n < 0 ? -errno : 0;
}

/* Saves, then sets, every attribute of @a. Return: 0 or the first -errno. */
static int dbg_set(struct dbg_attr *a, unsigned int nr)
{
	char v[16];
	unsigned int i;
	int ret = 0;

	for (i = 0; i < nr && !ret; i++) {
		ret = dbg_io(a[i].rel, a[i].saved, sizeof(a[i].saved), 0);
		snprintf(v, sizeof(v), "%s", a[i].val);
		ret = ret ? ret : dbg_io(a[i].rel, v, sizeof(v), 1);
	}
	return ret;
}

static void dbg_restore(struct dbg_attr *a, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (a[i].saved[0] && dbg_io(a[i].rel, a[i].saved, sizeof(a[i].saved), 1))
			tap_diag("could not restore " DBG "%s", a[i].rel);
}

/*
 * One child of the fault sweep: maps the allocation at @off at a 2 MiB
 * aligned address that no page table covers yet (so the fault must
 * allocate at least a PTE page), arms fail-nth = @n and touches the
 * mapping: reads all of it and compares it with @want (@write 0), or writes
 * @want's first FAULT_WRITE_LEN bytes into it (the parent reads them back).
 * Exits with FAULT_FIRED (the armed point fired, the bytes are right),
 * FAULT_CLEAN (the touch used fewer than @n points), FAULT_WRONG or
 * FAULT_SETUP; a signal kills it.
 */
static void fault_child(uint64_t off, const uint8_t *want, unsigned int n, int write)
{
	size_t len = FAULT_PAGES * page;
	uint8_t *res, *base, *p, scratch[FAULT_WRITE_LEN];
	char v[16] = "";
	int ff, ok, fired;

	res = mmap(NULL, 2 * SZ_2M, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		_exit(FAULT_SETUP);
	base = (uint8_t *)(((uintptr_t)res + SZ_2M - 1) & ~(SZ_2M - 1));
	p = mmap(base, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)off);
	ff = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (p != base || ff < 0)
		_exit(FAULT_SETUP);
	/* Whatever the touch uses besides the mapping is in place already. */
	memcpy(scratch, want, sizeof(scratch));
	ok = !memcmp(scratch, want, sizeof(scratch));
	if (fail_nth(ff, n))
		_exit(FAULT_SETUP);
	if (write)
		memcpy(p, want, FAULT_WRITE_LEN);
	else
		ok = !memcmp(p, want, len);
	/* 0: the point fired; EFAULT: this read's own copy was the n-th. */
	fired = pread(ff, v, sizeof(v) - 1, 0) > 0 && atoi(v) == 0;
	fail_nth(ff, 0);
	_exit(!ok ? FAULT_WRONG : fired ? FAULT_FIRED : FAULT_CLEAN);
}

/*
 * Fault injection (test kernel) into the fault handler's path: the 1st,
 * 2nd, ... injection point of the first touch of a fresh mapping fails
 * (slab and page allocations: page tables, their locks), until the touch
 * needs none. On 6.1 a failed page table allocation is VM_FAULT_OOM, which
 * from user mode ends in pagefault_out_of_memory() and returns to retry the
 * access (arch/x86/mm/fault.c), the injection is spent, and the retry
 * succeeds: every round must see the right bytes, never a signal.
 */
static void test_fault_handler_injection(void)
{
	static const char *const names[] = { "read", "write" };
	struct dbg_attr attrs[] = {
		{ .rel = "failslab/ignore-gfp-wait", .val = "N" },
		{ .rel = "failslab/verbose", .val = "0" },
		{ .rel = "fail_usercopy/verbose", .val = "0" },
		{ .rel = "fail_page_alloc/ignore-gfp-wait", .val = "N" },
		/* User data pages (GFP_HIGHUSER) stay out: page tables are not. */
		{ .rel = "fail_page_alloc/ignore-gfp-highmem", .val = "Y" },
		{ .rel = "fail_page_alloc/min-order", .val = "0" },
		{ .rel = "fail_page_alloc/verbose", .val = "0" },
	};
	size_t len = FAULT_PAGES * page;
	uint8_t *want = malloc(len), back[FAULT_WRITE_LEN];
	unsigned int n, write, fired, clean;
	struct svod_alloc a;
	uint64_t off = 0;
	int ret, aret, st;
	pid_t pid;

	if (access(DBG "fail_page_alloc", F_OK) || access("/proc/thread-self/fail-nth", F_OK)) {
		for (write = 0; write < 2; write++)
			tap_skip("no fail_page_alloc or fail-nth (CONFIG_FAIL_PAGE_ALLOC)",
				 "fault_%s_under_fail_nth", names[write]);
		free(want);
		return;
	}
	aret = want ? svod_alloc_flags(fd, tier.id, len, 0, SVOD_ALLOC_MAPPABLE, &a) : -ENOMEM;
	ret = aret ? aret : svod_map_offset(fd, a.handle, &off, NULL);
	ret = ret ? ret : dbg_set(attrs, ARRAY_SIZE(attrs));
	for (write = 0; write < 2; write++) {
		fired = clean = 0;
		st = ret ? -1 : 0;
		for (n = 1; n <= FAULT_MAX_N && !st && !clean; n++) {
			ht_fill_xorshift(want, len, write ? 0x1000 + n : 0x3000);
			if (svod_stage(fd, a.handle, 0, want, len, 0, NULL)) {
				st = -1;
				break;
			}
			if (write)
				ht_fill_xorshift(want, FAULT_WRITE_LEN, 0x2000 + n);
			pid = fork();
			if (!pid)
				fault_child(off, want, n, write);
			st = pid < 0 ? -1 : ht_wait_exit(pid);
			if (write && (st == FAULT_FIRED || st == FAULT_CLEAN) &&
			    (svod_read(fd, a.handle, 0, back, sizeof(back), 0, NULL) ||
			     memcmp(back, want, sizeof(back))))
				st = FAULT_WRONG;
			fired += st == FAULT_FIRED;
			clean = st == FAULT_CLEAN;
			st = st == FAULT_FIRED || st == FAULT_CLEAN ? 0 : st;
		}
		tap_ok(!st && clean && fired > 0,
		       "fault_%s_under_fail_nth_retried_right_bytes (%s; %u injection points, child status %d at n=%u)",
		       names[write], svod_errno_name(ret), fired, st, n - 1);
	}
	dbg_restore(attrs, ARRAY_SIZE(attrs));
	if (!aret)
		svod_free(fd, a.handle);
	free(want);
}

static void test_unbind(void)
{
	struct svod_tier_info t;
	struct svod_alloc a = {};
	uint8_t *p = NULL;
	int ret, sig;

	ret = alloc_map(fd, page, &a, &p);
	if (!ret)
		p[0] = 9;
	ret = ret ? ret : svod_driver_bind(tier.device, 0);
	sig = touch_in_child(p, 0);
	tap_ok(!ret && sig == SIGBUS, "after_unbind_child_sigbus (%s, sig %d)",
	       svod_errno_name(ret), sig);
	tap_errno(svod_free(fd, a.handle), 0, "free_after_unbind");
	munmap(p, page);
	ret = svod_driver_bind(tier.device, 1);
	ret = ret ? ret : svod_tier_by_device(fd, tier.device, &t);
	tap_errno(ret, 0, "rebind_after_unbind");
}

/*
 * Seconds per copy of @reps memcpy()s in a row into (@to) or out of @bar
 * over @len bytes: enough in a row that reading the clock (HPET under QEMU,
 * a few microseconds) is small beside them.
 */
static double copy_time(int to, uint8_t *buf, volatile uint8_t *bar, uint32_t len,
			unsigned int reps)
{
	double t0 = now_s();
	unsigned int i;

	for (i = 0; i < reps; i++) {
		if (to) {
			memcpy((void *)bar, buf, len);
			__sync_synchronize();
		} else {
			memcpy(buf, (const void *)bar, len);
		}
	}
	return (now_s() - t0) / reps;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The interquartile mean of @v, sorted (median() sorts): the mean of its
 * middle half. As robust as the median to the slow tail (preempted
 * copies), and steadier when the values fall in two modes, as copies of
 * MiBs under QEMU (TCG) do: there the median jumps from one mode to the
 * other as their shares cross one half, the mean of the middle half moves
 * with the shares.
 */
static double iqm(const double *v, unsigned int n)
{
	unsigned int i, lo = n / 4, hi = n - n / 4;
	double sum = 0;

	for (i = lo; i < hi; i++)
		sum += v[i];
	return sum / (hi - lo);
}

/* Reads a byte of every page: no fault is left for the timed copies. */
static void prefault(volatile uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += page)
		(void)p[i];
}

/* Puts @v in a random order (Fisher-Yates; the seed in *@rng). */
static void shuffle(unsigned int *v, unsigned int n, uint64_t *rng)
{
	unsigned int i, j, x;

	for (i = n - 1; i > 0; i--) {
		j = (unsigned int)(ht_rand(rng) % (i + 1));
		x = v[i];
		v[i] = v[j];
		v[j] = x;
	}
}

/* The sides of one measurement, in the order of their figures. */
enum { SIDE_SVOD, SIDE_DIRECT, SIDE_WHOLE, SIDE_WHOLE_FREE, NR_SIDES };

/*
 * Where the benchmark maps: BENCH_SPAN-spaced slots of one PROT_NONE
 * reservation, so the svod mapping, the same range through resource2_wc and
 * the range inside a whole-BAR resource2_wc mapping all start at 2 MiB
 * aligned addresses congruent modulo BENCH_SPAN (the same TLB sets, and the
 * same distance to the buffer they copy to and from).
 */
static uint8_t *bench_reserve(size_t *len)
{
	uint8_t *res;

	*len = 5 * BENCH_SPAN;
	res = mmap(NULL, *len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return res == MAP_FAILED ? NULL : res;
}

/*
 * One size, one direction. Copies alternate between the sides one by one,
 * in groups of one copy per side, each group in a new random order (a copy
 * is slower after some sides than after others, as the TLB and caches they
 * leave differ: a fixed cycle would always give a side one predecessor);
 * for at least BENCH_MIN_S and BENCH_MIN_SAMPLES groups, unless that takes
 * BENCH_MAX_S. Every copy is timed on its own (copies
 * below BENCH_SAMPLE_BYTES in runs of that many bytes), every mapping
 * faulted in before the first: a slow spell of the host hits the sides
 * alike. Each side's MB/s is of its copy times' interquartile mean (iqm()),
 * which a preempted copy does not move; ratio: the direct side's over
 * svod's (and the same of the medians).
 */
static void bench_one(int to, uint8_t *buf, uint32_t len, volatile uint8_t *const side[NR_SIDES],
		      double *const t[NR_SIDES + 1])
{
	static const char *const names[] = { "read", "write" };
	unsigned int reps = len < BENCH_SAMPLE_BYTES ? BENCH_SAMPLE_BYTES / len : 1;
	unsigned int order[NR_SIDES] = { 0, 1, 2, 3 };
	unsigned int k, s, n = 0;
	double med[NR_SIDES], mean[NR_SIDES], start;
	double *paired = t[NR_SIDES];
	uint64_t rng = 0x6d6d6170 + len + to;

	memset(buf, 0x3c, len);
	for (s = 0; s < NR_SIDES; s++) {
		prefault(side[s], len);
		copy_time(to, buf, side[s], len, reps);
	}
	start = now_s();
	while ((now_s() - start < BENCH_MIN_S || n < BENCH_MIN_SAMPLES) && n < BENCH_SAMPLES &&
	       now_s() - start < BENCH_MAX_S) {
		shuffle(order, NR_SIDES, &rng);
		for (k = 0; k < NR_SIDES; k++) {
			s = order[k];
			t[s][n] = copy_time(to, buf, side[s], len, reps);
		}
		/* The ratio of the copies of one group, a few ms apart. */
		paired[n] = t[SIDE_DIRECT][n] / t[SIDE_SVOD][n];
		n++;
	}
	for (s = 0; s < NR_SIDES; s++) {
		med[s] = median(t[s], n);
		mean[s] = iqm(t[s], n);
	}
	median(paired, n);
	printf("# bench: mmap %s %8u B: svod mapping %7.1f MB/s, direct resource2_wc memcpy %7.1f MB/s, ratio %.2f (medians %.2f; paired ratios' quartiles %.2f..%.2f; whole-BAR resource2_wc mapping %.1f MB/s, ratio %.2f; placed by mmap() %.1f MB/s, ratio %.2f; %u samples each)\n",
	       names[to], len, len / mean[SIDE_SVOD] / 1e6, len / mean[SIDE_DIRECT] / 1e6,
	       mean[SIDE_DIRECT] / mean[SIDE_SVOD], med[SIDE_DIRECT] / med[SIDE_SVOD],
	       paired[n / 4], paired[n - 1 - n / 4],
	       len / mean[SIDE_WHOLE] / 1e6, mean[SIDE_WHOLE] / mean[SIDE_SVOD],
	       len / mean[SIDE_WHOLE_FREE] / 1e6, mean[SIDE_WHOLE_FREE] / mean[SIDE_SVOD], n);
	tap_ok(mean[SIDE_SVOD] > 0 && mean[SIDE_DIRECT] > 0, "bench_mmap_%s_%u", names[to], len);
}

/* Page faults this process has taken so far (that needed no I/O). */
static long minor_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_minflt;
}

/*
 * Seconds to map @len bytes of @f at @off exactly at @addr, write them all
 * once (every page's first touch) and put the reservation back.
 */
static double first_touch_time(uint8_t *addr, uint32_t len, int f, uint64_t off,
			       const uint8_t *buf)
{
	double t0 = now_s();
	int ret = map_at(addr, len, f, off);

	if (!ret) {
		memcpy(addr, buf, len);
		__sync_synchronize();
	}
	if (mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
		 -1, 0) != addr)
		ret = -errno;
	return ret ? -1 : now_s() - t0;
}

/*
 * First touch: mmap(), one memcpy() into every page, and the unmapping,
 * timed as one, through svod (a fault fills up to 64 MiB of PTEs) and
 * through resource2_wc (every page inserted by mmap() itself), the two
 * alternating, at congruent addresses. Figures: interquartile means, and
 * the page faults of one mapping's first touch on each side.
 */
static void bench_first_touch(uint8_t *buf, uint32_t len, uint8_t *slot, uint64_t moff,
			      uint64_t off, double *const t[NR_SIDES + 1])
{
	unsigned int n = 0, k;
	double start = now_s(), svod, direct;
	long faults[3];
	int bad = 0;

	faults[0] = minor_faults();
	first_touch_time(slot, len, fd, moff, buf);
	faults[1] = minor_faults();
	first_touch_time(slot + BENCH_SPAN, len, wc_fd, off, buf);
	faults[2] = minor_faults();
	while ((n < BENCH_MIN_SAMPLES || now_s() - start < BENCH_FIRST_TOUCH_S) &&
	       n < BENCH_SAMPLES && now_s() - start < BENCH_MAX_S && !bad) {
		for (k = 0; k < 2; k++) {
			if ((n + k) % 2)
				t[SIDE_DIRECT][n] = first_touch_time(slot + BENCH_SPAN, len, wc_fd,
								     off, buf);
			else
				t[SIDE_SVOD][n] = first_touch_time(slot, len, fd, moff, buf);
		}
		bad = t[SIDE_SVOD][n] < 0 || t[SIDE_DIRECT][n] < 0;
		n++;
	}
	if (!bad) {
		median(t[SIDE_SVOD], n);
		median(t[SIDE_DIRECT], n);
	}
	svod = bad ? 0 : iqm(t[SIDE_SVOD], n);
	direct = bad ? 0 : iqm(t[SIDE_DIRECT], n);
	if (!bad)
		printf("# bench: mmap first-touch write %8u B: svod mapping %7.1f MB/s, resource2_wc %7.1f MB/s, ratio %.2f (mmap, memcpy, munmap; %u samples each; page faults %ld and %ld)\n",
		       len, len / svod / 1e6, len / direct / 1e6, direct / svod, n,
		       faults[1] - faults[0], faults[2] - faults[1]);
	tap_ok(!bad, "bench_mmap_first_touch_%u", len);
}

/*
 * memcpy through the svod mapping against the same BAR range mapped through
 * resource2_wc, both mapped at congruent addresses (bench_reserve()); for
 * reference, the range inside one whole-BAR resource2_wc mapping at a
 * congruent address, and inside the whole-BAR mapping where mmap() placed
 * it at setup (wc): a different distance to the buffer, a different figure.
 */
static void bench(void)
{
	uint8_t *buf = malloc(MAX_SIZE), *res = NULL, *slot;
	volatile uint8_t *side[NR_SIDES];
	double *t[NR_SIDES + 1];
	struct svod_alloc a;
	unsigned int i, to, s;
	uint64_t off = 0, moff = 0;
	size_t res_len = 0;
	int ret, aret;

	for (s = 0; s <= NR_SIDES; s++) {
		t[s] = malloc(BENCH_SAMPLES * sizeof(*t[s]));
		if (!t[s]) {
			free(buf);
			buf = NULL;
		}
	}
	if (buf)
		memset(buf, 0, MAX_SIZE);
	res = buf && wc && wc_len <= BENCH_SPAN ? bench_reserve(&res_len) : NULL;
	/* The first 2 MiB aligned address of the reservation: slot 0. */
	slot = res ? (uint8_t *)(((uintptr_t)res + SZ_2M - 1) & ~(SZ_2M - 1)) : NULL;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/*
		 * A debug kernel's figures only show the paths run: the
		 * large sizes, a minute of its boot, are the stock boot's.
		 */
		if (bench_debug && sizes[i] > (1u << 20)) {
			tap_skip("debug kernel: the stock boot measures", "bench_mmap_read_%u", sizes[i]);
			tap_skip("debug kernel: the stock boot measures", "bench_mmap_write_%u", sizes[i]);
			tap_skip("debug kernel: the stock boot measures", "bench_mmap_first_touch_%u",
				 sizes[i]);
			continue;
		}
		aret = slot ? svod_alloc_flags(fd, tier.id, sizes[i], 0, SVOD_ALLOC_MAPPABLE, &a) :
			      -ENOMEM;
		ret = aret ? aret : svod_map_offset(fd, a.handle, &moff, NULL);
		ret = ret ? ret : ht_bar2_offset(&tier, a.device_addr, &off);
		ret = ret ? ret : map_at(slot, sizes[i], fd, moff);
		ret = ret ? ret : map_at(slot + BENCH_SPAN, sizes[i], wc_fd, off);
		ret = ret ? ret : map_at(slot + 3 * BENCH_SPAN - off, wc_len, wc_fd, 0);
		side[SIDE_SVOD] = slot;
		side[SIDE_DIRECT] = slot + BENCH_SPAN;
		side[SIDE_WHOLE] = slot + 3 * BENCH_SPAN;
		side[SIDE_WHOLE_FREE] = wc + off;
		for (to = 0; to < 2; to++) {
			if (ret)
				tap_ok(0, "bench_mmap_%s_%u (%s)", to ? "write" : "read", sizes[i],
				       svod_errno_name(ret));
			else
				bench_one(to, buf, sizes[i], side, t);
		}
		if (slot)
			mmap(slot, 4 * BENCH_SPAN, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		if (ret)
			tap_ok(0, "bench_mmap_first_touch_%u (%s)", sizes[i], svod_errno_name(ret));
		else
			bench_first_touch(buf, sizes[i], slot, moff, off, t);
		if (slot)
			mmap(slot, 4 * BENCH_SPAN, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		if (!aret)
			svod_free(fd, a.handle);
	}
	if (res)
		munmap(res, res_len);
	for (s = 0; s <= NR_SIDES; s++)
		free(t[s]);
	free(buf);
}

/* Keeper: write a pattern through a mapping, report it, hold it. */
static int run_manifest(void)
{
	static const uint32_t seed = 0x6d6d6170;
	struct svod_alloc a;
	uint8_t *p = NULL, *buf;
	uint64_t off = 0;
	int ret, report[2];
	char msg[64] = "";
	pid_t pid;

	tap_plan(1);
	fd = ht_open();
	page = (size_t)sysconf(_SC_PAGESIZE);
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	if (ret || pipe(report)) {
		tap_ok(0, "mmap_manifest_keeper_wrote_and_holds (setup %d)", ret);
		return tap_done();
	}
	pid = fork();
	if (!pid) {
		if (fork())
			_exit(0);
		setsid();
		buf = malloc(3 * page + 5);
		ret = buf ? alloc_map(fd, 3 * page + 5, &a, &p) : -ENOMEM;
		ret = ret ? ret : ht_bar2_offset(&tier, a.device_addr + 3, &off);
		if (!ret) {
			ht_fill_xorshift(buf, 3 * page + 5, seed);
			memcpy(p + 3, buf, 3 * page + 5);
			__sync_synchronize();
			printf("# svod-manifest: %llx %llu %u\n", (unsigned long long)off,
			       (unsigned long long)(3 * page + 5), seed);
			fflush(stdout);
		}
		snprintf(msg, sizeof(msg), "%s", ret ? svod_errno_name(ret) : "ok");
		ht_write_all(report[1], msg, sizeof(msg));
		close(report[1]);
		for (;;)
			pause();
	}
	close(report[1]);
	ht_wait_exit(pid);
	ret = ht_read_all(report[0], msg, sizeof(msg));
	msg[sizeof(msg) - 1] = '\0';
	tap_ok(!ret && !strcmp(msg, "ok"), "mmap_manifest_keeper_wrote_and_holds (%s)", msg);
	return tap_done();
}

int main(int argc, char **argv)
{
	int ret;

	if (argc == 2 && !strcmp(argv[1], "--manifest"))
		return run_manifest();
	tap_plan(NR_CASES);
	bench_debug = getenv("SVOD_KERNEL") && !strcmp(getenv("SVOD_KERNEL"), "test");
	page = (size_t)sysconf(_SC_PAGESIZE);
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	wc = ret ? NULL : map_resource2_wc();
	if (!tap_ok(!ret, "setup (%d, resource2_wc %s)", ret, wc ? "mapped" : "refused"))
		return tap_done();
	test_data();
	test_refusals();
	test_vma_ops();
	test_outlives_fd();
	test_free_revokes();
	test_proc_mem();
	test_revoke_between_faults();
	test_map_twice();
	test_memtype_no_leak();
	test_race();
	test_fault_injection();
	test_fault_handler_injection();
	bench();
	test_tier_replacement();
	test_unbind();
	if (wc) {
		munmap((void *)wc, wc_len);
		close(wc_fd);
	}
	close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
