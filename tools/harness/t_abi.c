// SPDX-License-Identifier: GPL-2.0
/*
 * t_abi: the ABI can grow (Documentation/uapi.rst, "Growing the ABI").
 *
 * Every ioctl is called with the struct size of its first layout
 * (SVOD_*_SIZE_VER0, what an older binary passes), with the current size,
 * with less than the first layout (EINVAL), and with a longer struct, as a
 * newer binary would pass: a zero tail works, a nonzero tail is E2BIG and
 * changes nothing. Replies never go past the caller's size. QUERY's element
 * size, PLAN's event size, and the outputs STAGE, READ and PLAN write back
 * on failure. BATCH (whose entry size t_batch checks) in every size. A
 * struct that can be read but not written: EFAULT, nothing left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CMDS		12
#define NR_CASES	(NR_CMDS * 6 + (NR_CMDS - 1) + 3 + 8 + 6 + 2 + 1 + 4 + 6)

/* Bytes a "newer binary" appends to each struct. */
#define TAIL		64
#define BUF_SIZE	512

#define DONE_POISON	0xdeadbeefULL

/* What a valid call of one command needs, and how to tell it worked. */
struct cmd {
	const char *name;
	unsigned int nr;
	unsigned int dir;
	size_t size;
	size_t ver0;
	void (*fill)(void *buf);
	int (*worked)(const void *buf);	/* after a call that returned 0 */
	int (*untouched)(void);		/* after a refused call */
};

static int fd = -1;
static struct svod_tier_info tier;
static uint64_t live_handle;	/* a 4 KiB allocation the calls use */
static uint64_t victim;		/* what FREE frees; reallocated by fill */
static uint64_t mappable;	/* a 4 KiB SVOD_ALLOC_MAPPABLE allocation */
static uint8_t xbuf[64];
static struct svod_plan_event plan_ev = { .op = SVOD_PLAN_ALLOC, .id = 1, .size = 256 };
static uint64_t plan_off;
static uint32_t live_before;
static int share_fd = -1;	/* a read-write dma-buf of mappable */
static int fd_before;		/* the lowest free descriptor before EXPORT */
static int64_t handles_before;	/* svod-handles-<tier> before IMPORT */

static uint32_t tier_live(void)
{
	uint32_t n = 0;

	ht_tier_usage(fd, tier.id, NULL, &n);
	return n;
}

static void fill_query(void *buf)
{
	memset(buf, 0, sizeof(struct svod_query));
}

static int query_worked(const void *buf)
{
	const struct svod_query *q = buf;

	return q->abi_version == SVOD_ABI_VERSION && q->nr_tiers >= 1;
}

static int nothing_changed(void)
{
	return 1;
}

static void fill_alloc(void *buf)
{
	struct svod_alloc *a = buf;

	live_before = tier_live();
	*a = (struct svod_alloc){ .tier = tier.id, .size = 4096 };
}

static int alloc_worked(const void *buf)
{
	const struct svod_alloc *a = buf;
	int ok = a->handle && a->capacity == 4096 && tier_live() == live_before + 1;

	svod_free(fd, a->handle);
	return ok;
}

static int no_new_alloc(void)
{
	return tier_live() == live_before;
}

static void fill_free(void *buf)
{
	struct svod_alloc a;

	if (!victim && !svod_alloc(fd, tier.id, 4096, 0, &a))
		victim = a.handle;
	*(struct svod_free *)buf = (struct svod_free){ .handle = victim };
}

static int free_worked(const void *buf __attribute__((unused)))
{
	struct svod_resolve r;
	int gone = svod_resolve(fd, victim, &r) == -ESTALE;

	victim = 0;
	return gone;
}

static int victim_alive(void)
{
	struct svod_resolve r;

	return svod_resolve(fd, victim, &r) == 0;
}

static void fill_resolve(void *buf)
{
	*(struct svod_resolve *)buf = (struct svod_resolve){ .handle = live_handle };
}

static int resolve_worked(const void *buf)
{
	const struct svod_resolve *r = buf;

	return r->tier == tier.id && r->capacity == 4096;
}

