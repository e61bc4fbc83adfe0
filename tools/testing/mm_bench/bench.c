// SPDX-License-Identifier: GPL-2.0
/*
 * svod_mm_bench.ko: svod's core range allocator with its handle table,
 * drm_mm (DRM_MM_INSERT_LOW) and gen_pool (gen_pool_first_fit_align) on the
 * same seeded workload, side by side, in one run. Test-only; never installed.
 *
 * Workload, per level of 1k, 10k and 100k live allocations: sizes
 * log-uniform from 64 B to 1 MiB (multiples of 64, 64-byte aligned), an
 * address space of at least 256 MiB and 2.5 times the mean live bytes (32
 * GiB at 100k), first fit. Fill to the level, then rounds of BATCH removals
 * of random live allocations followed by the insertions that replace them
 * (new random sizes). ns per alloc and per free are the medians over the
 * rounds; within a round the allocators take turns, so a busy host slows
 * them alike. Every allocator runs the same sequence; first fit places every
 * allocation at the same address in all three, which each round checks (a
 * hash of the addresses it handed out).
 *
 * What a real caller pays is timed: svod kzallocs its record (embedding the
 * range node, as struct svod_allocation does), inserts it and issues a
 * handle; a free resolves the handle, removes the node and kfrees the
 * record. drm_mm kzallocs its drm_mm_node per allocation. gen_pool keeps
 * no per-allocation record. "svod-range" is svod without its handle table:
 * the difference is what the handle table costs.
 *
 * gen_pool's first fit scans its bitmap from the start, so at 100k live it
 * runs fewer rounds (a prefix of the same sequence; gp_rounds), and its fill
 * places each allocation with gen_pool_fixed_alloc at the address first
 * fit gives (the fill is not timed; a plain first fit there would take
 * O(n^2) bitmap scans).
 *
 * Results go to the kernel log, one line per level and allocator, each
 * starting with "bench: "; the guest copies them into its benchmark block.
 * A kernel without DRM or without CONFIG_GENERIC_ALLOCATOR (our test kernel
 * has neither) skips drm_mm or gen_pool and says so.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genalloc.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#if IS_ENABLED(CONFIG_DRM)
#include <drm/drm_mm.h>
#define MMB_HAVE_DRM	1
#else
#define MMB_HAVE_DRM	0
#endif

/* Our test kernel has no CONFIG_GENERIC_ALLOCATOR either. */
#define MMB_HAVE_GENPOOL	IS_ENABLED(CONFIG_GENERIC_ALLOCATOR)

#include "handle.h"
#include "range.h"

#define MMB_BATCH	1000
#define MMB_MAX_ROUNDS	15
#define MMB_ALIGN	64
#define MMB_BASE	BIT_ULL(40)

static ulong seed = 0x5eed;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "workload seed");
static uint rounds = 9;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "timed rounds per level (at most 15)");
static uint gp_rounds = 3;
module_param(gp_rounds, uint, 0444);
MODULE_PARM_DESC(gp_rounds, "timed rounds of gen_pool at 100k live");

enum mmb_kind { MMB_SVOD, MMB_SVOD_RANGE, MMB_DRM_MM, MMB_GEN_POOL, MMB_NR };

static const char *const mmb_names[MMB_NR] = {
	"svod", "svod-range", "drm_mm", "gen_pool",
};

/* svod's record: the node embedded, as in struct svod_allocation. */
struct mmb_svod_rec {
	struct svod_range_node node;
	u64 handle;
};

/* One live allocation, as the benchmark (the "user") knows it. */
struct mmb_slot {
	void *obj;	/* svod-range, drm_mm: the record; NULL while free */
	u64 handle;	/* svod: what userspace holds */
	u64 addr;
	u64 size;
	bool live;
};

struct mmb_ctx {
	enum mmb_kind kind;
	struct svod_range range;
	struct svod_handle_owners owners;
	struct svod_handle_table tbl;
#if MMB_HAVE_DRM
	struct drm_mm mm;
#endif
	struct gen_pool *pool;
	struct genpool_data_align gp_align;
	struct mmb_slot *slots;
	u64 space;
};

