// SPDX-License-Identifier: GPL-2.0
/*
 * t_failnth: systematic fault injection, syzkaller's fail-nth style. For
 * each call (open, close, every ioctl, a declaration's commit, a bind), the
 * 1st, 2nd, ... fault-injection point of that call fails
 * (/proc/thread-self/fail-nth), until the call succeeds without one. The
 * points are slab allocations (failslab, ignore-gfp-wait=N), page
 * allocations of any order and gfp (fail_page_alloc, ignore-gfp-wait=N,
 * ignore-gfp-highmem=N, min-order=0) and user copies (fail_usercopy), all
 * verbose=0 so the injection itself prints nothing. An injected page
 * allocation failure returns before the page allocator's own warning
 * (prepare_alloc_pages()), but a caller may report it: SLUB prints
 * "SLUB: Unable to allocate memory" for a slab it could not grow, vmalloc
 * "vmalloc error" with a call trace when its caller did not pass
 * __GFP_NOWARN. The sweeps therefore run between the kernel log markers
 * "svod-failnth: page-alloc sweep begin" and "... end"; between them the
 * judge (tools/rig/judge.py) lets through those allocation-failure reports
 * and their call traces only, never a WARNING, BUG, KASAN, lockdep or Oops
 * report. Every step must return a documented errno for that call and
 * change nothing (tier free bytes, live allocations, a handle still
 * resolving after a failed FREE, the device's tier set after a failed
 * commit, the device unbound after a failed bind); the judge checks
 * kmemleak and the console afterwards.
 *
 * EXPORT sweeps the dma-buf's making (its file, its mmap range, the fd; a
 * failure leaves no fd open and the handle as it was), IMPORT the new
 * handle (a failure leaves no handle).
 *
 * An asynchronous STAGE with a fence fd sweeps the submission (the pinned
 * buffer, the job, the timeline's history, the sync_file and its fd); the
 * transfer's completion runs in the driver's worker and allocates nothing.
 * A failed one leaves no fd open, also when the reply with the fd's number
 * was what could not be written (the fd is installed only after it).
 * The same with an in-fence (another asynchronous transfer's sync_file)
 * also sweeps the wait's setup (the fence's reference, its callback, the
 * timer): a failure leaves no fd open and the in-fence's fd as it was.
 * BATCH sweeps the same for three entries (a STAGE, a READ, a STAGE; their
 * copy, the arrays, the pins, the job, the sync_file): a failed one also
 * leaves nothing in flight and no page pinned (fdinfo).
 *
 * READ into a buffer whose second page lies in a fresh private mapping
 * (pinning it allocates the mapping's anon_vma, a page table, the page): a
 * failure there is a lack of memory, never EFAULT, so that sweep has more
 * steps, and in neither sweep does an EFAULT come from the handler (a step
 * whose EFAULT is the struct's own copy leaves done unwritten).
 *
 * Skipped where the kernel lacks failslab or fail_page_alloc (the stock
 * kernel).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	18

#define DBG		"/sys/kernel/debug"
#define MAX_STEPS	4000
#define ALLOC_LEN	(64u << 10)

static int fd = -1, nth_fd = -1;
static struct svod_tier_info t0;
static char bdf1[SVOD_NAME_LEN], orig1[4096];
static size_t page_size;

/* A line in the kernel log, for the judge (see the file's header). */
static void kmsg_mark(const char *what)
{
	char line[96];
	int f = open("/dev/kmsg", O_WRONLY);
	int len = snprintf(line, sizeof(line), "svod-failnth: page-alloc sweep %s\n", what);

	if (f < 0 || write(f, line, (size_t)len) != len)
		tap_diag("kmsg marker '%s' not written: %s", what, strerror(errno));
	if (f >= 0)
		close(f);
}

static void inject(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	/* Clearing may itself consume the last point (EFAULT): it is 0 then. */
	if (pwrite(nth_fd, b, (size_t)len, 0) != len && n)
		tap_diag("fail-nth write: %s", strerror(errno));
}

/* Did the point fire? Clears fail-nth either way. */
static int fired(void)
{
	char b[16] = "";
	ssize_t n = pread(nth_fd, b, sizeof(b) - 1, 0);

	if (n > 0 && atoi(b) == 0)
		return 1;
	inject(0);
	return 0;
}