static void fill_xfer(void *buf)
{
	*(struct svod_xfer *)buf = (struct svod_xfer){
		.handle = live_handle,
		.user_ptr = (uintptr_t)xbuf,
		.length = sizeof(xbuf),
		.done = DONE_POISON,
	};
}

static int xfer_worked(const void *buf)
{
	return ((const struct svod_xfer *)buf)->done == sizeof(xbuf);
}

static int xfer_untouched(void)
{
	return 1;
}

/* WAIT for a 64-byte asynchronous STAGE submitted here. */
static void fill_wait(void *buf)
{
	struct svod_xfer x = {
		.handle = live_handle, .user_ptr = (uintptr_t)xbuf,
		.length = sizeof(xbuf), .flags = SVOD_XFER_ASYNC,
	};

	svod_ioctl(fd, SVOD_IOCTL_STAGE, &x);
	*(struct svod_wait *)buf = (struct svod_wait){
		.seqno = x.seqno, .deadline_ns = INT64_MAX, .done = DONE_POISON,
	};
}

static int wait_worked(const void *buf)
{
	const struct svod_wait *w = buf;

	return w->seqno && !w->status && w->done == sizeof(xbuf);
}

/* BATCH of one 64-byte STAGE; a refused one moves no timeline value. */
static struct svod_batch_entry batch_entry;
static int64_t batch_seq_before;

static void fill_batch(void *buf)
{
	batch_entry = (struct svod_batch_entry){
		.handle = live_handle, .user_ptr = (uintptr_t)xbuf,
		.length = sizeof(xbuf), .op = SVOD_BATCH_STAGE,
	};
	batch_seq_before = ht_fdinfo_value(getpid(), fd, "svod-async-seqno");
	*(struct svod_batch *)buf = (struct svod_batch){
		.entries_ptr = (uintptr_t)&batch_entry, .nr_entries = 1,
	};
}

static int batch_worked(const void *buf)
{
	const struct svod_batch *b = buf;
	int st = -1;

	return b->seqno && b->failed_entry == ~0U && b->fence_fd == -1 &&
	       !svod_wait(fd, b->seqno, -1, &st, NULL) && !st;
}

static int batch_untouched(void)
{
	return ht_fdinfo_value(getpid(), fd, "svod-async-seqno") == batch_seq_before;
}

static void fill_plan(void *buf)
{
	plan_off = ~0ULL;
	*(struct svod_plan *)buf = (struct svod_plan){
		.arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32,
		.nr_events = 1, .events_ptr = (uintptr_t)&plan_ev,
		.offsets_ptr = (uintptr_t)&plan_off,
	};
}

static int plan_worked(const void *buf)
{
	const struct svod_plan *p = buf;

	return plan_off == 0 && p->peak == 256 && p->lower_bound == 256;
}

static int plan_untouched(void)
{
	return plan_off == ~0ULL;
}

static void fill_map(void *buf)
{
	*(struct svod_map_offset *)buf = (struct svod_map_offset){ .handle = mappable };
}

static int map_worked(const void *buf)
{
	const struct svod_map_offset *m = buf;

	return m->offset && !(m->offset & 4095) && m->size == 4096;
}

/* The lowest free descriptor: an EXPORT that failed must not move it. */
static int lowest_fd(void)
{
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (n >= 0)
		close(n);
	return n;
}

static void fill_export(void *buf)
{
	fd_before = lowest_fd();
	*(struct svod_export *)buf = (struct svod_export){
		.handle = mappable, .flags = SVOD_EXPORT_WRITE, .fd = -1,
	};
}

static int export_worked(const void *buf)
{
	const struct svod_export *e = buf;
	int fl = e->fd >= 0 ? fcntl(e->fd, F_GETFL) : -1;

	if (e->fd >= 0)
		close(e->fd);
	return e->size == 4096 && fl >= 0 && (fl & O_ACCMODE) == O_RDWR;
}

static int no_new_fd(void)
{
	return lowest_fd() == fd_before;
}

/* This file's svod-handles-<tier> (fdinfo), -ENOENT without the key. */
static int64_t tier_handles(void)
{
	char path[64], key[80], line[256];
	int64_t n = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "svod-handles-%s:", tier.name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			n = strtoll(line + strlen(key), NULL, 10);
	fclose(f);
	return n;
}

