// SPDX-License-Identifier: GPL-2.0
/*
 * svod QUERY: describes every tier, in id order, into the caller's arrays:
 * one struct svod_tier_info per tier, of the element size the caller gives,
 * and the tiers' reserved regions one after the other in a second array.
 */
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "ioctl.h"
#include "svod.h"

/* Larger elements than this are a mistake, not a newer ABI. */
#define SVOD_TIER_INFO_SIZE_MAX	4096

static void svod_tier_fill_info(struct svod_dev_tier *tier,
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

	mutex_lock(&tier->lock);
	if (tier->gone)
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

/* Writes the regions of one tier that fit, from index @first on. */
static int svod_query_put_regions(const struct svod_query *q, u32 first,
				  const struct svod_tier_spec *spec)
{
	struct svod_region __user *dst = u64_to_user_ptr(q->regions_ptr);
	struct svod_region r;
	u32 i;

	for (i = 0; i < spec->nr_reserved && first + i < q->nr_regions; i++) {
		r.base = spec->reserved[i].base;
		r.size = spec->reserved[i].size;
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

/**
 * svod_query_ioctl() - SVOD_IOCTL_QUERY
 * @sf: the file (unused: every file sees every tier)
 * @data: struct svod_query; in: flags, nr_tiers, tier_info_size, tiers_ptr,
 *	nr_regions, regions_ptr; out: abi_version, nr_tiers, tier_info_size,
 *	nr_regions
 *
 * Fills min(in, out) entries of each array; the counts going out are what
 * exists, so a caller whose arrays were too small retries with larger ones.
 * The tiers are read one at a time: a tier declared or retired meanwhile may
 * or may not be in the reply.
 *
 * Context: process context; takes each tier's lock in turn.
 * Return: 0; -EINVAL for unknown flags, a nonzero pad or a bad element size;
 * -EFAULT if an array is not writable (entries before it may be written).
 */
int svod_query_ioctl(struct svod_file *sf, void *data)
{
	struct svod_query *q = data;
	struct svod_tier_info info;
	struct svod_dev_tier *tier;
	u32 n = 0, regions = 0;
	unsigned long id;
	int ret;

	ret = svod_query_check(q);
	if (ret)
		return ret;
	for (id = 0; (tier = svod_dev_tier_next(&id)); id++) {
		svod_tier_fill_info(tier, &info);
		info.first_reserved = regions;
		ret = 0;
		if (n < q->nr_tiers)
			ret = svod_query_put_info(q, n, &info);
		if (!ret)
			ret = svod_query_put_regions(q, regions, &tier->spec);
		regions += tier->spec.nr_reserved;
		n++;
		svod_dev_tier_put(tier);
		if (ret)
			return ret;
	}
	q->abi_version = SVOD_ABI_VERSION;
	q->nr_tiers = n;
	q->tier_info_size = sizeof(info);
	q->nr_regions = regions;
	return 0;
}