struct usage {
	uint64_t free_bytes;
	uint32_t nr_live;
};

static int usage_of(struct usage *u)
{
	return ht_tier_usage(fd, t0.id, &u->free_bytes, &u->nr_live);
}

static int same_usage(const struct usage *a)
{
	struct usage b;

	return !usage_of(&b) && b.free_bytes == a->free_bytes && b.nr_live == a->nr_live;
}

/* One sweep's result. */
struct sweep {
	unsigned int steps, bad_errno, changed, efault, enomem;
	int done;
	char errs[128];
};

static void note(struct sweep *s, int ret, const int *ok)
{
	const int *e;
	char *p;

	s->efault += ret == -EFAULT;
	s->enomem += ret == -ENOMEM;
	for (e = ok; *e; e++) {
		if (ret == *e)
			return;
	}
	s->bad_errno++;
	p = s->errs + strlen(s->errs);
	if (p - s->errs < (long)sizeof(s->errs) - 24)
		snprintf(p, 24, " %s@%u", ht_err(ret), s->steps);
}

static void report(const struct sweep *s, const char *name)
{
	tap_ok(s->done && !s->bad_errno && !s->changed,
	       "failnth_%s (%u steps: %u ENOMEM, %u EFAULT; %u bad errnos%s, %u changed state%s)",
	       name, s->steps, s->enomem, s->efault, s->bad_errno, s->errs, s->changed,
	       s->done ? "" : "; never succeeded");
}

static const int mem_fault[] = { -ENOMEM, -EFAULT, 0 };

static void sweep_open(void)
{
	/* EFAULT: the kernel's copy of the path itself failed. */
	static const int ok[] = { -ENOMEM, -EFAULT, -ENFILE, -EMFILE, 0 };
	struct sweep s = { 0 };
	struct usage u;
	int f;

	usage_of(&u);
	for (s.steps = 1; s.steps <= MAX_STEPS && !s.done; s.steps++) {
		inject(s.steps);
		f = open("/dev/svod", O_RDWR);
		f = f < 0 ? -errno : f;
		if (!fired()) {
			s.done = f >= 0;
		} else if (f < 0) {
			note(&s, f, ok);
		}
		if (f >= 0)
			close(f);
		s.changed += !same_usage(&u);
	}
	report(&s, "open");
}

static void sweep_close(void)
{
	struct sweep s = { 0 };
	struct svod_alloc a;
	struct usage u;
	int f, ret;

	usage_of(&u);
	for (s.steps = 1; s.steps <= MAX_STEPS && !s.done; s.steps++) {
		f = ht_open();
		if (f < 0 || svod_alloc(f, t0.id, ALLOC_LEN, 0, &a)) {
			s.changed++;
			break;
		}
		inject(s.steps);
		ret = close(f) ? -errno : 0;
		s.done = !fired();
		if (ret)
			note(&s, ret, (const int[]){ 0 });
		s.changed += ht_wait_free(fd, t0.id, u.free_bytes, 2000) != 0;
	}
	report(&s, "close");
}

/*
 * The generic ioctl sweep: @call runs under injection, @check says whether
 * the state is as before after a failure, @undo cleans after a success.
 */
struct ictx {
	struct svod_alloc a;
	void *buf;
	size_t len;
	uint64_t done;		/* STAGE/READ: the struct's done after the call */
	int dmabuf;		/* EXPORT's fd, -1 without one */
	int next_fd;		/* the lowest free fd number before the call */
	long handles;		/* the file's live handles before the call */
	uint64_t imported;	/* IMPORT's handle, 0 without one */
	int in_fence;		/* an in-fence's sync_file, 0 without one */
};

/* done before a call: still there afterwards if the struct was not written. */
#define DONE_POISON	0xdeadbeefULL