static void fill_import(void *buf)
{
	handles_before = tier_handles();
	*(struct svod_import *)buf = (struct svod_import){ .fd = share_fd };
}

static int import_worked(const void *buf)
{
	const struct svod_import *i = buf;
	int ok = i->handle && i->handle != mappable && i->capacity == 4096 &&
		 i->tier == tier.id && i->access == (SVOD_ACCESS_READ | SVOD_ACCESS_WRITE);

	return svod_free(fd, i->handle) == 0 && ok;
}

static int no_new_handle(void)
{
	return tier_handles() == handles_before;
}

#define RW	(_IOC_READ | _IOC_WRITE)

static const struct cmd cmds[NR_CMDS] = {
	{ "query", 0x00, RW, sizeof(struct svod_query), SVOD_QUERY_SIZE_VER0,
	  fill_query, query_worked, nothing_changed },
	{ "alloc", 0x01, RW, sizeof(struct svod_alloc), SVOD_ALLOC_SIZE_VER0,
	  fill_alloc, alloc_worked, no_new_alloc },
	{ "free", 0x02, _IOC_WRITE, sizeof(struct svod_free), SVOD_FREE_SIZE_VER0,
	  fill_free, free_worked, victim_alive },
	{ "resolve", 0x03, RW, sizeof(struct svod_resolve), SVOD_RESOLVE_SIZE_VER0,
	  fill_resolve, resolve_worked, nothing_changed },
	{ "stage", 0x04, RW, sizeof(struct svod_xfer), SVOD_XFER_SIZE_VER0,
	  fill_xfer, xfer_worked, xfer_untouched },
	{ "read", 0x05, RW, sizeof(struct svod_xfer), SVOD_XFER_SIZE_VER0,
	  fill_xfer, xfer_worked, xfer_untouched },
	{ "plan", 0x06, RW, sizeof(struct svod_plan), SVOD_PLAN_SIZE_VER0,
	  fill_plan, plan_worked, plan_untouched },
	{ "map_offset", 0x07, RW, sizeof(struct svod_map_offset),
	  SVOD_MAP_OFFSET_SIZE_VER0, fill_map, map_worked, nothing_changed },
	{ "wait", 0x08, RW, sizeof(struct svod_wait), SVOD_WAIT_SIZE_VER0,
	  fill_wait, wait_worked, nothing_changed },
	{ "export", 0x09, RW, sizeof(struct svod_export), SVOD_EXPORT_SIZE_VER0,
	  fill_export, export_worked, no_new_fd },
	{ "import", 0x0a, RW, sizeof(struct svod_import), SVOD_IMPORT_SIZE_VER0,
	  fill_import, import_worked, no_new_handle },
	{ "batch", 0x0b, RW, sizeof(struct svod_batch), SVOD_BATCH_SIZE_VER0,
	  fill_batch, batch_worked, batch_untouched },
};

static int call(const struct cmd *c, size_t size, void *buf)
{
	return svod_ioctl(fd, _IOC(c->dir, SVOD_IOCTL_MAGIC, c->nr, size), buf);
}

