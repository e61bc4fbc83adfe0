// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * libsvod: a thin C library over the ioctls of /dev/svod. See libsvod.h.
 *
 * No function keeps state between calls; every one is safe to call from any
 * thread as long as the buffers passed in are not shared without locking.
 */
#define _GNU_SOURCE	/* strerrorname_np() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libsvod.h"
#include "number.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/**
 * svod_open() - open /dev/svod for reading and writing
 *
 * Context: any thread.
 * Return: a file descriptor (close-on-exec), or -errno.
 */
int svod_open(void)
{
	return svod_open_path(SVOD_DEV_PATH);
}

/**
 * svod_open_path() - open an svod device node at @path
 * @path: the device node, e.g. "/dev/svod"
 *
 * Context: any thread.
 * Return: a file descriptor (close-on-exec), or -errno.
 */
int svod_open_path(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/**
 * svod_close() - close a file descriptor of /dev/svod
 * @fd: the descriptor; the last close of the open file frees its allocations
 *
 * Context: any thread.
 * Return: 0, or -errno.
 */
int svod_close(int fd)
{
	return close(fd) < 0 ? -errno : 0;
}

/**
 * svod_ioctl() - issue a raw ioctl
 * @fd: descriptor of /dev/svod
 * @cmd: the request, one of SVOD_IOCTL_* (or anything, for tests)
 * @arg: the argument pointer, passed through unchanged
 *
 * Context: any thread.
 * Return: the ioctl's non-negative result, or -errno.
 */
int svod_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

/**
 * svod_query() - SVOD_IOCTL_QUERY with a caller-built struct
 * @fd: descriptor of /dev/svod
 * @q: in/out; see struct svod_query
 *
 * Context: any thread.
 * Return: 0, or -errno.
 */
int svod_query(int fd, struct svod_query *q)
{
	return svod_ioctl(fd, SVOD_IOCTL_QUERY, q);
}

/**
 * svod_query_tiers() - fill up to @cap tier records
 * @fd: descriptor of /dev/svod
 * @tiers: array of @cap records (may be NULL when @cap is 0)
 * @cap: entries at @tiers
 * @abi_version: out: the driver's ABI version (may be NULL)
 *
 * Context: any thread.
 * Return: the number of tiers that exist (may exceed @cap: only @cap were
 * filled), or -errno.
 */
int svod_query_tiers(int fd, struct svod_tier_info *tiers, uint32_t cap,
		     uint32_t *abi_version)
{
	struct svod_query q = {
		.nr_tiers = cap,
		.tier_info_size = sizeof(*tiers),
		.tiers_ptr = (uintptr_t)tiers,
	};
	int ret;

	ret = svod_query(fd, &q);
	if (ret)
		return ret;
	if (abi_version)
		*abi_version = q.abi_version;
	return (int)q.nr_tiers;
}

/* Grows *@arr to @n entries of @size bytes, zeroed. */
static int svod_grow(void **arr, uint32_t n, size_t size)
{
	void *grown = realloc(*arr, (size_t)n * size);

	if (!grown && n)
		return -ENOMEM;
	*arr = grown;
	memset(grown, 0, (size_t)n * size);
	return 0;
}

/**
 * svod_query_full() - every tier and every reserved region, freshly allocated
 * @fd: descriptor of /dev/svod
 * @tiers: out: malloc()ed array the caller frees; NULL when there are none
 * @nr: out: entries in @tiers
 * @regions: out: malloc()ed array of the tiers' reserved regions, indexed by
 *	svod_tier_info.first_reserved, that the caller frees (NULL when there
 *	are none); may be NULL if the caller does not want them
 * @nr_regions: out: entries in *@regions (may be NULL with @regions)
 *
 * One QUERY call fills both arrays, so they describe the same moment. Retries
 * while tiers or regions appear between the count and the fill.
 *
 * Context: any thread.
 * Return: 0, or -errno (-ENOMEM when an array cannot be allocated).
 */
int svod_query_full(int fd, struct svod_tier_info **tiers, uint32_t *nr,
		    struct svod_region **regions, uint32_t *nr_regions)
{
	void *arr = NULL, *reg = NULL;
	uint32_t cap = 0, rcap = 0;
	struct svod_query q;
	int ret;

	for (;;) {
		q = (struct svod_query){
			.nr_tiers = cap,
			.tier_info_size = sizeof(**tiers),
			.tiers_ptr = (uintptr_t)arr,
			.nr_regions = regions ? rcap : 0,
			.regions_ptr = regions ? (uintptr_t)reg : 0,
		};
		ret = svod_query(fd, &q);
		if (ret)
			goto free_arrays;
		if (q.nr_tiers <= cap && (!regions || q.nr_regions <= rcap))
			break;
		cap = q.nr_tiers;
		rcap = q.nr_regions;
		ret = svod_grow(&arr, cap, sizeof(**tiers));
		if (!ret && regions)
			ret = svod_grow(&reg, rcap, sizeof(**regions));
		if (ret)
			goto free_arrays;
	}
	if (!q.nr_tiers) {
		free(arr);
		arr = NULL;
	}
	*tiers = arr;
	*nr = q.nr_tiers;
	if (regions) {
		if (!q.nr_regions) {
			free(reg);
			reg = NULL;
		}
		*regions = reg;
		if (nr_regions)
			*nr_regions = q.nr_regions;
	}
	return 0;

free_arrays:
	free(arr);
	free(reg);
	return ret;
}

/**
 * svod_query_all() - every tier, in a freshly allocated array
 * @fd: descriptor of /dev/svod
 * @tiers: out: malloc()ed array the caller frees; NULL when there are none
 * @nr: out: entries in @tiers
 *
 * Context: any thread.
 * Return: 0, or -errno (-ENOMEM when the array cannot be allocated).
 */
int svod_query_all(int fd, struct svod_tier_info **tiers, uint32_t *nr)
{
	return svod_query_full(fd, tiers, nr, NULL, NULL);
}

/**
 * svod_tier_regions() - the reserved regions of one tier
 * @fd: descriptor of /dev/svod
 * @id: the tier id
 * @out: array of @cap regions (may be NULL when @cap is 0)
 * @cap: entries at @out
 *
 * Context: any thread.
 * Return: the tier's number of reserved regions (only @cap of them were
 * filled if it is larger), -ENOENT if no tier has that id, or -errno.
 */
int svod_tier_regions(int fd, uint32_t id, struct svod_region *out,
		      uint32_t cap)
{
	struct svod_tier_info *tiers;
	struct svod_region *regions;
	uint32_t nr, nr_regions, i, r;
	int ret;

	ret = svod_query_full(fd, &tiers, &nr, &regions, &nr_regions);
	if (ret)
		return ret;
	ret = -ENOENT;
	for (i = 0; i < nr; i++) {
		if (tiers[i].id != id)
			continue;
		for (r = 0; r < tiers[i].nr_reserved && r < cap; r++)
			out[r] = regions[tiers[i].first_reserved + r];
		ret = (int)tiers[i].nr_reserved;
		break;
	}
	free(tiers);
	free(regions);
	return ret;
}

static int svod_match_name(const struct svod_tier_info *t, const void *arg)
{
	return !strncmp(t->name, arg, SVOD_NAME_LEN);
}

static int svod_match_id(const struct svod_tier_info *t, const void *arg)
{
	return t->id == *(const uint32_t *)arg;
}

static int svod_match_device(const struct svod_tier_info *t, const void *arg)
{
	return !(t->flags & SVOD_TIER_GONE) &&
	       (!arg || !strncmp(t->device, arg, SVOD_NAME_LEN));
}

/* The first tier (in id order) @match accepts, or -@none. */
static int svod_tier_find(int fd,
			  int (*match)(const struct svod_tier_info *, const void *),
			  const void *arg, int none, struct svod_tier_info *out)
{
	struct svod_tier_info *tiers;
	uint32_t nr, i;
	int ret;

	ret = svod_query_all(fd, &tiers, &nr);
	if (ret)
		return ret;
	ret = -none;
	for (i = 0; i < nr; i++) {
		if (match(&tiers[i], arg)) {
			*out = tiers[i];
			ret = 0;
			break;
		}
	}
	free(tiers);
	return ret;
}

/**
 * svod_tier_by_name() - look a tier up by name
 * @fd: descriptor of /dev/svod
 * @name: the tier name
 * @out: the tier's record
 *
 * Context: any thread.
 * Return: 0, -ENOENT if no tier has that name, or another -errno.
 */
int svod_tier_by_name(int fd, const char *name, struct svod_tier_info *out)
{
	return svod_tier_find(fd, svod_match_name, name, ENOENT, out);
}

/**
 * svod_tier_by_id() - look a tier up by id
 * @fd: descriptor of /dev/svod
 * @id: the tier id
 * @out: the tier's record
 *
 * Context: any thread.
 * Return: 0, -ENOENT if no tier has that id, or another -errno.
 */
int svod_tier_by_id(int fd, uint32_t id, struct svod_tier_info *out)
{
	return svod_tier_find(fd, svod_match_id, &id, ENOENT, out);
}

/**
 * svod_tier_by_device() - the first present tier of one PCI device
 * @fd: descriptor of /dev/svod
 * @bdf: PCI name of the device (e.g. "0000:00:04.0"), or NULL for any device
 * @out: the tier's record (lowest id first; gone tiers are skipped)
 *
 * Context: any thread.
 * Return: 0, -ENODEV if the device has no present tier, or another -errno.
 */
int svod_tier_by_device(int fd, const char *bdf, struct svod_tier_info *out)
{
	return svod_tier_find(fd, svod_match_device, bdf, ENODEV, out);
}

/**
 * svod_alloc() - allocate @size bytes in a tier
 * @fd: descriptor of /dev/svod
 * @tier: tier id
 * @size: bytes, > 0
 * @align: 0 for the tier's alignment, else a power of two
 * @out: out: the whole reply (handle, device address, capacity)
 *
 * Context: any thread.
 * Return: 0, or -errno (see Documentation/uapi.rst).
 */
int svod_alloc(int fd, uint32_t tier, uint64_t size, uint64_t align,
	       struct svod_alloc *out)
{
	return svod_alloc_flags(fd, tier, size, align, 0, out);
}

/**
 * svod_alloc_flags() - svod_alloc() with SVOD_ALLOC_* flags
 * @fd: descriptor of /dev/svod
 * @tier: tier id
 * @size: bytes, > 0
 * @align: 0 for the tier's alignment, else a power of two
 * @flags: SVOD_ALLOC_* (SVOD_ALLOC_MAPPABLE for svod_map())
 * @out: out: the whole reply (capacity is the rounded size)
 *
 * Context: any thread.
 * Return: 0, or -errno (see Documentation/uapi.rst).
 */
int svod_alloc_flags(int fd, uint32_t tier, uint64_t size, uint64_t align,
		     uint32_t flags, struct svod_alloc *out)
{
	struct svod_alloc a = {
		.tier = tier,
		.flags = flags,
		.size = size,
		.align = align,
	};
	int ret;

	ret = svod_ioctl(fd, SVOD_IOCTL_ALLOC, &a);
	if (!ret)
		*out = a;
	return ret;
}

/**
 * svod_map_offset() - the mmap() offset of an allocation (MAP_OFFSET)
 * @fd: descriptor of /dev/svod
 * @handle: a live handle of this open file
 * @offset: out: the offset of the allocation's first byte
 * @size: out: bytes that can be mapped from @offset (may be NULL)
 *
 * Context: any thread.
 * Return: 0, or -errno (-EOPNOTSUPP for an allocation that is not whole,
 * page-aligned pages: allocate it with SVOD_ALLOC_MAPPABLE).
 */
int svod_map_offset(int fd, uint64_t handle, uint64_t *offset, uint64_t *size)
{
	struct svod_map_offset m = { .handle = handle };
	int ret;

	ret = svod_ioctl(fd, SVOD_IOCTL_MAP_OFFSET, &m);
	if (ret)
		return ret;
	*offset = m.offset;
	if (size)
		*size = m.size;
	return 0;
}

/**
 * svod_map() - map a whole allocation, read-write, write-combined
 * @fd: descriptor of /dev/svod
 * @handle: a live handle of this open file
 * @addr: out: the mapping
 * @size: out: its length, what svod_unmap() takes
 *
 * The mapping is MAP_SHARED and revoked when the allocation is freed: any
 * access after svod_free() (or removal of the device) raises SIGBUS. Unmap
 * it with svod_unmap() first.
 *
 * Context: any thread.
 * Return: 0, or -errno of svod_map_offset() or mmap().
 */
int svod_map(int fd, uint64_t handle, void **addr, uint64_t *size)
{
	uint64_t offset, len;
	void *p;
	int ret;

	ret = svod_map_offset(fd, handle, &offset, &len);
	if (ret)
		return ret;
	if (len > SIZE_MAX)
		return -ENOMEM;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	*size = len;
	return 0;
}

/**
 * svod_unmap() - undo svod_map()
 * @addr: the mapping
 * @size: its length
 *
 * Context: any thread.
 * Return: 0, or -errno of munmap().
 */
int svod_unmap(void *addr, uint64_t size)
{
	return munmap(addr, size) ? -errno : 0;
}

/**
 * svod_free() - free an allocation of this open file
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 *
 * Context: any thread.
 * Return: 0, or -errno (-ESTALE for a handle this file does not hold).
 */
int svod_free(int fd, uint64_t handle)
{
	struct svod_free f = { .handle = handle };

	return svod_ioctl(fd, SVOD_IOCTL_FREE, &f);
}

/**
 * svod_resolve() - where a handle's allocation lives
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @out: out: tier, device address, capacity
 *
 * Context: any thread.
 * Return: 0, or -errno (-ESTALE for a handle this file does not hold).
 */
int svod_resolve(int fd, uint64_t handle, struct svod_resolve *out)
{
	struct svod_resolve r = { .handle = handle };
	int ret;

	ret = svod_ioctl(fd, SVOD_IOCTL_RESOLVE, &r);
	if (!ret)
		*out = r;
	return ret;
}

/**
 * svod_export() - a dma-buf fd for an allocation (SVOD_IOCTL_EXPORT)
 * @fd: descriptor of /dev/svod
 * @handle: a live handle of this open file (an imported one too)
 * @flags: 0 for a read-only dma-buf, SVOD_EXPORT_WRITE for a read-write one
 * @dmabuf_fd: out: the new dma-buf fd (O_CLOEXEC); the caller closes it
 * @size: out (may be NULL): bytes in the dma-buf (the allocation's capacity)
 *
 * Each call makes a new dma-buf. While any dma-buf, importer's handle or
 * mapping of the allocation remains, its range stays out of the tier and
 * charged to this file, even after svod_free() of @handle
 * (Documentation/uapi.rst, "Sharing").
 *
 * Context: any thread.
 * Return: 0, or -errno: -EINVAL (unknown @flags), -ESTALE (@handle not
 * live in this file), -ENODEV (device gone), -EOPNOTSUPP (not whole,
 * page-aligned pages: allocate with SVOD_ALLOC_MAPPABLE), -EACCES
 * (SVOD_EXPORT_WRITE of a read-only imported handle), -EMFILE.
 */
int svod_export(int fd, uint64_t handle, uint32_t flags, int *dmabuf_fd, uint64_t *size)
{
	struct svod_export e = { .handle = handle, .flags = flags, .fd = -1 };
	int ret;

	ret = svod_ioctl(fd, SVOD_IOCTL_EXPORT, &e);
	if (ret)
		return ret;
	*dmabuf_fd = e.fd;
	if (size)
		*size = e.size;
	return 0;
}

/**
 * svod_import() - a handle of this file for a dma-buf svod exported
 * @fd: descriptor of /dev/svod
 * @dmabuf_fd: the dma-buf fd (received through SCM_RIGHTS, say); it may be
 *	closed afterwards, the handle keeps the allocation
 * @out: out: the whole reply (handle, device address, capacity, tier,
 *	access: SVOD_ACCESS_READ, with SVOD_ACCESS_WRITE for a read-write
 *	dma-buf; id, generation)
 *
 * Each call gives a new handle, also in the exporter's own file. svod_free()
 * drops it.
 *
 * Context: any thread.
 * Return: 0, or -errno: -EBADF (@dmabuf_fd not open), -EINVAL (not a
 * dma-buf), -EXDEV (a dma-buf of another exporter), -ENODEV (its device
 * is gone), -EMFILE (the file holds max_handles handles).
 */
int svod_import(int fd, int dmabuf_fd, struct svod_import *out)
{
	struct svod_import i = { .fd = dmabuf_fd };
	int ret;

	ret = svod_ioctl(fd, SVOD_IOCTL_IMPORT, &i);
	if (!ret)
		*out = i;
	return ret;
}

/*
 * One STAGE or READ. When a signal stops it between two chunks (EINTR: the
 * handler had no SA_RESTART, else the kernel restarts the call itself) the
 * driver has set x.resume to the bytes moved, and issuing the same struct
 * again goes on from there, as libdrm's drmIoctl() retries EINTR; with
 * @once the caller gets -EINTR and *@done instead.
 */
static int svod_xfer(int fd, unsigned long cmd, uint64_t handle,
		     uint64_t offset, uintptr_t buf, uint64_t length,
		     uint32_t flags, uint64_t *done, bool once)
{
	struct svod_xfer x = {
		.handle = handle,
		.offset = offset,
		.user_ptr = buf,
		.length = length,
		.flags = flags,
	};
	int ret;

	do
		ret = svod_ioctl(fd, cmd, &x);
	while (ret == -EINTR && !once);
	if (done)
		*done = x.done;
	return ret;
}

/**
 * svod_stage() - copy user bytes into an allocation's device memory
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: source bytes
 * @length: bytes; 0 is a no-op
 * @flags: SVOD_XFER_CPU, SVOD_XFER_DMA or 0 (auto)
 * @done: out (may be NULL): bytes moved, as the driver reported them
 *
 * A signal whose handler returns does not end the transfer: it goes on
 * where the driver stopped (svod_stage_interruptible() returns instead).
 *
 * Context: any thread.
 * Return: 0, or -errno (never -EINTR).
 */
int svod_stage(int fd, uint64_t handle, uint64_t offset, const void *buf,
	       uint64_t length, uint32_t flags, uint64_t *done)
{
	return svod_xfer(fd, SVOD_IOCTL_STAGE, handle, offset, (uintptr_t)buf,
			 length, flags, done, false);
}

/**
 * svod_stage_interruptible() - svod_stage() that a signal ends
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: source bytes
 * @length: bytes; 0 is a no-op
 * @flags: SVOD_XFER_CPU, SVOD_XFER_DMA or 0 (auto)
 * @done: out (may be NULL): bytes moved, as the driver reported them
 *
 * For a program that handles a signal (Ctrl-C) by stopping what it does:
 * a signal whose handler has no SA_RESTART ends the call with -EINTR after
 * the chunk in flight, and *@done says how far it got (the rest is
 * @offset + *@done on).
 *
 * Context: any thread.
 * Return: 0, or -errno (-EINTR as above).
 */
int svod_stage_interruptible(int fd, uint64_t handle, uint64_t offset, const void *buf,
			     uint64_t length, uint32_t flags, uint64_t *done)
{
	return svod_xfer(fd, SVOD_IOCTL_STAGE, handle, offset, (uintptr_t)buf,
			 length, flags, done, true);
}

/**
 * svod_read() - copy an allocation's device memory into user memory
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: destination
 * @length: bytes; 0 is a no-op
 * @flags: SVOD_XFER_CPU, SVOD_XFER_DMA or 0 (auto)
 * @done: out (may be NULL): bytes moved, as the driver reported them
 *
 * Signals: as svod_stage().
 *
 * Context: any thread.
 * Return: 0, or -errno (never -EINTR).
 */
int svod_read(int fd, uint64_t handle, uint64_t offset, void *buf,
	      uint64_t length, uint32_t flags, uint64_t *done)
{
	return svod_xfer(fd, SVOD_IOCTL_READ, handle, offset, (uintptr_t)buf,
			 length, flags, done, false);
}

/**
 * svod_read_interruptible() - svod_read() that a signal ends
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: destination
 * @length: bytes; 0 is a no-op
 * @flags: SVOD_XFER_CPU, SVOD_XFER_DMA or 0 (auto)
 * @done: out (may be NULL): bytes moved, as the driver reported them
 *
 * Signals: as svod_stage_interruptible().
 *
 * Context: any thread.
 * Return: 0, or -errno (-EINTR on a signal).
 */
int svod_read_interruptible(int fd, uint64_t handle, uint64_t offset, void *buf,
			    uint64_t length, uint32_t flags, uint64_t *done)
{
	return svod_xfer(fd, SVOD_IOCTL_READ, handle, offset, (uintptr_t)buf,
			 length, flags, done, true);
}

/* One asynchronous submission; the driver checks everything else. */
static int svod_xfer_async(int fd, unsigned long cmd, uint64_t handle, uint64_t offset,
			   uintptr_t buf, uint64_t length, uint32_t flags, int in_fence_fd,
			   uint64_t *seqno, int *fence_fd)
{
	struct svod_xfer x = {
		.handle = handle,
		.offset = offset,
		.user_ptr = buf,
		.length = length,
		.flags = flags | SVOD_XFER_ASYNC | (fence_fd ? SVOD_XFER_FENCE_FD : 0),
	};
	int ret;

	if (in_fence_fd >= 0) {
		x.flags |= SVOD_XFER_IN_FENCE;
		x.in_fence_fd = in_fence_fd;
	}
	ret = svod_ioctl(fd, cmd, &x);

	if (!ret) {
		if (seqno)
			*seqno = x.seqno;
		if (fence_fd)
			*fence_fd = x.fence_fd;
	}
	return ret;
}

/**
 * svod_stage_async() - queue a STAGE and return at once
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: source bytes; must stay mapped and unchanged until the transfer
 *	ends (the driver pinned its pages: unmapping it does not stop the
 *	transfer, changing it changes what lands)
 * @length: bytes; 0 is a no-op (it still takes a timeline value)
 * @flags: SVOD_XFER_CPU, SVOD_XFER_DMA or 0 (auto)
 * @seqno: out (may be NULL): the transfer's value on the file's timeline,
 *	what svod_wait() takes
 * @fence_fd: out (NULL: no fence fd): a sync_file (O_CLOEXEC) that
 *	signals when the transfer ends, for poll() or another driver; the
 *	caller closes it
 *
 * Context: any thread.
 * Return: 0 once queued; -errno as the synchronous call before anything
 * moves, or -EAGAIN (too many transfers in flight: svod_wait() for one and
 * retry), -EFBIG (larger than the driver's pinning cap: split it),
 * -EMFILE (no fd for the fence). The transfer's own result comes from
 * svod_wait() or the fence.
 */
int svod_stage_async(int fd, uint64_t handle, uint64_t offset, const void *buf,
		     uint64_t length, uint32_t flags, uint64_t *seqno, int *fence_fd)
{
	return svod_xfer_async(fd, SVOD_IOCTL_STAGE, handle, offset, (uintptr_t)buf,
			       length, flags, -1, seqno, fence_fd);
}

/**
 * svod_stage_async_after() - queue a STAGE that starts after a fence
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: as svod_stage_async()
 * @length: bytes
 * @flags: as svod_stage_async()
 * @in_fence_fd: a sync_file (svod's own fence fd or any driver's) the
 *	transfer waits for before it starts (SVOD_XFER_IN_FENCE); the call
 *	does not close it; -1 for none (then this is svod_stage_async())
 * @seqno: as svod_stage_async()
 * @fence_fd: as svod_stage_async()
 *
 * The file's later transfers wait behind this one. An in-fence that
 * signals an error ends the transfer with that error, one that has not
 * signalled after the driver's async_timeout_ms with -ETIMEDOUT; no byte
 * moves then (svod_wait() or the fence says so).
 *
 * Context: any thread.
 * Return: as svod_stage_async(); also -EBADF (@in_fence_fd not open) and
 * -EINVAL (not a sync_file, or a driver older than in-fences).
 */
int svod_stage_async_after(int fd, uint64_t handle, uint64_t offset, const void *buf,
			   uint64_t length, uint32_t flags, int in_fence_fd,
			   uint64_t *seqno, int *fence_fd)
{
	return svod_xfer_async(fd, SVOD_IOCTL_STAGE, handle, offset, (uintptr_t)buf,
			       length, flags, in_fence_fd, seqno, fence_fd);
}

/**
 * svod_read_async() - queue a READ and return at once
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: destination; its bytes are written until the transfer ends
 * @length: bytes
 * @flags: as svod_stage_async()
 * @seqno: as svod_stage_async()
 * @fence_fd: as svod_stage_async()
 *
 * Context: any thread.
 * Return: as svod_stage_async().
 */
int svod_read_async(int fd, uint64_t handle, uint64_t offset, void *buf,
		    uint64_t length, uint32_t flags, uint64_t *seqno, int *fence_fd)
{
	return svod_xfer_async(fd, SVOD_IOCTL_READ, handle, offset, (uintptr_t)buf,
			       length, flags, -1, seqno, fence_fd);
}

/**
 * svod_read_async_after() - queue a READ that starts after a fence
 * @fd: descriptor of /dev/svod
 * @handle: the handle
 * @offset: byte offset inside the allocation
 * @buf: as svod_read_async()
 * @length: bytes
 * @flags: as svod_stage_async()
 * @in_fence_fd: as svod_stage_async_after()
 * @seqno: as svod_stage_async()
 * @fence_fd: as svod_stage_async()
 *
 * Context: any thread.
 * Return: as svod_stage_async_after().
 */
int svod_read_async_after(int fd, uint64_t handle, uint64_t offset, void *buf,
			  uint64_t length, uint32_t flags, int in_fence_fd,
			  uint64_t *seqno, int *fence_fd)
{
	return svod_xfer_async(fd, SVOD_IOCTL_READ, handle, offset, (uintptr_t)buf,
			       length, flags, in_fence_fd, seqno, fence_fd);
}

/**
 * svod_batch() - queue many transfers as one and return at once
 * @fd: descriptor of /dev/svod
 * @entries: the transfers (SVOD_BATCH_STAGE or SVOD_BATCH_READ each), run
 *	in order; their buffers as for svod_stage_async() and
 *	svod_read_async()
 * @nr: entries, 1..SVOD_BATCH_MAX_ENTRIES
 * @seqno: out (may be NULL): the batch's value on the file's timeline,
 *	what svod_wait() takes
 * @fence_fd: out (NULL: no fence fd): a sync_file (O_CLOEXEC) that
 *	signals when the whole batch ends; the caller closes it
 * @failed: out (may be NULL), whatever the outcome: the index of the entry
 *	the call stopped at, or ~0U
 *
 * Every entry is checked and pinned before any is queued: on failure
 * nothing is queued.
 *
 * Context: any thread.
 * Return: 0 once queued; -errno (Documentation/uapi.rst, "BATCH").
 */
int svod_batch(int fd, const struct svod_batch_entry *entries, uint32_t nr,
	       uint64_t *seqno, int *fence_fd, uint32_t *failed)
{
	return svod_batch_after(fd, entries, nr, -1, seqno, fence_fd, failed);
}

/**
 * svod_batch_after() - queue many transfers as one, started after a fence
 * @fd: descriptor of /dev/svod
 * @entries: as svod_batch()
 * @nr: entries, 1..SVOD_BATCH_MAX_ENTRIES
 * @in_fence_fd: a sync_file the batch waits for before its first entry
 *	starts (SVOD_BATCH_IN_FENCE), as svod_stage_async_after(); -1 for none
 * @seqno: as svod_batch()
 * @fence_fd: as svod_batch()
 * @failed: as svod_batch()
 *
 * Context: any thread.
 * Return: as svod_batch(); also -EBADF and -EINVAL for @in_fence_fd, as
 * svod_stage_async_after().
 */
int svod_batch_after(int fd, const struct svod_batch_entry *entries, uint32_t nr,
		     int in_fence_fd, uint64_t *seqno, int *fence_fd, uint32_t *failed)
{
	struct svod_batch b = {
		.entries_ptr = (uintptr_t)entries,
		.nr_entries = nr,
		.entry_size = sizeof(*entries),
		.failed_entry = ~0U,
		.flags = fence_fd ? SVOD_BATCH_FENCE_FD : 0,
	};
	int ret;

	if (in_fence_fd >= 0) {
		b.flags |= SVOD_BATCH_IN_FENCE;
		b.in_fence_fd = in_fence_fd;
	}
	ret = svod_ioctl(fd, SVOD_IOCTL_BATCH, &b);

	if (failed)
		*failed = b.failed_entry;
	if (!ret) {
		if (seqno)
			*seqno = b.seqno;
		if (fence_fd)
			*fence_fd = b.fence_fd;
	}
	return ret;
}

/**
 * svod_wait() - wait for the end of an asynchronous transfer
 * @fd: descriptor of /dev/svod the transfer was queued on
 * @seqno: its timeline value
 * @timeout_ms: how long to wait; 0 only looks, negative waits for ever
 * @status: out (may be NULL): 0, or the transfer's negative errno
 *	(-ECANCELED: its allocation was freed; -ENODEV: its device went
 *	away; -ETIMEDOUT: it ran past async_timeout_ms; -EFAULT...)
 * @done: out (may be NULL): bytes of the transfer moved
 *
 * A signal does not end the wait (the deadline is absolute, so the retry
 * waits no longer than asked).
 *
 * Context: any thread.
 * Return: 0 once the transfer has ended (*@status says how); -ETIME if it
 * has not within @timeout_ms; -EINVAL for a @seqno never given on @fd;
 * -ENOENT if its result is no longer kept (256 or more later submissions).
 */
int svod_wait(int fd, uint64_t seqno, int timeout_ms, int *status, uint64_t *done)
{
	struct svod_wait w = { .seqno = seqno, .deadline_ns = INT64_MAX };
	struct timespec now;
	int ret;

	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		w.deadline_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec +
				(int64_t)timeout_ms * 1000000;
	}
	do
		ret = svod_ioctl(fd, SVOD_IOCTL_WAIT, &w);
	while (ret == -EINTR);
	if (!ret) {
		if (status)
			*status = w.status;
		if (done)
			*done = w.done;
	}
	return ret;
}

