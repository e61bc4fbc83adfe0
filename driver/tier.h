/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod tier objects: a tier of a bound device as userspace reaches it by id
 * (SVOD_IOCTL_QUERY, ALLOC, ...), and the declaration it was made from.
 */
#ifndef SVOD_TIER_H
#define SVOD_TIER_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <linux/svod.h>

#include "core/range.h"
#include "stage.h"

struct cred;
struct device;
struct dma_buf;
struct file;
struct svod_dev;

/* Reserved regions one tier may have (not an ABI limit). */
#define SVOD_MAX_RESERVED	8

/* A tier's access when its declaration says nothing: everyone, as before. */
#define SVOD_TIER_DEFAULT_MODE	0666

/**
 * struct svod_tier_access - who may use a tier, as a device node says it
 * @uid: owner, a user id of the initial user namespace
 * @gid: group, a group id of the initial user namespace
 * @mode: permission bits, 0 to 0777; using the tier needs read and write
 *	(svod_tier_may_use())
 */
struct svod_tier_access {
	u32 uid;
	u32 gid;
	u32 mode;
};

/**
 * struct svod_tier_spec - one tier as an administrator declares it
 * @name: NUL-terminated, 1 to SVOD_NAME_LEN - 1 of [A-Za-z0-9_.-]
 * @bar: BAR index
 * @offset: byte offset of the tier inside the BAR
 * @size: bytes
 * @base: device-side address of the tier's first byte
 * @align: minimum alignment of allocations, a power of two
 * @nr_reserved: valid entries in @reserved
 * @reserved: reserved regions, in device addresses, inside the tier, sorted
 *	by base then size (svod_tier_spec_sort_reserved())
 * @access: who may use the tier; not part of what the tier is
 *	(svod_tier_spec_equal() ignores it): a new access is applied to the
 *	live tier in place
 */
struct svod_tier_spec {
	char name[SVOD_NAME_LEN];
	unsigned int bar;
	u64 offset;
	u64 size;
	u64 base;
	u64 align;
	unsigned int nr_reserved;
	struct svod_range_region reserved[SVOD_MAX_RESERVED];
	struct svod_tier_access access;
};

/**
 * struct svod_dev_tier - a tier of a bound device, as userspace names it
 * @ref: one reference for the device's tier set, one per allocation, one
 *	for the sysfs device, and short ones for lookups
 * @id: stable id in svod_tier_xa
 * @spec: the declaration; @spec.access changes under @lock (the rest never)
 * @device: NUL-terminated name of the PCI device that declared the tier
 * @sdev: the owning device; NULL once @gone
 * @dev: the tier's device in the class "svod" (svod/tier<id> under the
 *	PCI device, sysfs.c), NULL once retired or for a KUnit fake device
 * @dev_node: entry in @sdev's tier list (svod_decl_lock)
 * @io_sem: held for read around every access to the tier's BAR (scrub,
 *	STAGE, READ); held for write while the tier is retired, so the BAR is
 *	not touched once @gone is set
 * @lock: protects @core, @live and @spec.access; adding to @live needs @gone clear, and
 *	removing from it also needs @io_sem (read), so once @gone is set @live
 *	is stable for the writer of @io_sem
 * @gone: the device was removed or the tier was replaced; set with both
 *	@io_sem (write) and @lock held, stable for holders of either
 * @detached: the tier left its device's set (replaced, or its device is
 *	being unbound); set under svod_decl_lock inside a write section of
 *	svod_tier_seq, read by QUERY's snapshot; implies @gone soon
 * @core: the allocator
 * @live: live allocations (struct svod_allocation.tier_link)
 * @stats: bytes moved by each staging engine (atomics)
 * @denied: ALLOC and IMPORT calls refused by @spec.access (atomic)
 * @async_lock: protects @async_active, @importers and @async_closed
 * @async_active: asynchronous transfers touching the BAR now (async.c),
 *	which take neither @io_sem nor @lock: they signal dma_fences, and
 *	those two are held around allocations elsewhere
 * @importers: dma-buf importers in the kernel that reach the tier's BAR
 *	(dmabuf.c: a vmap until it lets go; an attachment while it attaches)
 * @async_closed: set when the tier is retired; no asynchronous transfer
 *	starts touching the BAR after that, and no importer reaches it
 * @dmabuf_lock: protects @dmabufs and @dmabufs_revoked
 * @dmabufs: the dma-bufs of the tier's allocations (struct svod_tier_dmabuf)
 * @dmabufs_revoked: set when the tier is retired; no dma-buf joins @dmabufs
 *	after that
 */
