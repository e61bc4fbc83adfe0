/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod asynchronous transfers: each open file's queue of STAGE and READ
 * transfers submitted with SVOD_XFER_ASYNC, its timeline and the dma_fences
 * that signal their ends (Documentation/staging.rst, "Asynchronous
 * transfers").
 *
 * The layer knows tiers (it enters one around every touch of its BAR) and
 * the staging engine; it knows neither handles nor allocations: a job
 * carries its handle only as a key FREE cancels it by. The caller
 * (xfer.c) checks the request against the live grant, and FREE and the
 * file's release cancel the jobs of a handle before it lets go of its
 * allocation (whose range may then go back to its tier), or, for FREE
 * with SVOD_FREE_AFTER_USE, hand the jobs a reference on it
 * (svod_async_hand_over(): an opaque kref and its release) that each
 * drops after its fence signalled.
 */
#ifndef SVOD_ASYNC_H
#define SVOD_ASYNC_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct svod_dma_lane;
struct file;
struct svod_async_job;
struct dma_fence;
struct svod_bar;
struct svod_dev_tier;
struct seq_file;

/* Results kept for SVOD_IOCTL_WAIT: those of the last this many transfers. */
#define SVOD_ASYNC_HISTORY	256

/**
 * struct svod_async - one file's asynchronous transfers
 * @lock: protects every member below but @work
 * @queued: jobs not started yet, in submission order
 * @running: the job in progress, or NULL: the worker copies a CPU job's
 *	bytes; a DMA job's descriptors are in flight until its end. The next
 *	job waits for it.
 * @ring: the last SVOD_ASYNC_HISTORY jobs, by seqno, each with a
 *	reference on its fence; allocated at the first submission
 * @seqno: the last timeline value given, 0 before the first
 * @inflight: jobs queued or running (capped by max_inflight)
 * @pinned: user pages pinned by those jobs (capped by max_pinned_pages)
 * @context: the fence context of the file's timeline
 * @client_id: the file's, for the timeline's name
 * @work: runs the queue, one job at a time
 * @node: entry in the module's list of queues (its own lock), which
 *	svod_async_tiers_retired() walks
 */
struct svod_async {
	/* Protects the members below but @work. */
	spinlock_t lock;
	struct list_head queued;
	struct svod_async_job *running;
	struct svod_async_job **ring;
	u64 seqno;
	unsigned int inflight;
	unsigned long pinned;
	u64 context;
	u64 client_id;
	struct work_struct work;
	struct list_head node;
};

/**
 * struct svod_async_req - one transfer to queue, checked by the caller
 * @tier: the allocation's tier (the job takes a reference)
 * @bar: the tier's BAR; used only inside svod_dev_tier_async_enter()
 * @key: the handle's struct svod_hold, what svod_async_cancel() matches
 * @bar_off: BAR offset of the transfer's first byte (the request's offset
 *	plus its resume)
 * @length: bytes to move from there
 * @resume: bytes of the request moved before (reported in done)
 * @ubuf: user address of the first byte to move
 * @to_device: STAGE (user to BAR) or READ
 * @lane: the DMA channel's lane, or NULL for the CPU engine
 */
struct svod_async_req {
	struct svod_dev_tier *tier;
	const struct svod_bar *bar;
	const void *key;
	u64 bar_off;
	u64 length;
	u64 resume;
	unsigned long ubuf;
	bool to_device;
	struct svod_dma_lane *lane;
};

/**
 * struct svod_async_part - one entry of a batch, checked by the caller
 * @tier: the allocation's tier (the job takes a reference)
 * @bar: the tier's BAR; used only inside svod_dev_tier_async_enter()
 * @key: the handle's struct svod_hold, what svod_async_cancel() matches
 * @bar_off: BAR offset of the entry's first byte
 * @length: bytes to move
 * @ubuf: user address of the first byte to move
 * @to_device: STAGE (user to BAR) or READ
 */
struct svod_async_part {
	struct svod_dev_tier *tier;
	const struct svod_bar *bar;
	const void *key;
	u64 bar_off;
	u64 length;
	unsigned long ubuf;
	bool to_device;
};

void svod_async_init(struct svod_async *q, u64 client_id);
void svod_async_fini(struct svod_async *q);
struct svod_async_job *svod_async_prepare(struct svod_async *q,
					  const struct svod_async_req *req);
int svod_async_submit(struct svod_async *q, struct svod_async_job *job,
		      bool want_fd, u64 *seqno, int *fence_fd,
		      struct file **fence_file);
struct svod_async_job *svod_async_prepare_batch(struct svod_async *q,
						const struct svod_async_part *parts,
						unsigned int nr, unsigned int *failed);
struct dma_fence *svod_async_fence_from_fd(int fd);
void svod_async_wait_for(struct svod_async_job *job, struct dma_fence *fence);
void svod_async_tiers_retired(void);
void svod_async_abort(struct svod_async *q, struct svod_async_job *job);
void svod_async_cancel(struct svod_async *q, const void *key);
void svod_async_hand_over(struct svod_async *q, const void *key,
			  struct kref *ref, void (*release)(struct kref *ref));
int svod_async_wait(struct svod_async *q, u64 seqno, s64 deadline_ns,
		    u64 *done, int *status);
void svod_async_show(struct svod_async *q, struct seq_file *m);
int svod_async_module_init(void);
void svod_async_module_exit(void);

#endif /* SVOD_ASYNC_H */