/**
 * svod_plan() - SVOD_IOCTL_PLAN with a caller-built struct
 * @fd: descriptor of /dev/svod
 * @plan: in/out; see struct svod_plan
 *
 * Context: any thread.
 * Return: 0, or -errno (@plan->failed_event says which event failed).
 */
int svod_plan(int fd, struct svod_plan *plan)
{
	return svod_ioctl(fd, SVOD_IOCTL_PLAN, plan);
}

/* What an errno means in svod's terms (its name comes from glibc). */
static const char *const svod_errnos[] = {
	[EPERM] = "operation not permitted",
	[ENOENT] = "no such tier or file",
	[ESRCH] = "no such process",
	[EINTR] = "interrupted by a signal",
	[EIO] = "input/output error",
	[E2BIG] = "too many events",
	[EBADF] = "bad file descriptor",
	[EAGAIN] = "try again",
	[ENOMEM] = "out of memory",
	[EACCES] = "permission denied",
	[EFAULT] = "bad address",
	[EBUSY] = "tier has live allocations",
	[EEXIST] = "overlaps another tier",
	[ENODEV] = "device gone",
	[ENOTDIR] = "not a directory",
	[EINVAL] = "invalid argument",
	[EMFILE] = "too many live handles in this file",
	[ENOTTY] = "unknown ioctl",
	[ENOSPC] = "no space in tier",
	[ERANGE] = "out of range",
	[ENODATA] = "no data",
	[EOPNOTSUPP] = "operation not supported",
	[ETIMEDOUT] = "timed out",
	[ESTALE] = "stale handle",
	[EDQUOT] = "byte quota of this file exceeded",
};