static void sweep_ioctl(const char *name, const int *ok,
			int (*prep)(struct ictx *), int (*call)(struct ictx *),
			int (*check)(struct ictx *), void (*undo)(struct ictx *))
{
	struct sweep s = { 0 };
	struct ictx c;
	struct usage u;
	int ret;

	for (s.steps = 1; s.steps <= MAX_STEPS && !s.done; s.steps++) {
		memset(&c, 0, sizeof(c));
		if ((prep && prep(&c)) || usage_of(&u)) {
			s.changed++;
			break;
		}
		inject(s.steps);
		ret = call(&c);
		s.done = !fired();
		if (s.done && ret)
			note(&s, ret, (const int[]){ 0 });
		/* A failed point the call absorbs (it succeeds) is fine. */
		if (!s.done && ret) {
			note(&s, ret, ok);
			s.changed += !same_usage(&u) || (check && !check(&c));
		}
		if (undo)
			undo(&c);
	}
	report(&s, name);
}

static int prep_alloc(struct ictx *c)
{
	return svod_alloc(fd, t0.id, ALLOC_LEN, 0, &c->a);
}

static void undo_free(struct ictx *c)
{
	if (c->a.handle)
		svod_free(fd, c->a.handle);
}

static int call_query(struct ictx *c)
{
	static struct svod_tier_info tiers[64];
	struct svod_query q = { .nr_tiers = 64, .tiers_ptr = (uintptr_t)tiers };

	(void)c;
	return svod_ioctl(fd, SVOD_IOCTL_QUERY, &q);
}

static int call_alloc(struct ictx *c)
{
	struct svod_alloc a = { .tier = t0.id, .size = ALLOC_LEN };
	int ret = svod_ioctl(fd, SVOD_IOCTL_ALLOC, &a);

	if (!ret)
		c->a = a;
	else if (a.handle)
		c->a.handle = 0;
	return ret;
}

static int call_free(struct ictx *c)
{
	struct svod_free f = { .handle = c->a.handle };
	int ret = svod_ioctl(fd, SVOD_IOCTL_FREE, &f);

	if (!ret)
		c->a.handle = 0;
	return ret;
}

static int check_resolves(struct ictx *c)
{
	struct svod_resolve r;

	return !svod_resolve(fd, c->a.handle, &r) && r.device_addr == c->a.device_addr;
}

static int call_resolve(struct ictx *c)
{
	struct svod_resolve r = { .handle = c->a.handle };

	return svod_ioctl(fd, SVOD_IOCTL_RESOLVE, &r);
}

static int xfer(struct ictx *c, unsigned long cmd, void *buf)
{
	struct svod_xfer x = {
		.handle = c->a.handle,
		.user_ptr = (uintptr_t)buf,
		.length = c->len,
		.flags = SVOD_XFER_CPU,
		.done = DONE_POISON,
	};
	int ret = svod_ioctl(fd, cmd, &x);

	c->done = x.done;
	return ret;
}

static uint8_t faulted[2 * 65536];

static int prep_faulted(struct ictx *c)
{
	c->len = 2 * page_size;
	memset(faulted, 0x3c, c->len);
	return prep_alloc(c);
}

static int call_stage(struct ictx *c)
{
	return xfer(c, SVOD_IOCTL_STAGE, faulted);
}

static int call_read(struct ictx *c)
{
	return xfer(c, SVOD_IOCTL_READ, faulted);
}

/*
 * An asynchronous STAGE with a fence fd, then its end: every allocation is
 * the submission's (the completion allocates nothing), so a failed point
 * fails the call, which queues nothing; a call that went through is
 * waited for and its fence closed.
 */
static int call_stage_async(struct ictx *c)
{
	struct svod_xfer x = {
		.handle = c->a.handle, .user_ptr = (uintptr_t)faulted, .length = c->len,
		.flags = SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD, .fence_fd = -1,
	};
	struct svod_wait w = { .deadline_ns = INT64_MAX };
	int ret = svod_ioctl(fd, SVOD_IOCTL_STAGE, &x);

	if (ret)
		return ret;
	w.seqno = x.seqno;
	ret = svod_ioctl(fd, SVOD_IOCTL_WAIT, &w);
	if (x.fence_fd >= 0)
		close(x.fence_fd);
	return ret ? ret : w.status;
}

/* The lowest free fd number: a failed call that left an fd open moves it. */
static int lowest_free_fd(void)
{
	int f = dup(0);

	if (f >= 0)
		close(f);
	return f;
}

static int prep_stage_async(struct ictx *c)
{
	c->next_fd = lowest_free_fd();
	return prep_faulted(c);
}