struct svod_dev_tier {
	struct kref ref;
	u32 id;
	struct svod_tier_spec spec;
	char device[SVOD_NAME_LEN];
	struct svod_dev *sdev;
	struct device *dev;
	struct list_head dev_node;
	/* Protects BAR access (read) against retirement (write). */
	struct rw_semaphore io_sem;
	/* Protects @core, @live and @spec.access. */
	struct mutex lock;
	bool gone;
	bool detached;
	struct svod_range core;
	struct list_head live;
	struct svod_stage_stats stats;
	atomic64_t denied;
	/* Protects @async_active and @async_closed. */
	spinlock_t async_lock;
	unsigned int async_active;
	unsigned int importers;
	bool async_closed;
	/* Protects @dmabufs and @dmabufs_revoked; taken outside a dma-buf's reservation lock. */
	struct mutex dmabuf_lock;
	struct list_head dmabufs;
	bool dmabufs_revoked;
};

/**
 * struct svod_tier_dmabuf - a dma-buf of a tier's allocation, as retiring
 *	the tier revokes it (dmabuf.c embeds it in its own record)
 * @link: entry in the tier's dmabufs (its dmabuf_lock); empty once it left
 * @dmabuf: the dma-buf
 * @revoked: its importers may map it no more; set under @dmabuf's
 *	reservation lock, which the map holds when it reads it
 */
struct svod_tier_dmabuf {
	struct list_head link;
	struct dma_buf *dmabuf;
	bool revoked;
};

extern struct mutex svod_decl_lock;
extern struct xarray svod_tier_xa;

bool svod_tier_name_valid(const char *name);
void svod_tier_spec_sort_reserved(struct svod_tier_spec *spec);
bool svod_tier_spec_equal(const struct svod_tier_spec *a,
			  const struct svod_tier_spec *b);
bool svod_tier_access_allows(const struct svod_tier_access *access,
			     const struct cred *cred);
struct svod_tier_access svod_dev_tier_access(struct svod_dev_tier *tier);
void svod_dev_tier_set_access(struct svod_dev_tier *tier,
			      const struct svod_tier_access *access);
bool svod_dev_tier_usable(struct svod_dev_tier *tier, struct file *file);
int svod_dev_tier_may_use(struct svod_dev_tier *tier, struct file *file);

struct svod_dev_tier *svod_dev_tier_create(struct svod_dev *sdev,
					   const struct svod_tier_spec *spec);
void svod_dev_tier_publish(struct svod_dev_tier *tier);
void svod_dev_tier_put(struct svod_dev_tier *tier);
struct svod_dev_tier *svod_dev_tier_get_by_id(u32 id);
struct svod_dev_tier *svod_dev_tier_next(unsigned long *id);
void svod_dev_tier_scrub(struct svod_dev_tier *tier, u64 start, u64 size);
void svod_dev_tier_scrub_new(struct svod_dev_tier *tier);
bool svod_dev_tier_trylock_retire(struct svod_dev_tier *tier);
void svod_dev_tier_retire_unbound(struct svod_dev_tier *tier);
void svod_dev_tier_unlock_retire(struct svod_dev_tier *tier);
void svod_dev_tier_mark_gone(struct svod_dev_tier *tier);
bool svod_dev_tier_async_enter(struct svod_dev_tier *tier);
void svod_dev_tier_async_exit(struct svod_dev_tier *tier);
bool svod_dev_tier_importer_get(struct svod_dev_tier *tier);
void svod_dev_tier_importer_put(struct svod_dev_tier *tier);
int svod_dev_tier_dmabuf_add(struct svod_dev_tier *tier, struct svod_tier_dmabuf *td);
void svod_dev_tier_dmabuf_del(struct svod_dev_tier *tier, struct svod_tier_dmabuf *td);
void svod_dev_tier_revoke_dmabufs(struct svod_dev_tier *tier);

#endif /* SVOD_TIER_H */