static int all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* The six size cases of one command. */
static void test_sizes(const struct cmd *c, uint8_t *page_end)
{
	static uint8_t buf[BUF_SIZE];
	uint8_t *at;
	int ret;

	memset(buf, 0, sizeof(buf));
	c->fill(buf);
	ret = call(c, c->ver0, buf);
	tap_ok(!ret && c->worked(buf), "%s_first_layout_size_%zu_works (%s)",
	       c->name, c->ver0, ht_err(ret));

	memset(buf, 0, sizeof(buf));
	c->fill(buf);
	ret = call(c, c->size, buf);
	tap_ok(!ret && c->worked(buf), "%s_current_size_%zu_works (%s)",
	       c->name, c->size, ht_err(ret));

	memset(buf, 0, sizeof(buf));
	c->fill(buf);
	ret = call(c, c->ver0 - 8, buf);
	tap_ok(ret == -EINVAL && c->untouched(), "%s_shorter_than_first_layout_einval (%s)",
	       c->name, ht_err(ret));

	memset(buf, 0, sizeof(buf));
	c->fill(buf);
	ret = call(c, c->size + TAIL, buf);
	tap_ok(!ret && c->worked(buf) && all_zero(buf + c->size, TAIL),
	       "%s_longer_zero_tail_works_tail_untouched (%s)", c->name, ht_err(ret));

	memset(buf, 0, sizeof(buf));
	c->fill(buf);
	buf[c->size + TAIL - 1] = 1;
	ret = call(c, c->size + TAIL, buf);
	tap_ok(ret == -E2BIG && c->untouched(), "%s_longer_nonzero_tail_e2big (%s)",
	       c->name, ht_err(ret));

	/* An old binary's struct at the end of a page: nothing written past it. */
	at = page_end - c->ver0;
	memset(at, 0, c->ver0);
	memset(buf, 0, sizeof(buf));
	c->fill(buf);
	memcpy(at, buf, c->ver0);
	ret = call(c, c->ver0, at);
	tap_ok(!ret && c->worked(at), "%s_first_layout_at_page_end_works (%s)",
	       c->name, ht_err(ret));
}

/*
 * The layouts between the first and the current one (what binaries built
 * against those headers pass): each works, and nothing is written past it.
 */
static void test_mid_layouts(uint8_t *page_end)
{
	static const struct { unsigned int cmd; size_t size; } mid[] = {
		{ 4, SVOD_XFER_SIZE_VER1 },	/* STAGE with resume, no seqno */
		{ 5, SVOD_XFER_SIZE_VER1 },	/* READ */
		{ 6, SVOD_PLAN_SIZE_VER1 },	/* PLAN with strategy_used, no event_size */
	};
	static uint8_t buf[BUF_SIZE];
	const struct cmd *c;
	unsigned int i;
	uint8_t *at;
	int ret;

	for (i = 0; i < ARRAY_SIZE(mid); i++) {
		c = &cmds[mid[i].cmd];
		at = page_end - mid[i].size;
		memset(buf, 0, sizeof(buf));
		c->fill(buf);
		memcpy(at, buf, mid[i].size);
		ret = call(c, mid[i].size, at);
		tap_ok(!ret && c->worked(at), "%s_layout_%zu_at_page_end_works (%s)", c->name,
		       mid[i].size, ht_err(ret));
	}
}

/* QUERY's in/out element size, and the regions array. */
static void test_query_elements(void)
{
	size_t big = sizeof(struct svod_tier_info) + 64;
	uint8_t arr[2 * (sizeof(struct svod_tier_info) + 64) + 64];
	const struct svod_tier_info *t;
	struct svod_query q;
	int ret;

	memset(arr, 0xa5, sizeof(arr));
	q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = (uintptr_t)arr };
	ret = svod_query(fd, &q);
	tap_ok(!ret && q.tier_info_size == sizeof(struct svod_tier_info) &&
	       arr[SVOD_TIER_INFO_SIZE_VER0] == 0xa5 && ((struct svod_tier_info *)arr)->capacity,
	       "query_element_size_0_means_first_layout (out %u, %s)", q.tier_info_size,
	       ht_err(ret));

	q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = (uintptr_t)arr,
				 .tier_info_size = SVOD_TIER_INFO_SIZE_VER0 - 8 };
	tap_errno(svod_query(fd, &q), -EINVAL, "query_element_smaller_than_first_layout_einval");
	q.tier_info_size = SVOD_TIER_INFO_SIZE_VER0 + 4;
	tap_errno(svod_query(fd, &q), -EINVAL, "query_element_size_not_multiple_of_8_einval");
	q.tier_info_size = 8192;
	tap_errno(svod_query(fd, &q), -EINVAL, "query_element_size_above_4096_einval");

	/* A newer binary's larger elements: unknown bytes zeroed, stride kept. */
	memset(arr, 0xa5, sizeof(arr));
	q = (struct svod_query){ .nr_tiers = 2, .tiers_ptr = (uintptr_t)arr,
				 .tier_info_size = (uint32_t)big };
	ret = svod_query(fd, &q);
	t = (const struct svod_tier_info *)(arr + big);
	tap_ok(!ret && q.nr_tiers >= 2 && all_zero(arr + sizeof(*t), 64) &&
	       all_zero(arr + big + sizeof(*t), 64) && t->capacity && t->name[0] &&
	       t->id != ((struct svod_tier_info *)arr)->id && arr[2 * big] == 0xa5,
	       "query_larger_elements_zero_filled_at_stride (%u tiers, %s)", q.nr_tiers,
	       ht_err(ret));

	memset(arr, 0xa5, sizeof(arr));
	q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = (uintptr_t)arr,
				 .tier_info_size = SVOD_TIER_INFO_SIZE_VER0 };
	ret = svod_query(fd, &q);
	tap_ok(!ret && arr[SVOD_TIER_INFO_SIZE_VER0] == 0xa5,
	       "query_writes_no_byte_past_nr_tiers_elements (%s)", ht_err(ret));

	q = (struct svod_query){ .nr_regions = 1 };
	tap_errno(svod_query(fd, &q), -EFAULT, "query_regions_ptr_zero_with_count_efault");

	q = (struct svod_query){ .nr_regions = 0 };
	ret = svod_query(fd, &q);
	tap_ok(!ret && q.nr_regions < 1024, "query_counts_regions (%u, %s)", q.nr_regions,
	       ht_err(ret));
}