/**
 * svod_errno_name() - the symbolic name of an errno value
 * @err: an errno value, positive or negative
 *
 * glibc's strerrorname_np() names every errno it knows: no private table.
 *
 * Context: any thread.
 * Return: "ENOSPC" and the like, or "E?" for 0 and values glibc lacks.
 */
const char *svod_errno_name(int err)
{
	int e = err < 0 ? -err : err;
	const char *name = e ? strerrorname_np(e) : NULL;

	return name ? name : "E?";
}

/**
 * svod_strerror() - a short description of an errno value, in svod's terms
 * @err: an errno value, positive or negative
 *
 * Context: any thread.
 * Return: a static string, e.g. "stale handle" for ESTALE.
 */
const char *svod_strerror(int err)
{
	unsigned int e = err < 0 ? (unsigned int)-err : (unsigned int)err;

	if (e < ARRAY_SIZE(svod_errnos) && svod_errnos[e])
		return svod_errnos[e];
	return e ? strerror((int)e) : "unknown error";
}

/**
 * svod_parse_size() - parse a size, offset, address or count as svod reads it
 * @text: NUL-terminated; all of it must be the number
 * @val: out: the value, written only on success
 *
 * The grammar is the kernel's configfs parser's, from the same source
 * (driver/core/number.c): a decimal integer without leading zeros or a 0x
 * hex one, optionally followed by K, M, G, T, P or E (either case) or KiB,
 * MiB, GiB, TiB, PiB or EiB, powers of 1024. "010" (octal to strtoull())
 * and "1MB" (10^6 or 2^20 depending on the reader) are refused rather than
 * guessed; so are signs, spaces, newlines and anything after the number.
 *
 * Context: any thread.
 * Return: 0; -EINVAL if @text is not such a number; -ERANGE if its value
 * is beyond UINT64_MAX. svod_size_forms() says what is accepted.
 */