/*
 * After a failed asynchronous STAGE: no fence fd left open (one whose reply
 * could not be written back is never installed), the handle resolves.
 */
static int check_stage_async(struct ictx *c)
{
	return lowest_free_fd() == c->next_fd && check_resolves(c);
}

/* A zero-length asynchronous STAGE's sync_file: the next call's in-fence. */
static int prep_stage_async_in_fence(struct ictx *c)
{
	struct svod_xfer x = { .flags = SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD };
	int ret = prep_faulted(c);

	x.handle = c->a.handle;
	ret = ret ? ret : svod_ioctl(fd, SVOD_IOCTL_STAGE, &x);
	if (!ret)
		c->in_fence = x.fence_fd;
	c->next_fd = lowest_free_fd();
	return ret;
}

/* As stage_async, after the in-fence. */
static int call_stage_async_in_fence(struct ictx *c)
{
	struct svod_xfer x = {
		.handle = c->a.handle, .user_ptr = (uintptr_t)faulted, .length = c->len,
		.flags = SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD | SVOD_XFER_IN_FENCE,
		.fence_fd = -1, .in_fence_fd = c->in_fence,
	};
	struct svod_wait w = { .deadline_ns = INT64_MAX };
	int ret = svod_ioctl(fd, SVOD_IOCTL_STAGE, &x);

	if (ret)
		return ret;
	w.seqno = x.seqno;
	ret = svod_ioctl(fd, SVOD_IOCTL_WAIT, &w);
	if (x.fence_fd >= 0)
		close(x.fence_fd);
	return ret ? ret : w.status;
}

/* After a failed one: as stage_async, and the in-fence's fd still open. */
static int check_stage_async_in_fence(struct ictx *c)
{
	return fcntl(c->in_fence, F_GETFD) >= 0 && check_stage_async(c);
}

static void undo_in_fence(struct ictx *c)
{
	if (c->in_fence > 0)
		close(c->in_fence);
	undo_free(c);
}

/* BATCH of three entries with a fence fd, then its end (as stage_async). */
static int call_batch(struct ictx *c)
{
	struct svod_batch_entry e[3] = {
		{ .handle = c->a.handle, .user_ptr = (uintptr_t)faulted, .length = c->len,
		  .op = SVOD_BATCH_STAGE },
		{ .handle = c->a.handle, .offset = c->len, .user_ptr = (uintptr_t)faulted,
		  .length = page_size, .op = SVOD_BATCH_READ },
		{ .handle = c->a.handle, .offset = 3 * c->len, .user_ptr = (uintptr_t)faulted,
		  .length = 1, .op = SVOD_BATCH_STAGE },
	};
	struct svod_batch b = { .entries_ptr = (uintptr_t)e, .nr_entries = 3,
				.flags = SVOD_BATCH_FENCE_FD, .fence_fd = -1 };
	struct svod_wait w = { .deadline_ns = INT64_MAX };
	int ret = svod_ioctl(fd, SVOD_IOCTL_BATCH, &b);

	if (ret)
		return ret;
	w.seqno = b.seqno;
	ret = svod_ioctl(fd, SVOD_IOCTL_WAIT, &w);
	if (b.fence_fd >= 0)
		close(b.fence_fd);
	return ret ? ret : w.status;
}

/*
 * After a failed BATCH: as after STAGE, and nothing in flight or pinned
 * (within 2 s: an earlier step's batch that went through unpins in its
 * cleanup work, after its fence signalled).
 */
static int check_batch(struct ictx *c)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (ht_fdinfo_value(getpid(), fd, "svod-async-inflight") == 0 &&
		    ht_fdinfo_value(getpid(), fd, "svod-async-pinned") == 0)
			return check_stage_async(c);
		usleep(10000);
	}
	return 0;
}

/* The file's live handles in t0 (fdinfo's svod-handles-<tier>), or < 0. */
static long file_handles(void)
{
	char key[64];

	snprintf(key, sizeof(key), "svod-handles-%s", t0.name);
	return (long)ht_fdinfo_value(getpid(), fd, key);
}

static int prep_export(struct ictx *c)
{
	c->dmabuf = -1;
	c->next_fd = lowest_free_fd();
	return svod_alloc_flags(fd, t0.id, ALLOC_LEN, 0, SVOD_ALLOC_MAPPABLE, &c->a);
}