/* STAGE/READ: `done` goes back whatever the outcome. */
static int xfer_done(unsigned long cmd, uint64_t handle, uint64_t offset, void *p,
		     uint64_t length, uint32_t flags, uint64_t *done)
{
	struct svod_xfer x = {
		.handle = handle, .offset = offset, .user_ptr = (uintptr_t)p,
		.length = length, .flags = flags, .done = DONE_POISON,
	};
	int ret = svod_ioctl(fd, cmd, &x);

	*done = x.done;
	return ret;
}

static int have_dma(uint64_t h)
{
	return svod_stage(fd, h, 0, xbuf, 1, SVOD_XFER_DMA, NULL) == 0;
}

/* The BAR 2 byte at device address @addr of the tier, mapped read-only. */
static volatile uint8_t *bar_byte(uint64_t addr, void **map, size_t *len)
{
	volatile uint8_t *at;

	return ht_bar2_map(&tier, addr, 1, &at, map, len) ? NULL : at;
}

/*
 * A DMA STAGE killed by SIGKILL once its first chunk is in the BAR: the
 * struct, in shared memory, says how far it got.
 */
static void test_done_eintr(uint64_t h, uint64_t addr, uint64_t len)
{
	volatile uint8_t *last;
	struct svod_xfer *x;
	unsigned int ms = 0;
	size_t map_len = 0;
	void *map = NULL;
	uint8_t *src;
	pid_t pid;
	int status;

	x = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	src = malloc(len);
	if (x == MAP_FAILED || !src) {
		tap_ok(0, "stage_eintr_writes_done (no memory)");
		return;
	}
	memset(src, 0x5a, len);
	*x = (struct svod_xfer){ .handle = h, .user_ptr = (uintptr_t)src, .length = len,
				 .flags = SVOD_XFER_DMA, .done = DONE_POISON };
	pid = fork();
	if (pid == 0) {
		ioctl(fd, SVOD_IOCTL_STAGE, x);
		_exit(0);
	}
	/*
	 * One 64 KiB DMA chunk takes seconds here: kill during the second,
	 * once its first 4 KiB hop is in the BAR (the first chunk is then
	 * counted; a kill while the driver still waits for the first chunk's
	 * completion would rightly report 0).
	 */
	last = bar_byte(addr + (64 << 10) + 4095, &map, &map_len);
	while (last && *last != 0x5a && ms < 60000) {
		usleep(20 * 1000);
		ms += 20;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	tap_ok(WIFSIGNALED(status) && x->done >= 64 << 10 && x->done < len &&
	       x->done % (64 << 10) == 0,
	       "stage_eintr_writes_done_in_whole_chunks (done %llu of %llu)",
	       (unsigned long long)x->done, (unsigned long long)len);
	munmap(x, 4096);
	if (map)
		munmap(map, map_len);
	free(src);
}

static void test_done(void)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t big = (1 << 20) + ps, done, old_timeout;
	struct svod_alloc a;
	uint8_t *p;
	int ret;

	ret = xfer_done(SVOD_IOCTL_STAGE, live_handle, 0, xbuf, 8, 1U << 7, &done);
	tap_ok(ret == -EINVAL && done == 0, "stage_einval_writes_done_0 (%s, %llx)",
	       ht_err(ret), (unsigned long long)done);
	/* Another generation of the same slot: stale, whatever else is live. */
	ret = xfer_done(SVOD_IOCTL_READ, live_handle ^ (1ULL << 63), 0, xbuf, 8, 0, &done);
	tap_ok(ret == -ESTALE && done == 0, "read_estale_writes_done_0 (%s, %llx)",
	       ht_err(ret), (unsigned long long)done);
	ret = xfer_done(SVOD_IOCTL_STAGE, live_handle, 4090, xbuf, 8, 0, &done);
	tap_ok(ret == -ERANGE && done == 0, "stage_erange_writes_done_0 (%s, %llx)",
	       ht_err(ret), (unsigned long long)done);

	/* 1 MiB then a PROT_NONE page: the CPU engine's first chunk moves. */
	p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = p == MAP_FAILED ? -ENOMEM : svod_alloc(fd, tier.id, big, 0, &a);
	if (!ret) {
		memset(p, 0x3c, big);
		mprotect(p + (1 << 20), ps, PROT_NONE);
		ret = xfer_done(SVOD_IOCTL_STAGE, a.handle, 0, p, big, SVOD_XFER_CPU, &done);
	}
	tap_ok(ret == -EFAULT && done == 1 << 20,
	       "stage_efault_midway_writes_done_of_whole_chunks (%s, done %llu)",
	       ht_err(ret), (unsigned long long)done);

	if (!ret || ret == -EFAULT) {
		if (!have_dma(a.handle)) {
			tap_skip("no DMA_MEMCPY channel in this guest", "stage_etimedout_writes_done");
			tap_skip("no DMA_MEMCPY channel in this guest", "stage_eintr_writes_done");
		} else {
			ret = svod_param_read("dma_timeout_ms", &old_timeout);
			if (!ret)
				ret = svod_param_write("dma_timeout_ms", 1);
			if (!ret) {
				mprotect(p + (1 << 20), ps, PROT_READ | PROT_WRITE);
				ret = xfer_done(SVOD_IOCTL_STAGE, a.handle, 0, p, 128 << 10,
						SVOD_XFER_DMA, &done);
				svod_param_write("dma_timeout_ms", old_timeout);
			}
			tap_ok(ret == -ETIMEDOUT && done == 0,
			       "stage_etimedout_writes_done_0 (%s, %llx)", ht_err(ret),
			       (unsigned long long)done);
			test_done_eintr(a.handle, a.device_addr, 256 << 10);
		}
		svod_free(fd, a.handle);
	} else {
		tap_ok(0, "stage_etimedout_writes_done (setup failed)");
		tap_ok(0, "stage_eintr_writes_done (setup failed)");
	}
	if (p != MAP_FAILED)
		munmap(p, big);
}