struct mmb_result {
	u64 alloc_ns[MMB_MAX_ROUNDS];
	u64 free_ns[MMB_MAX_ROUNDS];
	u64 hash[MMB_MAX_ROUNDS];
	unsigned int rounds;
	u64 alloc_med, free_med;
};

/* splitmix64: the workload's only source of randomness. */
static u64 mmb_rand(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Log-uniform in [64 B, 1 MiB), a multiple of 64. */
static u64 mmb_rand_size(u64 *s)
{
	u64 r = mmb_rand(s);
	unsigned int e = r % 14;
	u64 lo = 64ULL << e;

	return lo + ((r >> 8) % lo & ~(u64)(MMB_ALIGN - 1));
}

static int mmb_alloc(struct mmb_ctx *c, struct mmb_slot *s, u64 size)
{
	struct mmb_svod_rec *rec;
	int ret;

	s->size = size;
	switch (c->kind) {
	case MMB_SVOD:
	case MMB_SVOD_RANGE:
		rec = kzalloc(sizeof(*rec), GFP_KERNEL);
		if (!rec)
			return -ENOMEM;
		ret = svod_range_insert(&c->range, &rec->node, size, 0);
		if (!ret && c->kind == MMB_SVOD) {
			ret = svod_handle_alloc(&c->tbl, rec, GFP_KERNEL, &s->handle);
			if (ret)
				svod_range_remove(&c->range, &rec->node);
		}
		if (ret) {
			kfree(rec);
			return ret;
		}
		s->obj = rec;
		s->addr = rec->node.start;
		break;
#if MMB_HAVE_DRM
	case MMB_DRM_MM: {
		struct drm_mm_node *node = kzalloc(sizeof(*node), GFP_KERNEL);

		if (!node)
			return -ENOMEM;
		ret = drm_mm_insert_node_in_range(&c->mm, node, size, MMB_ALIGN,
						  0, 0, U64_MAX,
						  DRM_MM_INSERT_LOW);
		if (ret) {
			kfree(node);
			return ret;
		}
		s->obj = node;
		s->addr = node->start;
		break;
	}
#endif
	case MMB_GEN_POOL:
		if (!MMB_HAVE_GENPOOL)
			return -EOPNOTSUPP;
		s->addr = gen_pool_alloc_algo(c->pool, size,
					      gen_pool_first_fit_align,
					      &c->gp_align);
		if (!s->addr)
			return -ENOSPC;
		break;
	default:
		return -EINVAL;
	}
	s->live = true;
	return 0;
}

static void mmb_free(struct mmb_ctx *c, struct mmb_slot *s)
{
	struct mmb_svod_rec *rec;
	void *obj;

	switch (c->kind) {
	case MMB_SVOD:
		if (svod_handle_free(&c->tbl, s->handle, &obj))
			return;
		rec = obj;
		svod_range_remove(&c->range, &rec->node);
		kfree(rec);
		break;
	case MMB_SVOD_RANGE:
		rec = s->obj;
		svod_range_remove(&c->range, &rec->node);
		kfree(rec);
		break;
#if MMB_HAVE_DRM
	case MMB_DRM_MM:
		drm_mm_remove_node(s->obj);
		kfree(s->obj);
		break;
#endif
	case MMB_GEN_POOL:
		if (MMB_HAVE_GENPOOL)
			gen_pool_free(c->pool, s->addr, s->size);
		break;
	default:
		return;
	}
	s->obj = NULL;
	s->live = false;
}

static int mmb_setup(struct mmb_ctx *c)
{
	switch (c->kind) {
	case MMB_SVOD:
	case MMB_SVOD_RANGE:
		svod_handle_owners_init(&c->owners);
		if (svod_handle_table_init(&c->tbl, &c->owners, U32_MAX,
					   GFP_KERNEL)) {
			svod_handle_owners_fini(&c->owners);
			return -ENOMEM;
		}
		return svod_range_init(&c->range, MMB_BASE, c->space, MMB_ALIGN,
				       NULL, 0, GFP_KERNEL);
#if MMB_HAVE_DRM
	case MMB_DRM_MM:
		drm_mm_init(&c->mm, MMB_BASE, c->space);
		return 0;
#endif
	case MMB_GEN_POOL:
		if (!MMB_HAVE_GENPOOL)
			return -EOPNOTSUPP;
		c->pool = gen_pool_create(ilog2(MMB_ALIGN), NUMA_NO_NODE);
		if (!c->pool)
			return -ENOMEM;
		c->gp_align.align = MMB_ALIGN;
		if (gen_pool_add(c->pool, MMB_BASE, c->space, NUMA_NO_NODE)) {
			gen_pool_destroy(c->pool);
			return -ENOMEM;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

static void mmb_teardown(struct mmb_ctx *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (c->slots[i].live)
			mmb_free(c, &c->slots[i]);
		if (!(i & 1023))
			cond_resched();
	}
	switch (c->kind) {
	case MMB_SVOD:
	case MMB_SVOD_RANGE:
		svod_range_fini(&c->range);
		svod_handle_table_fini(&c->tbl, &c->owners);
		svod_handle_owners_fini(&c->owners);
		break;
#if MMB_HAVE_DRM
	case MMB_DRM_MM:
		drm_mm_takedown(&c->mm);
		break;
#endif
	case MMB_GEN_POOL:
		if (MMB_HAVE_GENPOOL)
			gen_pool_destroy(c->pool);
		break;
	default:
		break;
	}
}

/*
 * Fill: sizes from @rng; no frees, so first fit packs them from the base.
 * gen_pool gets the same layout through gen_pool_fixed_alloc.
 */
static int mmb_fill(struct mmb_ctx *c, unsigned int n, u64 *rng)
{
	struct genpool_data_fixed fixed;
	struct mmb_slot *s;
	u64 off = 0;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		s = &c->slots[i];
		s->size = mmb_rand_size(rng);
		if (MMB_HAVE_GENPOOL && c->kind == MMB_GEN_POOL) {
			fixed.offset = off;
			s->addr = gen_pool_alloc_algo(c->pool, s->size,
						      gen_pool_fixed_alloc, &fixed);
			ret = s->addr == MMB_BASE + off ? 0 : -ENOSPC;
			s->live = !ret;
		} else {
			ret = mmb_alloc(c, s, s->size);
		}
		if (ret)
			return ret;
		if (s->addr != MMB_BASE + off)
			return -EFAULT;
		off += s->size;
		if (!(i & 1023))
			cond_resched();
	}
	return 0;
}

/* One round: BATCH removals, then the insertions that replace them. */
static int mmb_round(struct mmb_ctx *c, unsigned int n, u64 rs,
		     struct mmb_result *res, unsigned int r)
{
	static unsigned int idx[MMB_BATCH];
	unsigned int i, nr = 0;
	u64 t0, hash = 0;
	int ret;

	for (i = 0; i < MMB_BATCH; i++)
		idx[i] = mmb_rand(&rs) % n;
	t0 = ktime_get_ns();
	for (i = 0; i < MMB_BATCH; i++) {
		if (c->slots[idx[i]].live) {
			mmb_free(c, &c->slots[idx[i]]);
			nr++;
		}
		/* gen_pool's scans are long in a TCG guest: no soft lockup. */
		if (!(i & 63))
			cond_resched();
	}
	res->free_ns[r] = (ktime_get_ns() - t0) / max(nr, 1U);
	t0 = ktime_get_ns();
	for (i = 0; i < MMB_BATCH; i++) {
		struct mmb_slot *s = &c->slots[idx[i]];

		if (s->live)
			continue;
		ret = mmb_alloc(c, s, mmb_rand_size(&rs));
		if (ret)
			return ret;
		hash = (hash ^ s->addr) * 0x100000001b3ULL;
		if (!(i & 63))
			cond_resched();
	}
	res->alloc_ns[r] = (ktime_get_ns() - t0) / max(nr, 1U);
	res->hash[r] = hash;
	return 0;
}

static int mmb_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 mmb_median(const u64 *v, unsigned int nr)
{
	u64 tmp[MMB_MAX_ROUNDS];

	memcpy(tmp, v, nr * sizeof(*v));
	sort(tmp, nr, sizeof(*tmp), mmb_cmp_u64, NULL);
	return nr & 1 ? tmp[nr / 2] : (tmp[nr / 2 - 1] + tmp[nr / 2]) / 2;
}

static void mmb_ctx_free(struct mmb_ctx *c, unsigned int n, bool set_up)
{
	if (!c)
		return;
	if (set_up)
		mmb_teardown(c, n);
	vfree(c->slots);
	kfree(c);
}

static struct mmb_ctx *mmb_ctx_new(enum mmb_kind kind, unsigned int n)
{
	struct mmb_ctx *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return NULL;
	c->kind = kind;
	c->space = max_t(u64, SZ_256M, roundup_pow_of_two((u64)n * SZ_256K));
	c->slots = vzalloc(array_size(n, sizeof(*c->slots)));
	if (!c->slots || mmb_setup(c)) {
		mmb_ctx_free(c, n, false);
		return NULL;
	}
	return c;
}

/*
 * Every allocator of @kinds filled to @n, then the rounds, the allocators
 * taking turns within each round (so a busy host slows them alike); all
 * get the same sequence. gen_pool runs its first @gp_nr rounds only.
 */
static int mmb_run(const bool *kinds, unsigned int n, unsigned int nr_rounds,
		   unsigned int gp_nr, struct mmb_result *res)
{
	struct mmb_ctx *c[MMB_NR] = {};
	u64 fill_seed = seed ^ n, rng, rs;
	unsigned int k, r;
	int ret = 0;

	for (k = 0; k < MMB_NR && !ret; k++) {
		if (!kinds[k])
			continue;
		c[k] = mmb_ctx_new(k, n);
		rng = fill_seed;
		ret = c[k] ? mmb_fill(c[k], n, &rng) : -ENOMEM;
		if (ret)
			pr_info("bench: live=%u %s: set-up failed: %d\n", n, mmb_names[k], ret);
	}
	/* rng is where the fill left it: the rounds' seeds follow. */
	for (r = 0; !ret && r < nr_rounds; r++) {
		rs = mmb_rand(&rng);
		for (k = 0; k < MMB_NR && !ret; k++) {
			if (!c[k] || (k == MMB_GEN_POOL && r >= gp_nr))
				continue;
			cond_resched();
			ret = mmb_round(c[k], n, rs, &res[k], r);
			res[k].rounds = r + 1;
			if (ret)
				pr_info("bench: live=%u %s: round %u failed: %d\n", n,
					mmb_names[k], r, ret);
		}
	}
	for (k = 0; k < MMB_NR; k++) {
		if (!ret && c[k]) {
			res[k].alloc_med = mmb_median(res[k].alloc_ns, res[k].rounds);
			res[k].free_med = mmb_median(res[k].free_ns, res[k].rounds);
		}
		mmb_ctx_free(c[k], n, true);
	}
	return ret;
}

/* @a / @b with four decimals, as "i.dddd" (the kernel prints no floats). */
static void mmb_fmt_ratio(char *buf, size_t len, u64 a, u64 b)
{
	u64 q = b ? div64_u64(a * 10000, b) : 0;

	snprintf(buf, len, "%llu.%04llu", q / 10000, q % 10000);
}

static void mmb_ratio(const char *what, const char *a_name, const char *b_name,
		      const struct mmb_result *a, const struct mmb_result *b)
{
	char ra[24], rf[24];

	mmb_fmt_ratio(ra, sizeof(ra), a->alloc_med, b->alloc_med);
	mmb_fmt_ratio(rf, sizeof(rf), a->free_med, b->free_med);
	pr_info("bench: %s %s/%s alloc %s free %s\n", what, a_name, b_name, ra, rf);
}

/* Medians of each allocator at each level, for the growth line. */
static struct mmb_result mmb_res[3][MMB_NR];

static int mmb_level(unsigned int n, struct mmb_result *res)
{
	bool kinds[MMB_NR] = { true, true, MMB_HAVE_DRM, MMB_HAVE_GENPOOL };
	unsigned int k, r, same;
	char what[32];
	int ret;

	if (!MMB_HAVE_DRM)
		pr_info("bench: live=%u drm_mm skipped: this kernel has no DRM (CONFIG_DRM unset)\n",
			n);
	if (!MMB_HAVE_GENPOOL)
		pr_info("bench: live=%u gen_pool skipped: this kernel has no CONFIG_GENERIC_ALLOCATOR\n",
			n);
	ret = mmb_run(kinds, n, rounds, n >= 100000 ? min(gp_rounds, rounds) : rounds,
		      res);
	if (ret)
		return ret;
	for (k = 0; k < MMB_NR; k++) {
		if (!kinds[k])
			continue;
		for (same = 1, r = 0; r < res[k].rounds; r++)
			same &= res[k].hash[r] == res[MMB_SVOD].hash[r];
		pr_info("bench: live=%u %-10s alloc_ns=%llu free_ns=%llu rounds=%u x %u, same placements as svod: %s\n",
			n, mmb_names[k], res[k].alloc_med, res[k].free_med,
			res[k].rounds, MMB_BATCH, same ? "yes" : "NO");
	}
	snprintf(what, sizeof(what), "live=%u ratio", n);
	if (MMB_HAVE_DRM)
		mmb_ratio(what, "svod", "drm_mm", &res[MMB_SVOD], &res[MMB_DRM_MM]);
	if (MMB_HAVE_GENPOOL)
		mmb_ratio(what, "svod", "gen_pool", &res[MMB_SVOD], &res[MMB_GEN_POOL]);
	return 0;
}

static int __init mmb_init(void)
{
	static const unsigned int levels[] = { 1000, 10000, 100000 };
	unsigned int i;

	rounds = clamp_t(uint, rounds, 1, MMB_MAX_ROUNDS);
	pr_info("bench: mm workload: seed=%#lx, sizes 64 B..1 MiB log-uniform, align 64, first fit, %u rounds of %u frees + %u allocs per level; svod record %zu B (range node %zu B), drm_mm node %zu B\n",
		seed, rounds, MMB_BATCH, MMB_BATCH,
		sizeof(struct mmb_svod_rec), sizeof(struct svod_range_node),
#if MMB_HAVE_DRM
		sizeof(struct drm_mm_node)
#else
		(size_t)0
#endif
		);
	for (i = 0; i < ARRAY_SIZE(levels); i++)
		if (mmb_level(levels[i], mmb_res[i]))
			return 0;
	/* Growth from 1k to 100k live: 100k's median over 1k's. */
	mmb_ratio("growth svod", "100k", "1k", &mmb_res[2][MMB_SVOD], &mmb_res[0][MMB_SVOD]);
	if (MMB_HAVE_DRM) {
		struct mmb_result rel[2];
		unsigned int i;

		mmb_ratio("growth drm_mm", "100k", "1k", &mmb_res[2][MMB_DRM_MM],
			  &mmb_res[0][MMB_DRM_MM]);
		/*
		 * The levels run seconds apart, under whatever load the host
		 * has then; svod/drm_mm at each level is measured side by side.
		 * Its change from 1k to 100k compares the growths, load aside.
		 */
		for (i = 0; i < 2; i++) {
			const struct mmb_result *sv = &mmb_res[2 * i][MMB_SVOD];
			const struct mmb_result *dm = &mmb_res[2 * i][MMB_DRM_MM];

			rel[i].alloc_med = div64_u64(sv->alloc_med * 10000,
						     max_t(u64, dm->alloc_med, 1));
			rel[i].free_med = div64_u64(sv->free_med * 10000,
						    max_t(u64, dm->free_med, 1));
		}
		mmb_ratio("growth relative to drm_mm", "(svod/drm_mm at 100k)",
			  "(svod/drm_mm at 1k)", &rel[1], &rel[0]);
	}
	return 0;
}

static void __exit mmb_exit(void)
{
}

module_init(mmb_init);
module_exit(mmb_exit);
MODULE_DESCRIPTION("svod test-only benchmark: range allocator vs drm_mm and gen_pool");
MODULE_LICENSE("GPL");
