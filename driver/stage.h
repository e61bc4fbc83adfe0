/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod staging engines: move bytes between a user buffer and a range of a
 * PCI BAR, with the CPU (write-combined mapping) or a dmaengine DMA_MEMCPY
 * channel (peer-to-peer into the BAR).
 *
 * The engines know nothing of handles, files or tiers: the caller (the ioctl
 * layer) looks the handle up, takes a reference on the allocation and passes
 * the live grant as BAR offsets. The caller guarantees, for the whole call,
 * that the grant stays allocated (the range returns to its tier only after
 * the call returns) and that the BAR stays mapped (device removal waits for
 * in-flight calls).
 *
 * Context: every call sleeps (it faults user pages in, pins them, waits for
 * DMA completion); call it without spinlocks held. stage.c's only lock, a
 * DMA lane's spinlock, is innermost: nothing is called with it held (a
 * turn's @go runs after it is dropped).
 */
#ifndef SVOD_STAGE_H
#define SVOD_STAGE_H

#include <linux/atomic.h>
#include <linux/compiler_types.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <linux/svod.h>

/* The engine bits of svod_xfer.flags: at most one may be set. */
#define SVOD_XFER_ENGINES	(SVOD_XFER_CPU | SVOD_XFER_DMA)

struct device;
struct dma_chan;
struct page;
struct sg_table;
struct svod_bar;

/**
 * struct svod_stage_stats - bytes moved per engine (stage and read together)
 * @cpu_bytes: bytes moved by the CPU engine
 * @dma_bytes: bytes moved by the DMA engine
 *
 * Updated with atomics: one struct may be shared by concurrent calls (one per
 * tier for QUERY, one per file for fdinfo). Partial transfers count the bytes
 * that did move.
 */
struct svod_stage_stats {
	atomic64_t cpu_bytes;
	atomic64_t dma_bytes;
};

/**
 * struct svod_bar_ops - alternative BAR accessors
 * @write: copy @len bytes from @src to BAR offset @off
 * @read: copy @len bytes from BAR offset @off to @dst
 *
 * Used by KUnit to put plain memory behind the CPU engine. The driver leaves
 * svod_bar.ops NULL: the CPU engine then uses memcpy_toio()/memcpy_fromio()
 * on svod_bar.wc.
 */
struct svod_bar_ops {
	void (*write)(const struct svod_bar *bar, u64 off, const void *src,
		      size_t len);
	void (*read)(const struct svod_bar *bar, u64 off, void *dst, size_t len);
};

/**
 * struct svod_bar - one mapped BAR, filled by the driver at probe
 * @dev: the device owning the BAR (for log lines)
 * @wc: write-combined mapping of the whole BAR
 * @phys: CPU physical address of the BAR (pci_resource_start()), what the
 *	DMA engine maps with dma_map_resource()
 * @len: bytes in the BAR
 * @ops: NULL in the driver; see struct svod_bar_ops
 * @priv: for @ops
 */
struct svod_bar {
	struct device *dev;
	void __iomem *wc;
	phys_addr_t phys;
	u64 len;
	const struct svod_bar_ops *ops;
	void *priv;
};

/**
 * struct svod_xfer_req - one STAGE or READ, with the live grant
 * @grant_off: BAR offset of the allocation's first byte (from the live record)
 * @grant_len: bytes in the allocation (from the live record)
 * @offset: byte offset inside the allocation (from the user)
 * @length: bytes to move (from the user); 0 is a no-op
 * @ubuf: the user buffer
 * @resume: bytes from @offset an interrupted call of this request moved
 *	already (from the user, at most @length): the engine starts there
 * @flags: SVOD_XFER_* (from the user)
 * @to_device: true for STAGE (user to BAR), false for READ (BAR to user)
 */
struct svod_xfer_req {
	u64 grant_off;
	u64 grant_len;
	u64 offset;
	u64 length;
	u64 resume;
	void __user *ubuf;
	u32 flags;
	bool to_device;
};

/**
 * struct svod_dma_turn - one owner's place in a DMA channel's line
 * @node: in the lane's @waiting; empty when not waiting
 * @go: its turn came: submit one descriptor (or none); runs without the
 *	lane's lock, in any context (the caller's, a DMA callback)
 */
struct svod_dma_turn {
	struct list_head node;
	void (*go)(struct svod_dma_turn *turn);
};

/**
 * struct svod_dma_lane - one svod descriptor on a DMA channel at a time
 * @chan: the channel
 * @lock: see below
 * @waiting: the turns waiting, in order
 * @busy: a turn has the channel
 *
 * Users of one channel take turns, one descriptor each, so that a reset of
 * the channel (only for a descriptor that hangs) never drops another user's
 * descriptors (stage.c).
 */
struct svod_dma_lane {
	struct dma_chan *chan;
	/* Protects @waiting and @busy. */
	spinlock_t lock;
	struct list_head waiting;
	bool busy;
};

int svod_stage_xfer(const struct svod_bar *bar, const struct svod_xfer_req *req,
		    struct svod_stage_stats *stats, u64 *done);
void svod_stage_zero(const struct svod_bar *bar, u64 off, u64 len);
int svod_stage_pin(unsigned long uaddr, int nr, unsigned int gup,
		   struct page **pages, int *pinned);
int svod_stage_engine(u32 flags, u64 length, struct svod_dma_lane **lane);
unsigned long svod_stage_dma_timeout(void);
void svod_dma_lane_init(struct svod_dma_lane *lane, struct dma_chan *chan);
void svod_dma_lane_enter(struct svod_dma_lane *lane, struct svod_dma_turn *turn);
void svod_dma_lane_next(struct svod_dma_lane *lane);
void svod_dma_lane_pass(struct svod_dma_lane *lane, struct svod_dma_turn *turn);
bool svod_dma_lane_leave(struct svod_dma_lane *lane, struct svod_dma_turn *turn);
bool svod_dma_lane_reset(struct svod_dma_lane *lane, atomic_t *live);
void svod_stage_init(void);
void svod_stage_exit(void);

/* The engine's parts, for kunit/stage_test.c (exported to svod_test.ko only). */
int svod_stage_check(const struct svod_bar *bar,
		     const struct svod_xfer_req *req);
int svod_stage_pick(u32 flags, u64 length, u64 threshold, bool have_dma);
int svod_stage_xfer_on(struct svod_dma_lane *lane, u64 threshold,
		       const struct svod_bar *bar, const struct svod_xfer_req *req,
		       struct svod_stage_stats *stats, u64 *done);
void svod_stage_cpu(const struct svod_bar *bar, u64 bar_off,
		    struct page **pages, unsigned int head, size_t len,
		    bool to_device);
int svod_stage_dma_sgt(struct svod_dma_lane *lane, const struct svod_bar *bar,
		       u64 bar_off, struct sg_table *sgt, bool to_device,
		       unsigned long timeout);

#endif /* SVOD_STAGE_H */