static void test_plan_outputs(void)
{
	struct svod_plan_event ev[2] = {
		{ .op = SVOD_PLAN_ALLOC, .id = 1, .size = 4096 },
		{ .op = SVOD_PLAN_ALLOC, .id = 2, .size = 4096 },
	};
	uint64_t off[2];
	struct svod_plan p = {
		.arena_size = 4096, .block_size = 256, .lv2_cnt = 32, .nr_events = 2,
		.events_ptr = (uintptr_t)ev, .offsets_ptr = (uintptr_t)off,
		.flags = 1, .peak = 77, .lower_bound = 77, .failed_event = 77,
	};
	int ret;

	ret = svod_plan(fd, &p);
	tap_ok(ret == -EINVAL && p.peak == 0 && p.lower_bound == 0 && p.failed_event == ~0U,
	       "plan_refused_early_writes_cleared_outputs (%s)", ht_err(ret));
	p.flags = 0;
	ret = svod_plan(fd, &p);
	tap_ok(ret == -ENOSPC && p.failed_event == 1 && off[0] == 0,
	       "plan_enospc_writes_where_it_stopped (%s, failed_event %u)", ht_err(ret),
	       p.failed_event);
}

/*
 * PLAN's event_size: a newer binary's larger events (zero tails) plan the
 * same offsets as 24-byte ones; a nonzero tail is E2BIG; sizes below the
 * first layout, not a multiple of 8 or past 4096 are EINVAL, as is pad3.
 */
