// SPDX-License-Identifier: GPL-2.0
/*
 * svod QUERY: describes every tier, in id order, into the caller's arrays:
 * one struct svod_tier_info per tier, of the element size the caller gives,
 * and the tiers' reserved regions one after the other in a second array.
 *
 * The reply is one snapshot of the tier set: the tiers are described into a
 * kernel buffer first, under svod_tier_seq (a walk that raced with a
 * declaration, a bind or an unbind is retried; after a few tries the walk
 * runs under svod_decl_lock), and copied out only then, so no user page
 * fault happens with a lock held and the counts match the entries.
 */
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/svod.h>
#include <linux/uaccess.h>

#include "core/range.h"
#include "dev.h"
#include "file.h"
#include "ioctl.h"
#include "tier.h"

/* Larger elements than this are a mistake, not a newer ABI. */
#define SVOD_TIER_INFO_SIZE_MAX	4096

static void svod_tier_fill_info(struct svod_dev_tier *tier, struct file *file,
				struct svod_tier_info *info)
{
	const struct svod_tier_spec *spec = &tier->spec;

	memset(info, 0, sizeof(*info));
	info->id = tier->id;
	strscpy(info->name, spec->name, sizeof(info->name));
	strscpy(info->device, tier->device, sizeof(info->device));
	info->device_base = spec->base;
	info->capacity = spec->size;
	info->align = spec->align;
	info->nr_reserved = spec->nr_reserved;
	info->cpu_bytes = atomic64_read(&tier->stats.cpu_bytes);
	info->dma_bytes = atomic64_read(&tier->stats.dma_bytes);
	if (!svod_dev_tier_usable(tier, file))
		info->flags |= SVOD_TIER_NO_ACCESS;

	mutex_lock(&tier->lock);
	if (tier->gone || READ_ONCE(tier->detached))
		info->flags |= SVOD_TIER_GONE;
	info->free_bytes = tier->core.free_bytes;
	info->largest_free = svod_range_largest_free(&tier->core);
	info->reserved_bytes = tier->core.reserved_bytes;
	info->nr_free_spans = tier->core.nr_free_spans;
	info->nr_live = tier->core.nr_live;
	mutex_unlock(&tier->lock);
}

/* Writes one element of @esize bytes: what the driver knows, then zeros. */
static int svod_query_put_info(const struct svod_query *q, u32 i,
			       const struct svod_tier_info *info)
{
	u32 esize = q->tier_info_size;
	void __user *dst = u64_to_user_ptr(q->tiers_ptr) + (u64)i * esize;
	size_t known = min_t(size_t, esize, sizeof(*info));

	if (copy_to_user(dst, info, known) ||
	    clear_user(dst + known, esize - known))
		return -EFAULT;
	return 0;
}

/* One tier of a snapshot: its description and its reserved regions. */
struct svod_query_tier {
	struct svod_tier_info info;
	struct svod_range_region reserved[SVOD_MAX_RESERVED];
};

/*
 * A snapshot of every tier: @n described in @t, room for @cap, as the
 * opener of @file may use them.
 */
struct svod_query_snap {
	struct file *file;
	u32 n;
	u32 cap;
	u32 nr_regions;
	struct svod_query_tier *t;
};

/* Writes the regions of one tier that fit, from index @first on. */
static int svod_query_put_regions(const struct svod_query *q, u32 first,
				  const struct svod_query_tier *qt)
{
	struct svod_region __user *dst = u64_to_user_ptr(q->regions_ptr);
	struct svod_region r;
	u32 i;

	for (i = 0; i < qt->info.nr_reserved && first + i < q->nr_regions; i++) {
		r.base = qt->reserved[i].base;
		r.size = qt->reserved[i].size;
		if (copy_to_user(&dst[first + i], &r, sizeof(r)))
			return -EFAULT;
	}
	return 0;
}

static int svod_query_check(struct svod_query *q)
{
	if (q->flags || q->pad)
		return -EINVAL;
	if (!q->tier_info_size)
		q->tier_info_size = SVOD_TIER_INFO_SIZE_VER0;
	if (q->tier_info_size < SVOD_TIER_INFO_SIZE_VER0 ||
	    q->tier_info_size > SVOD_TIER_INFO_SIZE_MAX ||
	    !IS_ALIGNED(q->tier_info_size, 8))
		return -EINVAL;
	if ((q->nr_tiers && !q->tiers_ptr) || (q->nr_regions && !q->regions_ptr))
		return -EFAULT;
	return 0;
}