int svod_parse_size(const char *text, uint64_t *val)
{
	u64 v;
	int ret;

	ret = svod_number_parse(text, strlen(text), &v);
	if (!ret)
		*val = v;
	return ret;
}

/**
 * svod_size_forms() - what svod_parse_size() accepts, for a refusal message
 *
 * Context: any thread.
 * Return: a static string, e.g. "a decimal or 0x-hex integer ...: 4096,
 * 0x1000, 64k, 1MiB".
 */
const char *svod_size_forms(void)
{
	return SVOD_NUMBER_FORMS;
}

/* The number in s[0..end), as svod_parse_size(). */
static int svod_parse_span(const char *s, const char *end, uint64_t *val)
{
	u64 v;
	int ret;

	ret = svod_number_parse(s, (size_t)(end - s), &v);
	if (!ret)
		*val = v;
	return ret;
}

/* A value read from sysfs or configfs: a number and its newline. */
static int svod_parse_value(const char *buf, uint64_t *val)
{
	size_t len = strlen(buf);

	return svod_parse_span(buf, buf + len - (len && buf[len - 1] == '\n'), val);
}

/* "<base>+<size>,..." in s[0..stop). */
static int svod_parse_reserved(const char *s, const char *stop,
			       struct svod_tier_decl *decl)
{
	const char *p = s, *comma, *plus;
	uint64_t base, size;
	int ret;

	for (;;) {
		if (decl->nr_reserved == SVOD_MAX_RESERVED)
			return -EINVAL;
		comma = memchr(p, ',', (size_t)(stop - p));
		if (!comma)
			comma = stop;
		plus = memchr(p, '+', (size_t)(comma - p));
		if (!plus)
			return -EINVAL;
		ret = svod_parse_span(p, plus, &base);
		if (!ret)
			ret = svod_parse_span(plus + 1, comma, &size);
		if (ret)
			return ret;
		decl->reserved[decl->nr_reserved].base = base;
		decl->reserved[decl->nr_reserved].size = size;
		decl->nr_reserved++;
		if (comma == stop)
			return 0;
		p = comma + 1;
	}
}

/*
 * An id (@base 10: digits only, below 2^32 - 1) or a mode (@base 8: octal
 * digits only, at most 0777) in s[0..end), as the driver's configfs takes it.
 */
static int svod_parse_access(const char *s, const char *end, unsigned int base,
			     uint32_t *val)
{
	uint64_t v = 0;
	const char *p;

	if (s == end || end - s > 11)
		return -EINVAL;
	for (p = s; p < end; p++) {
		if (*p < '0' || *p >= '0' + (int)base)
			return -EINVAL;
		v = v * base + (uint64_t)(*p - '0');
	}
	if (v > (base == 8 ? 0777 : UINT32_MAX - 1))
		return -ERANGE;
	*val = (uint32_t)v;
	return 0;
}

/* The access @src says: its own, or the default if it has none. */
static void svod_decl_access(const struct svod_tier_decl *src, uint32_t *owner,
			     uint32_t *group, uint32_t *mode)
{
	*owner = src->has_access ? src->owner : 0;
	*group = src->has_access ? src->group : 0;
	*mode = src->has_access ? src->mode : SVOD_DECL_DEFAULT_MODE;
}

/**
 * svod_decl_parse() - parse one tier line
 * @line: "<name> bar=<n> offset=.. size=.. base=.. align=.. [reserved=..]
 *	[owner=<uid>] [group=<gid>] [mode=<octal>]", ended by NUL, newline
 *	or ';'
 * @decl: out: the parsed tier
 *
 * bar, offset and size must be present; base defaults to 0, align to 64
 * (as in the driver); owner, group and mode to 0, 0 and 0666 (owner and
 * group decimal ids, mode octal digits, at most 0777: the driver's
 * configfs forms); no key may appear twice. Numbers are
 * svod_parse_size()'s. No value is range-checked here beyond what the
 * grammar and the fields hold: that is the driver's job (a test may want to
 * send nonsense on purpose).
 *
 * Context: any thread.
 * Return: 0; -EINVAL for a malformed line; -ERANGE for a number beyond 64
 * bits (bar: 32).
 */