static void test_plan_event_size(void)
{
	struct big_event {
		struct svod_plan_event ev;
		uint64_t tail[2];
	} big[3] = {
		{ .ev = { .op = SVOD_PLAN_ALLOC, .id = 1, .size = 1000 } },
		{ .ev = { .op = SVOD_PLAN_ALLOC, .id = 2, .size = 300, .align = 512 } },
		{ .ev = { .op = SVOD_PLAN_FREE, .id = 1 } },
	};
	struct svod_plan_event ev[3] = { big[0].ev, big[1].ev, big[2].ev };
	uint64_t off[3], off40[3];
	struct svod_plan p = {
		.arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32, .nr_events = 3,
		.events_ptr = (uintptr_t)ev, .offsets_ptr = (uintptr_t)off,
	};
	struct svod_plan q = p;
	static const uint32_t bad[] = { 16, 28, 4104 };
	unsigned int i;
	int ret, r40;

	ret = svod_plan(fd, &p);
	q.events_ptr = (uintptr_t)big;
	q.offsets_ptr = (uintptr_t)off40;
	q.event_size = sizeof(big[0]);
	r40 = svod_plan(fd, &q);
	tap_ok(!ret && !r40 && !memcmp(off, off40, sizeof(off)) && p.peak == q.peak,
	       "plan_event_size_40_zero_tails_plans_the_same (%s, %s)", ht_err(ret), ht_err(r40));

	big[2].tail[1] = 1;
	tap_errno(svod_plan(fd, &q), -E2BIG, "plan_event_nonzero_tail_e2big");
	for (i = 0; i < 3; i++) {
		q.event_size = bad[i];
		tap_errno(svod_plan(fd, &q), -EINVAL, "plan_event_size_%u_einval", bad[i]);
	}
	q.event_size = 0;
	q.pad3 = 1;
	tap_errno(svod_plan(fd, &q), -EINVAL, "plan_pad3_einval");
}

/* FREE is _IOW: its struct is only read, so a read-only one works. */
static void test_free_reads_only(void)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	struct svod_free *f;
	struct svod_alloc a;
	int ret;

	f = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = f == MAP_FAILED ? -ENOMEM : svod_alloc(fd, tier.id, 4096, 0, &a);
	if (!ret) {
		*f = (struct svod_free){ .handle = a.handle };
		mprotect(f, ps, PROT_READ);
		ret = svod_ioctl(fd, SVOD_IOCTL_FREE, f);
	}
	tap_ok(!ret && _IOC_DIR(SVOD_IOCTL_FREE) == _IOC_WRITE,
	       "free_is_iow_and_works_on_a_readonly_struct (%s)", ht_err(ret));
	if (f != MAP_FAILED)
		munmap(f, ps);
}

/*
 * A struct that can be read but not written: the call fails with EFAULT
 * before anything happens (no byte staged, nothing allocated).
 */