static int call_export(struct ictx *c)
{
	struct svod_export e = { .handle = c->a.handle, .flags = SVOD_EXPORT_WRITE, .fd = -1 };
	int ret = svod_ioctl(fd, SVOD_IOCTL_EXPORT, &e);

	if (!ret)
		c->dmabuf = e.fd;
	return ret;
}

/* After a failed EXPORT: no fd left open, the handle still resolves. */
static int check_export(struct ictx *c)
{
	return c->dmabuf < 0 && lowest_free_fd() == c->next_fd && check_resolves(c);
}

static void undo_share(struct ictx *c)
{
	if (c->imported)
		svod_free(fd, c->imported);
	if (c->dmabuf >= 0)
		close(c->dmabuf);
	undo_free(c);
}

/* An exported allocation: IMPORT of its dma-buf into the same file. */
static int prep_import(struct ictx *c)
{
	int ret = prep_export(c);

	ret = ret ? ret : call_export(c);
	c->handles = file_handles();
	return ret ? ret : c->handles < 0;
}

static int call_import(struct ictx *c)
{
	struct svod_import im = { .fd = c->dmabuf };
	int ret = svod_ioctl(fd, SVOD_IOCTL_IMPORT, &im);

	if (!ret)
		c->imported = im.handle;
	return ret;
}

/* After a failed IMPORT: no new handle, the exporter's still resolves. */
static int check_import(struct ictx *c)
{
	return !c->imported && file_handles() == c->handles && check_resolves(c);
}

