/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod driver internals: the lock order, and the entry points main.c calls
 * in pci.c and debugfs.c. Bound devices are dev.h's, tier objects tier.h's,
 * the declaration tree configfs.h's, open files file.h's, allocations
 * alloc.h's, dma-bufs dmabuf.c's; each file includes the headers of what it uses
 * (Documentation/svod.rst, "Layout").
 *
 * Lock order (outermost first); lockdep checks it:
 *
 *   configfs su_mutex         (configfs's own) mkdir/rmdir in svod's tree;
 *                             the PCI device's lock (probe, remove)
 *   svod_cfs_lock             declarations, bound devices, their links
 *   svod_cfs_dev.lock         one declaration's tiers and last_apply
 *   svod_decl_lock            device list and every device's tier set
 *   svod_files_lock           list of open files (debugfs walks it)
 *   svod_file.lock            one open file's handles
 *   svod_account.lock         one file's charges per tier (alloc.h); no
 *                             tier lock is taken inside it
 *   svod_dev_tier.io_sem      BAR access to one tier (read) vs. removal (write)
 *   svod_dev_tier.lock        one tier's allocator state, live list and access
 *   svod_mmap_sem             mmap offsets and their allocations (mmap.c);
 *                             also taken inside mm's mmap_lock (faults,
 *                             mmap()), and held around no user access
 *   svod_tier_xa's spinlock   tier id registry (innermost)
 *
 * Several tier locks are only ever held together under svod_decl_lock
 * (mutex_lock_nest_lock()); under it a tier's io_sem is only ever
 * try-locked, so no declaration waits for a transfer. Only a device's unbind
 * waits for its transfers (io_sem for write), holding no module-wide lock.
 * svod_tier_seq (dev.c) counts tier set changes for QUERY's snapshot.
 */
#ifndef SVOD_DRIVER_H
#define SVOD_DRIVER_H

/* pci.c */
int svod_pci_register(void);
void svod_pci_unregister(void);

/* debugfs.c */
void svod_debugfs_init(void);
void svod_debugfs_fini(void);

#endif /* SVOD_DRIVER_H */