int svod_decl_parse(const char *line, struct svod_tier_decl *decl)
{
	static const char *const keys[] = {
		"bar=", "offset=", "size=", "base=", "align=", "reserved=",
		"owner=", "group=", "mode="
	};
	size_t len = strcspn(line, "\n;");
	const char *p = line, *stop = line + len, *tok_end;
	unsigned int seen = 0, k;
	uint64_t v;
	size_t n;
	int ret;

	memset(decl, 0, sizeof(*decl));
	decl->align = SVOD_DECL_DEFAULT_ALIGN;
	decl->mode = SVOD_DECL_DEFAULT_MODE;
	while (p < stop && (*p == ' ' || *p == '\t'))
		p++;
	n = strcspn(p, " \t\n;");
	if (n == 0 || n >= SVOD_NAME_LEN || memchr(p, '=', n))
		return -EINVAL;
	memcpy(decl->name, p, n);
	p += n;
	for (;;) {
		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= stop)
			break;
		tok_end = p + strcspn(p, " \t\n;");
		for (k = 0; k < ARRAY_SIZE(keys); k++)
			if (!strncmp(p, keys[k], strlen(keys[k])))
				break;
		if (k == ARRAY_SIZE(keys) || seen & (1U << k))
			return -EINVAL;
		seen |= 1U << k;
		p += strlen(keys[k]);
		if (k == 5) {
			ret = svod_parse_reserved(p, tok_end, decl);
			if (ret)
				return ret;
			p = tok_end;
			continue;
		}
		if (k >= 6) {
			uint32_t *field = k == 6 ? &decl->owner :
					  k == 7 ? &decl->group : &decl->mode;

			ret = svod_parse_access(p, tok_end, k == 8 ? 8 : 10, field);
			if (ret)
				return ret;
			decl->has_access = 1;
			p = tok_end;
			continue;
		}
		ret = svod_parse_span(p, tok_end, &v);
		if (ret)
			return ret;
		p = tok_end;
		switch (k) {
		case 0:
			if (v > UINT32_MAX)
				return -ERANGE;
			decl->bar = (uint32_t)v;
			break;
		case 1:
			decl->offset = v;
			break;
		case 2:
			decl->size = v;
			break;
		case 3:
			decl->base = v;
			break;
		default:
			decl->align = v;
			break;
		}
	}
	return (seen & 0x7) == 0x7 ? 0 : -EINVAL;
}

/**
 * svod_decl_parse_set() - parse a whole declaration: lines or ';'-separated
 * @text: the declaration; blank lines are skipped
 * @decls: out: up to @cap tiers, in the order given
 * @cap: entries at @decls
 *
 * Context: any thread.
 * Return: the number of tiers; -EINVAL for a malformed line, a name given
 * twice or more than @cap tiers; -ERANGE for a number too large.
 */
int svod_decl_parse_set(const char *text, struct svod_tier_decl *decls,
			unsigned int cap)
{
	const char *p = text, *q;
	unsigned int nr = 0, i;
	int ret;

	while (*p) {
		q = p + strspn(p, " \t");
		if (*q && *q != '\n' && *q != ';') {
			if (nr == cap)
				return -EINVAL;
			ret = svod_decl_parse(p, &decls[nr]);
			if (ret)
				return ret;
			for (i = 0; i < nr; i++)
				if (!strcmp(decls[i].name, decls[nr].name))
					return -EINVAL;
			nr++;
		}
		p += strcspn(p, "\n;");
		if (*p)
			p++;
	}
	return (int)nr;
}

/**
 * svod_decl_format() - format one tier as a line of the declaration format
 * @decl: the tier
 * @buf: out: the line, NUL-terminated, without a newline
 * @len: bytes at @buf
 *
 * owner, group and mode are printed only when they differ from the default
 * (0, 0, 0666), so a line without them reads back the same.
 *
 * Context: any thread.
 * Return: the line's length, or -ENOSPC if @buf is too small, -EINVAL if
 * @decl has more than SVOD_MAX_RESERVED reserved regions.
 */
int svod_decl_format(const struct svod_tier_decl *decl, char *buf, size_t len)
{
	uint32_t i, owner, group, mode;
	size_t pos;
	int n;

	if (decl->nr_reserved > SVOD_MAX_RESERVED)
		return -EINVAL;
	n = snprintf(buf, len,
		     "%.*s bar=%" PRIu32 " offset=0x%" PRIx64 " size=0x%" PRIx64
		     " base=0x%" PRIx64 " align=%" PRIu64,
		     SVOD_NAME_LEN, decl->name, decl->bar, decl->offset,
		     decl->size, decl->base, decl->align);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	pos = (size_t)n;
	for (i = 0; i < decl->nr_reserved; i++) {
		n = snprintf(buf + pos, len - pos, "%s0x%" PRIx64 "+0x%" PRIx64,
			     i ? "," : " reserved=", (uint64_t)decl->reserved[i].base,
			     (uint64_t)decl->reserved[i].size);
		if (n < 0 || (size_t)n >= len - pos)
			return -ENOSPC;
		pos += (size_t)n;
	}
	svod_decl_access(decl, &owner, &group, &mode);
	if (owner || group || mode != SVOD_DECL_DEFAULT_MODE) {
		n = snprintf(buf + pos, len - pos, " owner=%" PRIu32 " group=%" PRIu32 " mode=%04" PRIo32,
			     owner, group, mode);
		if (n < 0 || (size_t)n >= len - pos)
			return -ENOSPC;
		pos += (size_t)n;
	}
	return (int)pos;
}

static int svod_sysfs_read(const char *path, char *buf, size_t len)
{
	size_t pos = 0;
	ssize_t n;
	int fd, ret;

	if (len == 0)
		return -ENOSPC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (pos < len - 1) {
		n = read(fd, buf + pos, len - 1 - pos);
		if (n < 0) {
			ret = -errno;
			goto close_fd;
		}
		if (n == 0)
			break;
		pos += (size_t)n;
	}
	buf[pos] = '\0';
	ret = (int)pos;
close_fd:
	close(fd);
	return ret;
}

