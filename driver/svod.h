/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod driver internals: bound devices, their tiers, open files and
 * allocations.
 *
 * Lock order (outermost first); lockdep checks it:
 *
 *   svod_decl_lock            device list and every device's tier set
 *   svod_files_lock           list of open files (debugfs walks it)
 *   svod_file.lock            one open file's handles and usage
 *   svod_dev_tier.io_sem      BAR access to one tier (read) vs. removal (write)
 *   svod_dev_tier.lock        one tier's allocator state and live list
 *   svod_tier_xa's spinlock   tier id registry (innermost)
 *
 * Several tier locks are only ever held together under svod_decl_lock
 * (mutex_lock_nest_lock()).
 */
#ifndef SVOD_DRIVER_H
#define SVOD_DRIVER_H

#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <linux/svod.h>

#include "core/handle.h"
#include "core/range.h"
#include "stage.h"
#include "alloc.h"
#include "file.h"

/* Reserved regions one tier may have (not an ABI limit). */
#define SVOD_MAX_RESERVED	8

/* Tiers one device may declare. */
#define SVOD_MAX_DEV_TIERS	8

/* The default tier of a newly bound device. */
#define SVOD_DEFAULT_BAR	2
#define SVOD_DEFAULT_ALIGN	64

/**
 * struct svod_tier_spec - one tier as an administrator declares it
 * @name: NUL-terminated, 1 to SVOD_NAME_LEN - 1 of [A-Za-z0-9_.-]
 * @bar: BAR index
 * @offset: byte offset of the tier inside the BAR
 * @size: bytes
 * @base: device-side address of the tier's first byte
 * @align: minimum alignment of allocations, a power of two
 * @nr_reserved: valid entries in @reserved
 * @reserved: reserved regions, in device addresses, inside the tier
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
};

/**
 * struct svod_dev - one bound PCI device
 * @pdev: the device
 * @node: entry in the device list
 * @tiers: the device's current tiers (struct svod_dev_tier.dev_node)
 * @bars: the BARs tiers use, mapped write-combined (devm-managed) when the
 *	first tier in them is declared; .wc is NULL for the others
 * @kobj_dir: the "svod" directory under the device in sysfs
 *
 * Every member but @pdev and @kobj_dir is protected by svod_decl_lock.
 */
struct svod_dev {
	struct pci_dev *pdev;
	struct list_head node;
	struct list_head tiers;
	struct svod_bar bars[PCI_STD_NUM_BARS];
	struct kobject *kobj_dir;
};

/**
 * struct svod_dev_tier - a tier of a bound device, as userspace names it
 * @ref: one reference for the device's tier set, one per allocation, one
 *	for the sysfs directory, and short ones for lookups
 * @id: stable id in svod_tier_xa
 * @spec: the declaration
 * @device: NUL-terminated name of the PCI device that declared the tier
 * @sdev: the owning device; NULL once @gone
 * @kobj: the tier's sysfs directory (svod/<id>), NULL once retired
 * @dev_node: entry in @sdev's tier list (svod_decl_lock)
 * @io_sem: held for read around every access to the tier's BAR (scrub,
 *	STAGE, READ); held for write while the tier is retired, so the BAR is
 *	not touched once @gone is set
 * @lock: protects @core and @live
 * @gone: the device was removed or the tier was replaced; set with both
 *	@io_sem (write) and @lock held, stable for holders of either
 * @core: the allocator
 * @live: live allocations (struct svod_allocation.tier_link)
 * @stats: bytes moved by each staging engine (atomics)
 */
struct svod_dev_tier {
	struct kref ref;
	u32 id;
	struct svod_tier_spec spec;
	char device[SVOD_NAME_LEN];
	struct svod_dev *sdev;
	struct kobject *kobj;
	struct list_head dev_node;
	/* Protects BAR access (read) against retirement (write). */
	struct rw_semaphore io_sem;
	/* Protects @core and @live. */
	struct mutex lock;
	bool gone;
	struct svod_range core;
	struct list_head live;
	struct svod_stage_stats stats;
};

/* main.c */
extern struct mutex svod_decl_lock;
extern struct xarray svod_tier_xa;
extern unsigned int svod_max_handles;
extern unsigned long long svod_max_bytes;
extern unsigned int svod_max_plan_events;

/* tiers.c */
int svod_tier_spec_parse(char *buf, struct svod_tier_spec *specs,
			 unsigned int max, unsigned int *nr);
int svod_tier_spec_check(const struct svod_tier_spec *specs, unsigned int nr,
			 const u64 *bar_len, const char **why,
			 unsigned int *bad);
bool svod_tier_spec_equal(const struct svod_tier_spec *a,
			  const struct svod_tier_spec *b);
int svod_tier_spec_print(const struct svod_tier_spec *spec, char *buf,
			 int at);
void svod_dev_tier_put(struct svod_dev_tier *tier);
struct svod_dev_tier *svod_dev_tier_get_by_id(u32 id);
struct svod_dev_tier *svod_dev_tier_next(unsigned long *id);
void svod_dev_tier_scrub(struct svod_dev_tier *tier, u64 start, u64 size);
int svod_dev_set_tiers(struct svod_dev *sdev, const struct svod_tier_spec *specs,
		       unsigned int nr);
int svod_dev_register(struct svod_dev *sdev);
void svod_dev_unregister(struct svod_dev *sdev);
int svod_dev_tiers_show(struct svod_dev *sdev, char *buf);

/* sysfs.c */
extern const struct attribute_group *svod_dev_groups[];
int svod_sysfs_tier_add(struct svod_dev_tier *tier, struct kobject *dir);
void svod_sysfs_tier_del(struct svod_dev_tier *tier);

/* pci.c */
int svod_pci_register(void);
void svod_pci_unregister(void);

/* debugfs.c */
void svod_debugfs_init(void);
void svod_debugfs_fini(void);

#endif /* SVOD_DRIVER_H */