/* Page 0 shared (faulted in), page 1 a fresh private mapping next to it. */
static int prep_fresh(struct ictx *c)
{
	uint8_t *p = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (mmap(p + page_size, page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		munmap(p, 2 * page_size);
		return -1;
	}
	p[0] = 1;
	c->buf = p;
	c->len = 2 * page_size;
	return prep_alloc(c);
}

static int call_read_fresh(struct ictx *c)
{
	return xfer(c, SVOD_IOCTL_READ, c->buf);
}

static void undo_fresh(struct ictx *c)
{
	undo_free(c);
	if (c->buf)
		munmap(c->buf, 2 * page_size);
}

static int call_plan(struct ictx *c)
{
	struct svod_plan_event ev[3] = {
		{ .op = SVOD_PLAN_ALLOC, .id = 1, .size = 256 },
		{ .op = SVOD_PLAN_ALLOC, .id = 2, .size = 1024 },
		{ .op = SVOD_PLAN_FREE, .id = 1 },
	};
	uint64_t off[3];
	struct svod_plan p = { .arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32,
			       .nr_events = 3, .events_ptr = (uintptr_t)ev,
			       .offsets_ptr = (uintptr_t)off };

	(void)c;
	return svod_plan(fd, &p);
}

/*
 * Two READ sweeps: over a buffer faulted in, and over one whose second page
 * is fresh (its pin faults it in, allocating). A step's EFAULT is the
 * struct's own copy failing (then done is not written: it keeps its poison)
 * or the handler's (done written back): the latter would be a lack of
 * memory reported as a bad address.
 */
static void sweep_read_pressure(void)
{
	struct sweep s[2] = { { 0 } };
	unsigned int handler_efault[2] = { 0, 0 };
	struct ictx c;
	struct usage u;
	unsigned int k;
	int ret;

	for (k = 0; k < 2; k++) {
		for (s[k].steps = 1; s[k].steps <= MAX_STEPS && !s[k].done; s[k].steps++) {
			memset(&c, 0, sizeof(c));
			if ((k ? prep_fresh(&c) : prep_faulted(&c)) || usage_of(&u)) {
				s[k].changed++;
				break;
			}
			inject(s[k].steps);
			ret = k ? call_read_fresh(&c) : call_read(&c);
			s[k].done = !fired();
			if (!s[k].done && ret) {
				note(&s[k], ret, mem_fault);
				s[k].changed += !same_usage(&u);
				handler_efault[k] += ret == -EFAULT && c.done != DONE_POISON;
			}
			k ? undo_fresh(&c) : undo_free(&c);
		}
	}
	report(&s[0], "read");
	/*
	 * The fresh page adds points in the pin (anon_vma, page table, the
	 * page): each must end as ENOMEM or, pinned again once the injected
	 * failure is past, success. No EFAULT may come from the handler in
	 * either sweep; the struct's own copies fail with EFAULT in both, as
	 * often as the points of the sweep happen to land on them.
	 */
	tap_ok(s[1].done && !s[1].bad_errno && !handler_efault[0] && !handler_efault[1] &&
	       s[1].steps > s[0].steps,
	       "failnth_read_short_pin_is_enomem_not_efault (fresh page: %u steps, %u EFAULT, %u from the handler, %u ENOMEM; faulted: %u steps, %u EFAULT, %u from the handler, %u ENOMEM)",
	       s[1].steps, s[1].efault, handler_efault[1], s[1].enomem, s[0].steps,
	       s[0].efault, handler_efault[0], s[0].enomem);
}

/* Tier ids of @bdf that are not gone, as one string. */
static void live_ids(const char *bdf, char *out, size_t len)
{
	struct svod_tier_info *tiers;
	uint32_t nr, i;
	size_t n = 0;

	out[0] = '\0';
	if (svod_query_all(fd, &tiers, &nr))
		return;
	for (i = 0; i < nr && n + 16 < len; i++) {
		if (!(tiers[i].flags & SVOD_TIER_GONE) && !strcmp(tiers[i].device, bdf))
			n += (size_t)snprintf(out + n, len - n, "%u,", tiers[i].id);
	}
	free(tiers);
}

/* A commit of @bdf1 replacing its default tier by a 4 MiB one. */
static void sweep_commit(void)
{
	static const int ok[] = { -ENOMEM, -EFAULT, 0 };
	char path[256], before[128], after[128], def[SVOD_NAME_LEN] = "";
	struct svod_tier_decl d;
	struct sweep s = { 0 };
	int f, ret;

	if (!bdf1[0] || svod_decl_parse(orig1, &d)) {
		tap_skip("no second device", "failnth_commit");
		return;
	}
	memcpy(def, d.name, sizeof(def));
	snprintf(path, sizeof(path), SVOD_CONFIGFS "/%s/commit", bdf1);
	for (s.steps = 1; s.steps <= MAX_STEPS && !s.done; s.steps++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "tiers/%s", def);
		ht_cfs_rmdir(bdf1, rel);
		ret = ht_cfs_mkdir(bdf1, "tiers/fnth");
		ret = ret ? ret : ht_cfs_write(bdf1, "tiers/fnth/bar", "2");
		ret = ret ? ret : ht_cfs_write(bdf1, "tiers/fnth/offset", "0");
		ret = ret ? ret : ht_cfs_write(bdf1, "tiers/fnth/size", "4M");
		f = open(path, O_WRONLY);
		if (ret || f < 0) {
			s.changed++;
			break;
		}
		live_ids(bdf1, before, sizeof(before));
		inject(s.steps);
		ret = write(f, "1", 1) == 1 ? 0 : -errno;
		s.done = !fired();
		close(f);
		if (!s.done && ret) {
			note(&s, ret, ok);
			live_ids(bdf1, after, sizeof(after));
			s.changed += strcmp(before, after) != 0;
		}
		ht_cfs_rmdir(bdf1, "tiers/fnth");
		if (svod_tiers_write(bdf1, orig1)) {
			s.changed++;
			break;
		}
	}
	report(&s, "declare_commit");
}

static void sweep_bind(void)
{
	/* EBUSY: the PCI core reports any failed region request so. */
	static const int ok[] = { -ENOMEM, -EFAULT, -ENODEV, -EBUSY, 0 };
	char path[256], ids[128];
	struct sweep s = { 0 };
	int f, ret;

	if (!bdf1[0]) {
		tap_skip("no second device", "failnth_bind");
		return;
	}
	snprintf(path, sizeof(path), SVOD_SYSFS_DRIVER "/bind");
	for (s.steps = 1; s.steps <= MAX_STEPS && !s.done; s.steps++) {
		live_ids(bdf1, ids, sizeof(ids));
		if ((ids[0] && svod_driver_bind(bdf1, 0)) || (f = open(path, O_WRONLY)) < 0) {
			s.changed++;
			break;
		}
		inject(s.steps);
		ret = write(f, bdf1, strlen(bdf1)) == (ssize_t)strlen(bdf1) ? 0 : -errno;
		s.done = !fired();
		close(f);
		live_ids(bdf1, ids, sizeof(ids));
		if (!s.done && ret) {
			note(&s, ret, ok);
			s.changed += ids[0] != '\0';
		} else if (!ids[0]) {
			/* Bound without its tier, or not bound although it said so. */
			s.changed++;
		}
	}
	live_ids(bdf1, ids, sizeof(ids));
	if (!ids[0])
		svod_driver_bind(bdf1, 1);
	report(&s, "bind");
}