static void test_readonly_structs(void)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t src[64], back[64];
	struct svod_xfer *x;
	struct svod_alloc *a;
	uint32_t live;
	void *page;
	int ret;

	page = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		tap_ok(0, "stage_readonly_struct_efault_nothing_staged (no memory)");
		tap_ok(0, "alloc_readonly_struct_efault_nothing_allocated (no memory)");
		return;
	}
	memset(src, 0x77, sizeof(src));
	x = page;
	*x = (struct svod_xfer){ .handle = live_handle, .user_ptr = (uintptr_t)src,
				 .length = sizeof(src) };
	mprotect(page, ps, PROT_READ);
	ret = svod_ioctl(fd, SVOD_IOCTL_STAGE, x);
	memset(back, 0xff, sizeof(back));
	svod_read(fd, live_handle, 0, back, sizeof(back), 0, NULL);
	tap_ok(ret == -EFAULT && all_zero(back, sizeof(back)),
	       "stage_readonly_struct_efault_nothing_staged (%s)", ht_err(ret));

	mprotect(page, ps, PROT_READ | PROT_WRITE);
	a = page;
	*a = (struct svod_alloc){ .tier = tier.id, .size = 4096 };
	mprotect(page, ps, PROT_READ);
	live = tier_live();
	ret = svod_ioctl(fd, SVOD_IOCTL_ALLOC, a);
	tap_ok(ret == -EFAULT && tier_live() == live,
	       "alloc_readonly_struct_efault_nothing_allocated (%s)", ht_err(ret));
	munmap(page, ps);
}

/*
 * Every _IOWR command with a struct that can be read but not written:
 * EFAULT, and nothing of the driver's left behind (ALLOC undoes itself;
 * STAGE and READ write the struct back before they run; the others change
 * nothing). PLAN has filled its offsets array by then: the caller's output.
 */
static void test_readonly_each(void)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	const struct cmd *c;
	unsigned int i;
	void *page;
	int ret;

	page = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < NR_CMDS; i++) {
		c = &cmds[i];
		if (c->dir != RW)
			continue;
		ret = -ENOMEM;
		if (page != MAP_FAILED) {
			mprotect(page, ps, PROT_READ | PROT_WRITE);
			memset(page, 0, ps);
			c->fill(page);
			mprotect(page, ps, PROT_READ);
			ret = call(c, c->size, page);
		}
		tap_ok(ret == -EFAULT && (c->nr == 0x06 || c->untouched()),
		       "%s_readonly_struct_efault_nothing_left (%s)", c->name, ht_err(ret));
	}
	if (page != MAP_FAILED)
		munmap(page, ps);
}

/* Argument errors come before any state: an unknown tier cannot hide them. */
static void test_argument_errors_first(void)
{
	struct svod_alloc a = { .tier = 0xfffffff0U, .size = 0 };

	tap_errno(svod_ioctl(fd, SVOD_IOCTL_ALLOC, &a), -EINVAL,
		  "alloc_size_0_on_unknown_tier_einval");
	a = (struct svod_alloc){ .tier = 0xfffffff0U, .size = 4096, .align = 3 };
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_ALLOC, &a), -EINVAL,
		  "alloc_align_3_on_unknown_tier_einval");
}

int main(void)
{
	struct svod_alloc a;
	size_t ps;
	uint8_t *page;
	unsigned int i;
	int ret;

	tap_plan(NR_CASES);
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	if (!ret)
		ret = svod_alloc_flags(fd, tier.id, 4096, 0, SVOD_ALLOC_MAPPABLE, &a);
	mappable = a.handle;
	if (!ret)
		ret = svod_alloc(fd, tier.id, 4096, 0, &a);
	page = ht_guarded_page(&ps);
	if (ret || !page) {
		tap_diag("setup failed: %s", ht_err(ret));
		return tap_done();
	}
	live_handle = a.handle;
	ret = svod_export(fd, mappable, SVOD_EXPORT_WRITE, &share_fd, NULL);
	if (ret)
		tap_diag("no dma-buf to import: EXPORT %s", ht_err(ret));

	for (i = 0; i < NR_CMDS; i++)
		test_sizes(&cmds[i], page + ps);
	test_mid_layouts(page + ps);
	test_query_elements();
	test_done();
	test_plan_outputs();
	test_plan_event_size();
	test_free_reads_only();
	test_readonly_structs();
	test_readonly_each();
	test_argument_errors_first();

	svod_free(fd, live_handle);
	svod_free(fd, mappable);
	if (share_fd >= 0)
		close(share_fd);
	if (victim)
		svod_free(fd, victim);
	ht_unguard_page(page, ps);
	svod_close(fd);
	return tap_done();
}