/* @buf without its first newline and what follows. */
static char *svod_chomp(char *buf)
{
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static int svod_sysfs_write(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* sysfs and configfs take one store per write(): never split the text. */
	n = write(fd, text, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

/* Formats a path; -ENAMETOOLONG if it does not fit. */
__attribute__((format(printf, 3, 4)))
static int svod_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A configfs value of the tier tree; -ENODATA if it was never written. */
static int svod_cfs_read_u64(const char *dir, const char *file, uint64_t *val)
{
	char path[512], buf[64];
	int ret;

	ret = svod_path(path, sizeof(path), "%s/%s", dir, file);
	if (!ret)
		ret = svod_sysfs_read(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ENODATA;
	return svod_parse_value(buf, val);
}

/*
 * A tier's owner, group and mode from @dir (its configfs directory or its
 * sysfs device): decimal ids, an octal mode.
 */
static int svod_read_access(const char *dir, struct svod_tier_decl *d)
{
	static const char *const files[] = { "owner", "group", "mode" };
	uint32_t *fields[] = { &d->owner, &d->group, &d->mode };
	char path[512], buf[32];
	unsigned int i;
	size_t len;
	int ret;

	for (i = 0; i < 3; i++) {
		ret = svod_path(path, sizeof(path), "%s/%s", dir, files[i]);
		if (!ret)
			ret = svod_sysfs_read(path, buf, sizeof(buf));
		if (ret < 0)
			return ret;
		len = strcspn(buf, "\n");
		ret = svod_parse_access(buf, buf + len, i == 2 ? 8 : 10, fields[i]);
		if (ret)
			return ret;
	}
	d->has_access = d->owner || d->group || d->mode != SVOD_DECL_DEFAULT_MODE;
	return 0;
}

/* Writes @d's access (the default if it has none) into configfs @dir. */
static int svod_cfs_write_access(const char *dir, const struct svod_tier_decl *d)
{
	uint32_t owner, group, mode;
	char path[512], buf[32];
	int ret;

	svod_decl_access(d, &owner, &group, &mode);
	snprintf(buf, sizeof(buf), "%" PRIu32, owner);
	ret = svod_path(path, sizeof(path), "%s/owner", dir) ?: svod_sysfs_write(path, buf);
	snprintf(buf, sizeof(buf), "%" PRIu32, group);
	ret = ret ?: svod_path(path, sizeof(path), "%s/group", dir) ?: svod_sysfs_write(path, buf);
	snprintf(buf, sizeof(buf), "%04" PRIo32, mode);
	return ret ?: svod_path(path, sizeof(path), "%s/mode", dir) ?: svod_sysfs_write(path, buf);
}

static int svod_cfs_write_u64(const char *dir, const char *file, uint64_t val)
{
	char path[512], buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, val);
	return svod_path(path, sizeof(path), "%s/%s", dir, file) ?:
	       svod_sysfs_write(path, buf);
}

static int svod_cmp_region(const void *a, const void *b)
{
	const struct svod_region *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* The reserved regions staged under @tier_dir/reserved, sorted by base. */
static int svod_cfs_read_reserved(const char *tier_dir, struct svod_tier_decl *d)
{
	char path[512], rdir[512];
	struct dirent *de;
	uint64_t base, size;
	int ret = 0;
	DIR *dir;

	if (svod_path(path, sizeof(path), "%s/reserved", tier_dir))
		return -ENAMETOOLONG;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!ret && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (d->nr_reserved == SVOD_MAX_RESERVED) {
			ret = -E2BIG;
			break;
		}
		ret = svod_path(rdir, sizeof(rdir), "%s/%s", path, de->d_name);
		if (!ret)
			ret = svod_cfs_read_u64(rdir, "base", &base);
		if (!ret)
			ret = svod_cfs_read_u64(rdir, "size", &size);
		if (!ret) {
			d->reserved[d->nr_reserved].base = base;
			d->reserved[d->nr_reserved].size = size;
			d->nr_reserved++;
		}
	}
	closedir(dir);
	qsort(d->reserved, d->nr_reserved, sizeof(d->reserved[0]), svod_cmp_region);
	return ret;
}

static int svod_cfs_read_tier(const char *tiers, const char *name,
			      struct svod_tier_decl *d)
{
	char dir[512];
	uint64_t bar = 0;
	int ret;

	memset(d, 0, sizeof(*d));
	if (strlen(name) >= SVOD_NAME_LEN)
		return -ENAMETOOLONG;
	strcpy(d->name, name);
	ret = svod_path(dir, sizeof(dir), "%s/%s", tiers, name);
	if (!ret)
		ret = svod_cfs_read_u64(dir, "bar", &bar);
	if (!ret)
		ret = svod_cfs_read_u64(dir, "offset", &d->offset);
	if (!ret)
		ret = svod_cfs_read_u64(dir, "size", &d->size);
	if (!ret)
		ret = svod_cfs_read_u64(dir, "base", &d->base);
	if (!ret)
		ret = svod_cfs_read_u64(dir, "align", &d->align);
	if (!ret)
		ret = svod_read_access(dir, d);
	if (!ret && bar > UINT32_MAX)
		ret = -EINVAL;
	d->bar = (uint32_t)bar;
	return ret ? ret : svod_cfs_read_reserved(dir, d);
}

static int svod_cmp_decl(const void *a, const void *b)
{
	const struct svod_tier_decl *x = a, *y = b;

	if (x->bar != y->bar)
		return x->bar < y->bar ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Names of the tiers staged under @tiers (a device's tiers/ directory). */
static int svod_cfs_tier_names(const char *tiers, char (*names)[SVOD_NAME_LEN],
			       unsigned int cap)
{
	struct dirent *de;
	unsigned int nr = 0;
	DIR *dir;

	dir = opendir(tiers);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (nr == cap || strlen(de->d_name) >= SVOD_NAME_LEN) {
			closedir(dir);
			return -E2BIG;
		}
		strcpy(names[nr++], de->d_name);
	}
	closedir(dir);
	return (int)nr;
}

/**
 * svod_declared_read() - the tiers a device's configfs directory declares
 * @bdf: PCI address, e.g. "0000:00:04.0"
 * @decls: out: up to @cap tiers, sorted by BAR, then offset
 * @cap: entries at @decls
 *
 * The administrator's declaration, bound or not, applied or not (see
 * svod_decl_status()); svod_decl_read() gives what is live.
 *
 * Context: any thread.
 * Return: the number of tiers (only @cap are filled), or -errno: -ENOENT if
 * there is no declaration, -ENODATA if a tier lacks bar, offset or size,
 * -E2BIG beyond SVOD_DECL_MAX_TIERS.
 */
int svod_declared_read(const char *bdf, struct svod_tier_decl *decls, unsigned int cap)
{
	char tiers[256], names[SVOD_DECL_MAX_TIERS][SVOD_NAME_LEN];
	struct svod_tier_decl d;
	int nr, i, ret;

	if (svod_path(tiers, sizeof(tiers), SVOD_CONFIGFS "/%s/tiers", bdf))
		return -ENAMETOOLONG;
	nr = svod_cfs_tier_names(tiers, names, SVOD_DECL_MAX_TIERS);
	for (i = 0; i < nr; i++) {
		ret = svod_cfs_read_tier(tiers, names[i], &d);
		if (ret)
			return ret;
		if ((unsigned int)i < cap)
			decls[i] = d;
	}
	if (nr > 0)
		qsort(decls, (unsigned int)nr < cap ? (unsigned int)nr : cap, sizeof(*decls),
		      svod_cmp_decl);
	return nr;
}

/*
 * The BAR, BAR offset and access of @bdf's live tier @id, from its sysfs device,
 * <bdf>/svod/tier<id>/.
 */
static int svod_sysfs_tier_place(const char *bdf, uint32_t id, struct svod_tier_decl *d)
{
	char dir[256];
	uint64_t bar = 0;
	int ret;

	if (svod_path(dir, sizeof(dir), SVOD_SYSFS_DEVICES "/%s/svod/tier%" PRIu32, bdf, id))
		return -ENAMETOOLONG;
	ret = svod_cfs_read_u64(dir, "bar", &bar) ?: svod_cfs_read_u64(dir, "bar_offset", &d->offset) ?:
	      svod_read_access(dir, d);
	if (!ret && bar > UINT32_MAX)
		ret = -EINVAL;
	d->bar = (uint32_t)bar;
	return ret;
}

/**
 * svod_decl_read() - a bound device's live tiers, as declarations
 * @bdf: PCI address, e.g. "0000:00:04.0"
 * @decls: out: up to @cap tiers, sorted by BAR, then offset
 * @cap: entries at @decls
 *
 * The tiers in use (QUERY for their placement and reserved regions, sysfs
 * for their BAR and offset), whatever configfs declares: a declaration
 * not yet applied (an unbound device's, or one not committed) is not live.
 *
 * Context: any thread; opens /dev/svod.
 * Return: the number of tiers (only @cap are filled), or -errno: -ENOENT if
 * the device is not bound, those of svod_open() and svod_query_full(),
 * -E2BIG beyond SVOD_DECL_MAX_TIERS.
 */
int svod_decl_read(const char *bdf, struct svod_tier_decl *decls, unsigned int cap)
{
	struct svod_tier_info *tiers = NULL;
	struct svod_region *regions = NULL;
	uint32_t nr_tiers, nr_regions, i, j;
	struct svod_tier_decl d;
	char path[256];
	int fd, nr = 0, ret = 0;

	if (svod_path(path, sizeof(path), SVOD_SYSFS_DRIVER "/%s", bdf))
		return -ENAMETOOLONG;
	if (access(path, F_OK))
		return -ENOENT;
	fd = svod_open();
	if (fd < 0)
		return fd;
	ret = svod_query_full(fd, &tiers, &nr_tiers, &regions, &nr_regions);
	svod_close(fd);
	for (i = 0; !ret && i < nr_tiers; i++) {
		const struct svod_tier_info *t = &tiers[i];

		if ((t->flags & SVOD_TIER_GONE) || strcmp(t->device, bdf))
			continue;
		if (nr == SVOD_DECL_MAX_TIERS) {
			ret = -E2BIG;
			break;
		}
		memset(&d, 0, sizeof(d));
		snprintf(d.name, sizeof(d.name), "%s", t->name);
		d.size = t->capacity;
		d.base = t->device_base;
		d.align = t->align;
		for (j = 0; j < t->nr_reserved && j < SVOD_MAX_RESERVED &&
			    t->first_reserved + j < nr_regions; j++)
			d.reserved[d.nr_reserved++] = regions[t->first_reserved + j];
		qsort(d.reserved, d.nr_reserved, sizeof(d.reserved[0]), svod_cmp_region);
		ret = svod_sysfs_tier_place(bdf, t->id, &d);
		if (!ret && (unsigned int)nr < cap)
			decls[nr] = d;
		nr += !ret;
	}
	free(tiers);
	free(regions);
	if (ret)
		return ret;
	if (nr > 0)
		qsort(decls, (unsigned int)nr < cap ? (unsigned int)nr : cap, sizeof(*decls),
		      svod_cmp_decl);
	return nr;
}

/* rmdir a staged tier's reserved regions, and the tier unless @keep. */
static int svod_cfs_remove_tier(const char *tiers, const char *name, int keep)
{
	char dir[512], path[640];
	struct dirent *de;
	DIR *rdir;
	int ret = 0;

	if (svod_path(dir, sizeof(dir), "%s/%s/reserved", tiers, name))
		return -ENAMETOOLONG;
	rdir = opendir(dir);
	if (!rdir)
		return -errno;
	while (!ret && (de = readdir(rdir))) {
		if (de->d_name[0] == '.')
			continue;
		ret = svod_path(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!ret && rmdir(path))
			ret = -errno;
	}
	closedir(rdir);
	if (!ret && !keep)
		ret = svod_path(dir, sizeof(dir), "%s/%s", tiers, name);
	if (!ret && !keep && rmdir(dir))
		ret = -errno;
	return ret;
}

/* mkdir (if needed) and write one staged tier, its regions replaced. */
static int svod_cfs_stage_tier(const char *tiers, const struct svod_tier_decl *d)
{
	char dir[512], rdir[640];
	uint32_t i;
	int ret;

	if (svod_path(dir, sizeof(dir), "%s/%s", tiers, d->name))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	ret = svod_cfs_write_u64(dir, "bar", d->bar);
	if (!ret)
		ret = svod_cfs_write_u64(dir, "offset", d->offset);
	if (!ret)
		ret = svod_cfs_write_u64(dir, "size", d->size);
	if (!ret)
		ret = svod_cfs_write_u64(dir, "base", d->base);
	if (!ret)
		ret = svod_cfs_write_u64(dir, "align", d->align);
	if (!ret)
		ret = svod_cfs_write_access(dir, d);
	for (i = 0; !ret && i < d->nr_reserved && i < SVOD_MAX_RESERVED; i++) {
		ret = svod_path(rdir, sizeof(rdir), "%s/reserved/%u", dir, i);
		if (!ret && mkdir(rdir, 0755) && errno != EEXIST)
			ret = -errno;
		if (!ret)
			ret = svod_cfs_write_u64(rdir, "base", d->reserved[i].base);
		if (!ret)
			ret = svod_cfs_write_u64(rdir, "size", d->reserved[i].size);
	}
	return ret;
}

/* Make the staged tree exactly @decls: rmdir first, so limits hold. */
static int svod_cfs_stage(const char *bdf, const struct svod_tier_decl *decls,
			  unsigned int nr)
{
	char tiers[256], names[SVOD_DECL_MAX_TIERS][SVOD_NAME_LEN];
	unsigned int i, j;
	int nr_old, ret = 0;

	if (svod_path(tiers, sizeof(tiers), SVOD_CONFIGFS "/%s/tiers", bdf))
		return -ENAMETOOLONG;
	nr_old = svod_cfs_tier_names(tiers, names, SVOD_DECL_MAX_TIERS);
	if (nr_old < 0)
		return nr_old;
	/* Regions are rewritten from scratch: every old tier goes or is emptied. */
	for (i = 0; !ret && i < (unsigned int)nr_old; i++) {
		for (j = 0; j < nr && strcmp(names[i], decls[j].name); j++)
			;
		ret = svod_cfs_remove_tier(tiers, names[i], j < nr);
	}
	for (i = 0; !ret && i < nr; i++)
		ret = svod_cfs_stage_tier(tiers, &decls[i]);
	return ret;
}

/**
 * svod_undeclare() - remove a device's declaration from configfs
 * @bdf: PCI address, e.g. "0000:00:04.0"
 *
 * rmdir of its reserved regions, its tiers and its directory. The live
 * tiers stay as they are; the next bind gives the device its default tier.
 *
 * Context: any thread; needs root (configfs).
 * Return: 0, or -errno (-ENOENT when there is no declaration).
 */
int svod_undeclare(const char *bdf)
{
	char dir[256], tiers[256], names[SVOD_DECL_MAX_TIERS][SVOD_NAME_LEN];
	int nr, i, ret = 0;

	if (svod_path(dir, sizeof(dir), SVOD_CONFIGFS "/%s", bdf) ||
	    svod_path(tiers, sizeof(tiers), "%s/tiers", dir))
		return -ENAMETOOLONG;
	nr = svod_cfs_tier_names(tiers, names, SVOD_DECL_MAX_TIERS);
	if (nr < 0)
		return nr;
	for (i = 0; !ret && i < nr; i++)
		ret = svod_cfs_remove_tier(tiers, names[i], 0);
	if (!ret && rmdir(dir))
		ret = -errno;
	return ret;
}

/**
 * svod_decl_status() - whether a declaration's device is bound, and how
 *	the declaration was last applied
 * @bdf: PCI address, e.g. "0000:00:04.0"
 * @last_apply: out, may be NULL: the driver's last_apply text ("none",
 *	"bind: ok", "commit: error -16: ..."), without the newline
 * @len: bytes at @last_apply
 *
 * Context: any thread.
 * Return: 1 if the device is bound, 0 if not, or -errno (-ENOENT when there
 * is no declaration).
 */
int svod_decl_status(const char *bdf, char *last_apply, size_t len)
{
	char path[256], buf[32];
	int ret;

	if (svod_path(path, sizeof(path), SVOD_CONFIGFS "/%s/status", bdf))
		return -ENAMETOOLONG;
	ret = svod_sysfs_read(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (last_apply && len) {
		if (svod_path(path, sizeof(path), SVOD_CONFIGFS "/%s/last_apply", bdf))
			return -ENAMETOOLONG;
		ret = svod_sysfs_read(path, last_apply, len);
		if (ret < 0)
			return ret;
		svod_chomp(last_apply);
	}
	return !strcmp(svod_chomp(buf), "bound");
}

/**
 * svod_decl_write() - declare a device's tiers in configfs, and apply them
 * @bdf: PCI address, e.g. "0000:00:04.0"
 * @decls: the new set
 * @nr: entries in @decls (at most SVOD_DECL_MAX_TIERS)
 *
 * Makes the device's directory if there is none, writes @decls in it (rmdir
 * of the tiers not in it, mkdir and writes of the others), then, if the
 * device is bound, writes 1 to commit: the driver applies all of it or none
 * of it. For a device that is not bound the declaration waits for its
 * bind (svod_decl_status() says how it went). If staging or the commit
 * fails, the declaration is put back as it was (or removed, if this call
 * made it).
 *
 * Context: any thread; needs root (configfs, and CAP_SYS_ADMIN to commit).
 * Return: 0, or -errno (-EPERM, -EINVAL, -ERANGE, -EEXIST, -EBUSY, -ENOSPC
 * for too many tiers or regions, -ENODEV if the device went away meanwhile,
 * -EINVAL for a @bdf that is not a PCI name, ...).
 */
int svod_decl_write(const char *bdf, const struct svod_tier_decl *decls,
		    unsigned int nr)
{
	struct svod_tier_decl *old;
	char path[256];
	int nr_old = 0, made, ret;

	if (nr > SVOD_DECL_MAX_TIERS)
		return -ENOSPC;
	if (svod_path(path, sizeof(path), SVOD_CONFIGFS "/%s", bdf))
		return -ENAMETOOLONG;
	made = !mkdir(path, 0755);
	if (!made && errno != EEXIST)
		return -errno;
	old = calloc(SVOD_DECL_MAX_TIERS, sizeof(*old));
	if (!old)
		return -ENOMEM;
	if (!made)
		nr_old = svod_declared_read(bdf, old, SVOD_DECL_MAX_TIERS);
	if (nr_old < 0 || nr_old > SVOD_DECL_MAX_TIERS) {
		free(old);
		return nr_old < 0 ? nr_old : -E2BIG;
	}
	ret = svod_cfs_stage(bdf, decls, nr);
	if (!ret && svod_decl_status(bdf, NULL, 0) == 1) {
		ret = svod_path(path, sizeof(path), SVOD_CONFIGFS "/%s/commit", bdf);
		if (!ret)
			ret = svod_sysfs_write(path, "1");
	}
	if (ret && made)
		svod_undeclare(bdf);
	else if (ret)
		svod_cfs_stage(bdf, old, (unsigned int)nr_old);
	free(old);
	return ret;
}

/**
 * svod_tiers_read() - a device's tiers in the declaration format
 * @bdf: PCI address, e.g. "0000:00:04.0"
 * @buf: out: the live tiers as text, NUL-terminated, one tier per line
 *	(svod_decl_format()), as svod_decl_read() orders them
 * @len: bytes at @buf
 *
 * Context: any thread.
 * Return: bytes written, or -errno (see svod_decl_read(); -ENOSPC if @buf is
 * too small).
 */
int svod_tiers_read(const char *bdf, char *buf, size_t len)
{
	struct svod_tier_decl decls[SVOD_DECL_MAX_TIERS];
	size_t pos = 0;
	int nr, i, n;

	nr = svod_decl_read(bdf, decls, SVOD_DECL_MAX_TIERS);
	if (nr < 0)
		return nr;
	if (len == 0 || nr > SVOD_DECL_MAX_TIERS)
		return -ENOSPC;
	buf[0] = '\0';
	for (i = 0; i < nr; i++) {
		n = svod_decl_format(&decls[i], buf + pos, len - pos);
		if (n < 0 || (size_t)n + 1 >= len - pos)
			return -ENOSPC;
		pos += (size_t)n;
		buf[pos++] = '\n';
		buf[pos] = '\0';
	}
	return (int)pos;
}

/**
 * svod_tiers_write() - declare a device's tiers with a text declaration
 * @bdf: PCI address, e.g. "0000:00:04.0"
 * @text: the new declaration: lines or ';'-separated tiers (blank: no tier)
 *
 * Parses @text (svod_decl_parse_set()) and declares it with
 * svod_decl_write(): applied at once, all of it or none of it, on a bound
 * device; at its bind on another.
 *
 * Context: any thread; needs root.
 * Return: 0, or -errno (-EINVAL for malformed text, and those of
 * svod_decl_write()).
 */
int svod_tiers_write(const char *bdf, const char *text)
{
	struct svod_tier_decl decls[SVOD_DECL_MAX_TIERS];
	int nr;

	nr = svod_decl_parse_set(text, decls, SVOD_DECL_MAX_TIERS);
	if (nr < 0)
		return nr;
	return svod_decl_write(bdf, decls, (unsigned int)nr);
}

static int svod_cmp_bdf(const void *a, const void *b)
{
	return strcmp(a, b);
}

/**
 * svod_devices() - the PCI devices bound to the svod driver
 * @bdfs: out: up to @cap PCI addresses, sorted
 * @cap: entries at @bdfs
 *
 * Context: any thread.
 * Return: the number of bound devices (may exceed @cap: only @cap were
 * filled), or -errno (-ENOENT when the driver is not loaded).
 */
int svod_devices(char (*bdfs)[SVOD_NAME_LEN], unsigned int cap)
{
	struct dirent *de;
	unsigned int nr = 0;
	DIR *dir;

	dir = opendir(SVOD_SYSFS_DRIVER);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		/* Devices are the "dddd:bb:dd.f" links; skip bind, module, ... */
		if (!strchr(de->d_name, ':') || strlen(de->d_name) >= SVOD_NAME_LEN)
			continue;
		if (nr < cap)
			strcpy(bdfs[nr], de->d_name);
		nr++;
	}
	closedir(dir);
	qsort(bdfs, nr < cap ? nr : cap, sizeof(*bdfs), svod_cmp_bdf);
	return (int)nr;
}

/**
 * svod_pci_name_valid() - is @name a PCI device name as the kernel spells it?
 * @name: NUL-terminated text
 *
 * "0000:00:04.0": domain, bus, slot and function in lower-case hexadecimal,
 * zero-padded (pci_name()); the only names configfs takes for a
 * declaration.
 *
 * Context: any thread.
 * Return: 1 if it is one, else 0.
 */
int svod_pci_name_valid(const char *name)
{
	unsigned int domain, bus, slot, fn;
	char canon[32];
	int len = 0;

	if (strlen(name) >= SVOD_NAME_LEN ||
	    sscanf(name, "%x:%x:%x.%x%n", &domain, &bus, &slot, &fn, &len) != 4 ||
	    name[len] || bus > 0xff || slot > 0x1f || fn > 7)
		return 0;
	snprintf(canon, sizeof(canon), "%04x:%02x:%02x.%u", domain, bus, slot, fn);
	return !strcmp(name, canon);
}

/**
 * svod_declared_devices() - the devices configfs holds a declaration for
 * @bdfs: out: up to @cap PCI names, sorted; may be NULL if @cap is 0
 * @cap: entries at @bdfs
 *
 * Every directory under SVOD_CONFIGFS, bound or not, present or not.
 *
 * Context: any thread.
 * Return: the number of declarations (may exceed @cap: only @cap were
 * filled), or -errno (-ENOENT when svod is not loaded or configfs is not
 * mounted).
 */
int svod_declared_devices(char (*bdfs)[SVOD_NAME_LEN], unsigned int cap)
{
	struct dirent *de;
	unsigned int nr = 0;
	DIR *dir;

	dir = opendir(SVOD_CONFIGFS);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (!svod_pci_name_valid(de->d_name))
			continue;
		if (nr < cap)
			strcpy(bdfs[nr], de->d_name);
		nr++;
	}
	closedir(dir);
	if (cap)
		qsort(bdfs, nr < cap ? nr : cap, sizeof(*bdfs), svod_cmp_bdf);
	return (int)nr;
}

/* Does @a declare what @b does (access by its effect, regions in any order)? */
static int svod_tier_decl_equal(const struct svod_tier_decl *a, const struct svod_tier_decl *b)
{
	struct svod_region ra[SVOD_MAX_RESERVED], rb[SVOD_MAX_RESERVED];
	uint32_t oa, ga, ma, ob, gb, mb;

	if (strcmp(a->name, b->name) || a->bar != b->bar || a->offset != b->offset ||
	    a->size != b->size || a->base != b->base || a->align != b->align ||
	    a->nr_reserved != b->nr_reserved || a->nr_reserved > SVOD_MAX_RESERVED)
		return 0;
	svod_decl_access(a, &oa, &ga, &ma);
	svod_decl_access(b, &ob, &gb, &mb);
	if (oa != ob || ga != gb || ma != mb)
		return 0;
	memcpy(ra, a->reserved, a->nr_reserved * sizeof(ra[0]));
	memcpy(rb, b->reserved, b->nr_reserved * sizeof(rb[0]));
	qsort(ra, a->nr_reserved, sizeof(ra[0]), svod_cmp_region);
	qsort(rb, b->nr_reserved, sizeof(rb[0]), svod_cmp_region);
	return !memcmp(ra, rb, a->nr_reserved * sizeof(ra[0]));
}

/**
 * svod_decl_equal() - do two sets of tiers declare the same?
 * @a: one set
 * @nr_a: entries in @a
 * @b: the other
 * @nr_b: entries in @b
 *
 * The same tiers by name, in any order, each with the same values; reserved
 * regions in any order; a tier without access given equals one that gives
 * the default (0, 0, 0666). Names are distinct within each set (as
 * svod_decl_parse_set() and configfs have them).
 *
 * Context: any thread.
 * Return: 1 if they are the same, else 0.
 */
int svod_decl_equal(const struct svod_tier_decl *a, unsigned int nr_a,
		    const struct svod_tier_decl *b, unsigned int nr_b)
{
	unsigned int i, j;

	if (nr_a != nr_b)
		return 0;
	for (i = 0; i < nr_a; i++) {
		for (j = 0; j < nr_b && strcmp(a[i].name, b[j].name); j++)
			;
		if (j == nr_b || !svod_tier_decl_equal(&a[i], &b[j]))
			return 0;
	}
	return 1;
}

/*
 * One line of a saved file (NUL-terminated, no newline) into @devs: the
 * device found or added, its tiers appended.
 */
static int svod_decl_file_line(char *line, struct svod_dev_decl *devs, unsigned int *nr,
			       unsigned int cap, unsigned int lineno)
{
	struct svod_tier_decl tiers[SVOD_DECL_MAX_TIERS];
	struct svod_dev_decl *dev;
	char *p = line + strspn(line, " \t"), *rest;
	unsigned int i, j;
	int n;

	if (!*p || *p == '#')
		return 0;
	rest = p + strcspn(p, " \t");
	if (*rest)
		*rest++ = '\0';
	if (!svod_pci_name_valid(p))
		return -EINVAL;
	n = svod_decl_parse_set(rest, tiers, SVOD_DECL_MAX_TIERS);
	if (n < 0)
		return n;
	for (i = 0; i < *nr && strcmp(devs[i].bdf, p); i++)
		;
	if (i == *nr) {
		if (*nr == cap)
			return -ENOSPC;
		memset(&devs[i], 0, sizeof(devs[i]));
		strcpy(devs[i].bdf, p);
		devs[i].line = lineno;
		(*nr)++;
	}
	dev = &devs[i];
	if (dev->nr + (unsigned int)n > SVOD_DECL_MAX_TIERS)
		return -E2BIG;
	for (i = 0; i < (unsigned int)n; i++) {
		for (j = 0; j < dev->nr; j++)
			if (!strcmp(dev->tiers[j].name, tiers[i].name))
				return -EEXIST;
		dev->tiers[dev->nr++] = tiers[i];
	}
	return 0;
}

/**
 * svod_decl_file_parse() - parse a saved file of declarations
 * @text: the file, NUL-terminated
 * @devs: out: up to @cap devices, in the order the file first names them
 * @cap: entries at @devs (the file's number of lines is always enough)
 * @line: out: the number (from 1) of the line refused, on an error
 *
 * Each line is "<pci name> [<tier>[; <tier>...]]" (libsvod.h); a device's
 * lines are added up, so its tiers may be on one line or on many. The
 * whole text is parsed before anything is returned: a caller applies
 * nothing from a file with one bad line.
 *
 * Context: any thread.
 * Return: the number of devices, or -errno with *@line set: -EINVAL for a
 * malformed line or a first word that is not a PCI name, -ERANGE for a
 * number too large, -EEXIST for a tier a device declares twice, -E2BIG for
 * more than SVOD_DECL_MAX_TIERS tiers of one device, -ENOSPC beyond @cap
 * devices, -ENOMEM.
 */
int svod_decl_file_parse(const char *text, struct svod_dev_decl *devs, unsigned int cap,
			 unsigned int *line)
{
	const char *p = text;
	unsigned int nr = 0;
	char *buf;
	size_t len;
	int ret;

	*line = 0;
	while (*p) {
		(*line)++;
		len = strcspn(p, "\n");
		buf = strndup(p, len);
		if (!buf)
			return -ENOMEM;
		ret = svod_decl_file_line(buf, devs, &nr, cap, *line);
		free(buf);
		if (ret)
			return ret;
		p += len + (p[len] == '\n');
	}
	return (int)nr;
}

/**
 * svod_param_read() - read a numeric module parameter of svod
 * @name: parameter name, e.g. "max_handles"
 * @val: out: its value
 *
 * Context: any thread.
 * Return: 0, -ENOENT if there is no such parameter, -EINVAL if it is not a
 * number, or another -errno.
 */
int svod_param_read(const char *name, uint64_t *val)
{
	char path[256], buf[64];
	int ret;

	snprintf(path, sizeof(path), SVOD_SYSFS_PARAMS "/%s", name);
	ret = svod_sysfs_read(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	return svod_parse_value(buf, val);
}

/**
 * svod_param_write() - set a numeric module parameter of svod
 * @name: parameter name, e.g. "max_handles"
 * @val: the new value
 *
 * Context: any thread; needs root (the parameter must be writable).
 * Return: 0, or -errno (-EACCES when the parameter is read-only).
 */
int svod_param_write(const char *name, uint64_t val)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), SVOD_SYSFS_PARAMS "/%s", name);
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", val);
	return svod_sysfs_write(path, buf);
}

/**
 * svod_driver_bind() - bind a PCI device to svod, or unbind it
 * @bdf: PCI address, e.g. "0000:00:04.0"
 * @bind: nonzero to bind, zero to unbind
 *
 * Context: any thread; needs root.
 * Return: 0, or -errno.
 */
int svod_driver_bind(const char *bdf, int bind)
{
	return svod_sysfs_write(bind ? SVOD_SYSFS_DRIVER "/bind" :
				       SVOD_SYSFS_DRIVER "/unbind", bdf);
}