int main(void)
{
	static const int xfer_ok[] = { -ENOMEM, -EFAULT, 0 };
	char bdfs[4][SVOD_NAME_LEN];
	int n, i;

	tap_plan(NR_CASES);
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	fd = ht_open();
	if (fd < 0 || ht_first_tier(fd, &t0)) {
		tap_diag("no device");
		return tap_done();
	}
	if (access(DBG "/failslab", F_OK) || access(DBG "/fail_page_alloc", F_OK) ||
	    ht_fail_nth_quiet(true) ||
	    (nth_fd = open("/proc/thread-self/fail-nth", O_RDWR)) < 0) {
		for (i = 0; i < NR_CASES; i++)
			tap_skip("no failslab, fail_page_alloc or fail-nth in this kernel",
				 "failnth case %d", i);
		return tap_done();
	}
	tap_diag("fail_usercopy %s", access(DBG "/fail_usercopy", F_OK) ? "absent" : "present");
	n = svod_devices(bdfs, 4);
	for (i = 0; i < n; i++) {
		if (strcmp(bdfs[i], t0.device)) {
			memcpy(bdf1, bdfs[i], sizeof(bdf1));
			break;
		}
	}
	if (bdf1[0] && svod_tiers_read(bdf1, orig1, sizeof(orig1)) < 0)
		bdf1[0] = '\0';

	kmsg_mark("begin");
	sweep_open();
	sweep_close();
	sweep_ioctl("query", mem_fault, NULL, call_query, NULL, NULL);
	sweep_ioctl("alloc", (const int[]){ -ENOMEM, -EFAULT, -EMFILE, 0 }, NULL,
		    call_alloc, NULL, undo_free);
	sweep_ioctl("free", mem_fault, prep_alloc, call_free, check_resolves, undo_free);
	sweep_ioctl("resolve", mem_fault, prep_alloc, call_resolve, check_resolves, undo_free);
	sweep_ioctl("stage", xfer_ok, prep_faulted, call_stage, check_resolves, undo_free);
	sweep_ioctl("stage_async", (const int[]){ -ENOMEM, -EFAULT, -EMFILE, 0 },
		    prep_stage_async, call_stage_async, check_stage_async, undo_free);
	sweep_ioctl("stage_async_in_fence", (const int[]){ -ENOMEM, -EFAULT, -EMFILE, 0 },
		    prep_stage_async_in_fence, call_stage_async_in_fence,
		    check_stage_async_in_fence, undo_in_fence);
	sweep_ioctl("batch", (const int[]){ -ENOMEM, -EFAULT, -EMFILE, 0 },
		    prep_stage_async, call_batch, check_batch, undo_free);
	sweep_read_pressure();
	sweep_ioctl("export", (const int[]){ -ENOMEM, -EFAULT, -EMFILE, 0 }, prep_export,
		    call_export, check_export, undo_share);
	sweep_ioctl("import", (const int[]){ -ENOMEM, -EFAULT, -EMFILE, 0 }, prep_import,
		    call_import, check_import, undo_share);
	sweep_ioctl("plan", (const int[]){ -ENOMEM, -EFAULT, -EINTR, 0 }, NULL, call_plan,
		    NULL, NULL);
	sweep_commit();
	sweep_bind();
	kmsg_mark("end");
	{
		struct usage u = { 0 };
		int ret = usage_of(&u);

		tap_ok(!ret && u.nr_live == 0 && u.free_bytes == t0.free_bytes,
		       "failnth_tier_back_to_start (%s: %llu free, %u live)", ht_err(ret),
		       (unsigned long long)u.free_bytes, u.nr_live);
	}
	ht_fail_nth_restore(true);
	close(nth_fd);
	close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