/*
 * Describes every tier into @s. Return: 0; -EOVERFLOW if @s->cap was too
 * small (@s->n then counts every tier, for a larger buffer).
 */
static int svod_query_walk(struct svod_query_snap *s)
{
	struct svod_dev_tier *tier;
	struct svod_query_tier *qt;
	unsigned long id;

	s->n = 0;
	s->nr_regions = 0;
	for (id = 0; (tier = svod_dev_tier_next(&id)); id++) {
		if (s->n < s->cap) {
			qt = &s->t[s->n];
			svod_tier_fill_info(tier, s->file, &qt->info);
			qt->info.first_reserved = s->nr_regions;
			memcpy(qt->reserved, tier->spec.reserved,
			       sizeof(qt->reserved));
		}
		s->nr_regions += tier->spec.nr_reserved;
		s->n++;
		svod_dev_tier_put(tier);
	}
	return s->n > s->cap ? -EOVERFLOW : 0;
}

/* Walks without svod_decl_lock this many times before taking it. */
#define SVOD_QUERY_TRIES	4

/* One consistent snapshot into @s (its buffer grown as needed). */
static int svod_query_snapshot(struct svod_query_snap *s)
{
	unsigned int tries = 0, seq = 0;
	bool locked;
	int ret;

	for (;;) {
		locked = tries >= SVOD_QUERY_TRIES;
		if (locked)
			mutex_lock(&svod_decl_lock);
		else
			seq = svod_tier_seq_read();
		ret = svod_query_walk(s);
		if (locked)
			mutex_unlock(&svod_decl_lock);
		if (ret == -EOVERFLOW) {
			/* Room for the tiers seen and a few more. */
			kvfree(s->t);
			s->cap = s->n + 8;
			s->t = kvmalloc_array(s->cap, sizeof(*s->t),
					      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
			if (!s->t)
				return -ENOMEM;
			continue;
		}
		if (locked || !svod_tier_seq_changed(seq))
			return 0;
		tries++;
		cond_resched();
	}
}

/* Copies snapshot @s out: the entries and regions that fit. */
static int svod_query_put(struct svod_query *q, const struct svod_query_snap *s)
{
	u32 i;
	int ret;

	for (i = 0; i < s->n; i++) {
		if (i < q->nr_tiers) {
			ret = svod_query_put_info(q, i, &s->t[i].info);
			if (ret)
				return ret;
		}
		ret = svod_query_put_regions(q, s->t[i].info.first_reserved,
					     &s->t[i]);
		if (ret)
			return ret;
	}
	q->abi_version = SVOD_ABI_VERSION;
	q->nr_tiers = s->n;
	q->tier_info_size = sizeof(struct svod_tier_info);
	q->nr_regions = s->nr_regions;
	return 0;
}

/**
 * svod_query_ioctl() - SVOD_IOCTL_QUERY
 * @sf: the file: every file sees every tier, marked SVOD_TIER_NO_ACCESS
 *	where its opener may not use it
 * @data: struct svod_query; in: flags, nr_tiers, tier_info_size, tiers_ptr,
 *	nr_regions, regions_ptr; out: abi_version, nr_tiers, tier_info_size,
 *	nr_regions
 *
 * Fills min(in, out) entries of each array; the counts going out are what
 * exists, so a caller whose arrays were too small retries with larger ones.
 * The reply is one snapshot: the tiers that are not gone are exactly one tier
 * set of each device as declared at one moment (a tier being retired shows
 * with SVOD_TIER_GONE), and the counts are those of the entries written.
 * Never waits for a transfer.
 *
 * Context: process context; takes svod_tier_xa's lock and each tier's lock
 * in turn, svod_decl_lock if declarations keep racing with the walk.
 * Return: 0; -EINVAL for unknown flags, a nonzero pad or a bad element size;
 * -ENOMEM; -EFAULT if an array is not writable (entries before it may be
 * written).
 */
int svod_query_ioctl(struct svod_file *sf, void *data)
{
	struct svod_query_snap s = {
		.file = sf->filp,
		.cap = SVOD_MAX_DEV_TIERS,
	};
	struct svod_query *q = data;
	int ret;

	ret = svod_query_check(q);
	if (ret)
		return ret;
	s.t = kvmalloc_array(s.cap, sizeof(*s.t),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!s.t)
		return -ENOMEM;
	ret = svod_query_snapshot(&s);
	if (!ret)
		ret = svod_query_put(q, &s);
	kvfree(s.t);
	return ret;
}
