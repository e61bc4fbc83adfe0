// SPDX-License-Identifier: GPL-2.0
/*
 * svod asynchronous transfers.
 *
 * Submission (process context, any errno before anything is published):
 * the caps are reserved, the whole user buffer is charged to the process's
 * locked_vm (RLIMIT_MEMLOCK, as vfio, RDMA and io_uring do) and pinned
 * FOLL_LONGTERM (for DMA also put in a scatterlist and mapped, with the BAR
 * range, for the channel), the
 * job and its dma_fence are allocated and, on request, a sync_file and an
 * fd for it; then, under the file's queue lock, the job takes the next
 * value of the file's timeline and joins the queue, and only after that is
 * the fd installed and the worker kicked.
 *
 * Execution: one work item per file runs its queue on an unbound
 * workqueue, one job at a time in submission order (so the file's fences
 * signal in timeline order), while files run side by side. The CPU engine copies
 * one chunk (1 MiB) at a time between the pinned pages and the BAR's
 * write-combined mapping; between chunks the job stops if it was cancelled
 * (FREE of its allocation, the file's release: -ECANCELED), if its tier is
 * being retired (-ENODEV) or if it ran past async_timeout_ms (-ETIMEDOUT).
 * A DMA job is only started by the worker: it takes turns on the channel's
 * lane with every other user of the channel (stage.c), one descriptor (one
 * mapped segment, at most 64 KiB) a turn; each completion callback puts it
 * back in line or ends it, with the same stops, and its end queues the
 * worker for the next job. A descriptor still on the engine dma_timeout_ms
 * after its submission is hung: the watchdog resets the channel, which
 * drops that descriptor alone (the lane keeps one on it), and the job ends
 * with -ETIMEDOUT. A READ's pages are synced for the CPU before its fence
 * signals, so a bounce buffer (swiotlb) never leaves old bytes behind a
 * signalled fence.
 *
 * Signalling: from the moment a fence is published until it is signalled,
 * nothing on the path allocates memory or takes a lock that is held around
 * an allocation elsewhere (the dma_fence rules): the worker, the DMA
 * callbacks and the cancellation take spinlocks only (this queue's, the
 * fence's, the tier's async_lock, the lane's), never the tier's io_sem, the
 * file's mutex or an mm's lock, and the worker and the callbacks are
 * annotated with dma_fence_begin_signalling() as a whole. Unpinning,
 * unaccounting, unmapping, dropping the tier and freeing happen in the
 * job's cleanup work, after the signal, for both engines.
 *
 * In-fences: a job may wait for another fence (svod's or another driver's)
 * before it starts. It is queued like any job, in its place on the
 * timeline, and the worker leaves it (and the jobs behind it: the file's
 * fences signal in timeline order) at the head of the queue until it may
 * go. No thread waits: the fence's callback, a timer at async_timeout_ms
 * after the submission, a cancellation and a tier's retirement
 * (svod_async_tiers_retired()) each queue the worker, which then starts
 * the job, or ends it without moving a byte with the in-fence's error,
 * -ETIMEDOUT, -ECANCELED or -ENODEV. The callback runs in the signaller's
 * context: it only sets a flag and queues the work (no lock of ours,
 * nothing allocated). The cleanup removes the callback and the timer
 * before the job lets go of its queue.
 *
 * A fence keeps the module loaded (a module reference per job). The last
 * reference frees the job after an RCU grace period, in a callback that
 * drops the module reference; the module's exit waits for such callbacks
 * (rcu_barrier()) before its text goes, as drm_sched does.
 */
#include <kunit/visibility.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/wait_bit.h>

#include "async.h"
#include "stage.h"
#include "tier.h"

#define SVOD_ASYNC_CHUNK	SZ_1M
#define SVOD_ASYNC_DMA_CHUNK	SZ_64K

/* Largest max_pinned_pages: 2^24 pages, 64 GiB of 4 KiB pages. */
#define SVOD_ASYNC_PINNED_LIMIT	BIT(24)

static unsigned int svod_max_inflight = 64;
static unsigned int svod_max_pinned_pages = 65536;
static unsigned int svod_async_timeout_ms = 60000;

/* Accepts 1..@limit in decimal (svod.rst "Numbers"); else -EINVAL. */
static int svod_async_param_set(const char *val, const struct kernel_param *kp,
				unsigned int limit)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 10, &n);
	if (ret || !n || n > limit)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static int svod_max_inflight_set(const char *val, const struct kernel_param *kp)
{
	return svod_async_param_set(val, kp, SVOD_ASYNC_HISTORY);
}

static int svod_max_pinned_set(const char *val, const struct kernel_param *kp)
{
	return svod_async_param_set(val, kp, SVOD_ASYNC_PINNED_LIMIT);
}

static int svod_async_timeout_set(const char *val, const struct kernel_param *kp)
{
	return svod_async_param_set(val, kp, 24 * 3600 * 1000);
}

static const struct kernel_param_ops svod_max_inflight_ops = {
	.set = svod_max_inflight_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops svod_max_pinned_ops = {
	.set = svod_max_pinned_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops svod_async_timeout_ops = {
	.set = svod_async_timeout_set,
	.get = param_get_uint,
};

module_param_cb(max_inflight, &svod_max_inflight_ops, &svod_max_inflight, 0644);
MODULE_PARM_DESC(max_inflight,
		 "Asynchronous transfers queued or running per open file, 1..256 (default 64; -EAGAIN beyond)");
module_param_cb(max_pinned_pages, &svod_max_pinned_ops, &svod_max_pinned_pages, 0644);
MODULE_PARM_DESC(max_pinned_pages,
		 "User pages pinned by one open file's asynchronous transfers, 1..16777216 (default 65536; -EAGAIN beyond, -EFBIG for one transfer larger than this)");
module_param_cb(async_timeout_ms, &svod_async_timeout_ops, &svod_async_timeout_ms, 0644);
MODULE_PARM_DESC(async_timeout_ms,
		 "Time an asynchronous transfer may run, checked between chunks, and may wait for its in-fence from its submission, 1..86400000 (default 60000; then it fails with -ETIMEDOUT)");

/* Every file's queue, for svod_async_tiers_retired(). */
static LIST_HEAD(svod_async_queues);
/* Protects svod_async_queues. */
static DEFINE_SPINLOCK(svod_async_queues_lock);

/* Runs every file's queue; WQ_MEM_RECLAIM: signalling must not wait on memory. */
static struct workqueue_struct *svod_async_wq;

/*
 * DMA watchdogs and the cleanup after every transfer. Not WQ_MEM_RECLAIM:
 * a watchdog resets the channel with dmaengine_terminate_sync(), which may
 * flush the provider's own workqueue, and a reclaim worker must not wait
 * on one that is not.
 */
static struct workqueue_struct *svod_async_aux_wq;

/* The jobs; freed after an RCU grace period (see the top). */
static struct kmem_cache *svod_async_job_cache;

/**
 * struct svod_async_job - one asynchronous transfer and its fence
 * @fence: first member: dma_fence_free() frees the job
 * @lock: the fence's lock; also orders @done and @status for readers
 * @node: entry in the queue's @queued (the queue's lock)
 * @tier: the tier, with a reference until the job is finished
 * @bar: the tier's BAR (see struct svod_async_req)
 * @key: the handle's struct svod_hold (see struct svod_async_req)
 * @bar_off: BAR offset of the first byte to move
 * @length: bytes to move
 * @resume: bytes moved before the submission, counted in @done
 * @pages: the pinned user pages, @nr_pages of them
 * @nr_pages: pages pinned
 * @mm: the submitter's mm, grabbed: its locked_vm holds @nr_pages
 * @head: offset of the first byte in @pages[0]
 * @to_device: STAGE or READ
 * @cancel: stop at the next chunk with -ECANCELED (the queue's lock)
 * @done: when signalled: bytes of the request moved, @resume included
 * @status: when signalled: 0 or the negative errno
 * @timeline: the timeline's name, "svod-<client id>"
 * @q: the file's queue (DMA: the callbacks reach it through the job)
 * @lane: the DMA channel's lane, or NULL for the CPU engine
 * @turn: DMA: the job's place in @lane's line
 * @sgt: DMA: the pinned pages, mapped for the channel's device at submission
 * @bar_dma: DMA: the BAR range, mapped for the channel's device at submission
 * @sg: DMA: the mapped segment the next descriptor starts in
 * @sg_off: DMA: bytes of @sg already moved
 * @pos: DMA: bytes moved
 * @deadline: DMA: ktime_get_ns() past which the transfer fails
 * @finished: DMA: set once, by whoever ends the transfer
 * @desc_live: DMA: 1 while a descriptor of the job is on the channel; taken
 *	(set to 0) by whoever ends it, its callback or the watchdog
 * @desc_at: DMA: jiffies when the descriptor on the channel was submitted
 * @watchdog: DMA: resets the channel under a descriptor that hangs
 * @cleanup: unmaps, unpins and drops the job after its end
 * @sgt_mapped: DMA: @sgt is mapped
 * @bar_mapped: DMA: @bar_dma is mapped
 * @slices: a batch's entries, @nr_slices of them, or NULL for one
 *	transfer; a batch's @tier and @key are NULL, its @pages those of
 *	every entry, one after the other, and it runs on the CPU engine
 * @nr_slices: entries of the batch
 * @held: a reference svod_async_hand_over() gave the job on what @key
 *	named, or NULL; dropped by the cleanup (the queue's lock)
 * @held_release: how to drop @held and the slices' @held
 * @in_fence: the fence the job waits for before it starts, or NULL
 * @in_cb: @in_fence's callback: sets @in_signalled, queues the worker
 * @in_timer: queues the worker at @in_expires
 * @in_expires: jiffies when the wait for @in_fence ends (-ETIMEDOUT)
 * @in_signalled: @in_fence has signalled (set once, by its callback or
 *	at submission)
 */
struct svod_async_job {
	struct dma_fence fence;
	/* The fence's lock; also orders @done and @status. */
	spinlock_t lock;
	struct list_head node;
	struct svod_dev_tier *tier;
	const struct svod_bar *bar;
	const void *key;
	u64 bar_off;
	u64 length;
	u64 resume;
	struct page **pages;
	unsigned int nr_pages;
	struct mm_struct *mm;
	unsigned int head;
	bool to_device;
	bool cancel;
	u64 done;
	int status;
	char timeline[32];
	struct svod_async *q;
	struct svod_dma_lane *lane;
	struct svod_dma_turn turn;
	struct sg_table sgt;
	dma_addr_t bar_dma;
	struct scatterlist *sg;
	unsigned int sg_off;
	u64 pos;
	u64 deadline;
	atomic_t finished;
	atomic_t desc_live;
	unsigned long desc_at;
	struct delayed_work watchdog;
	struct work_struct cleanup;
	bool sgt_mapped;
	bool bar_mapped;
	struct svod_async_slice *slices;
	unsigned int nr_slices;
	struct kref *held;
	void (*held_release)(struct kref *ref);
	struct dma_fence *in_fence;
	struct dma_fence_cb in_cb;
	struct timer_list in_timer;
	unsigned long in_expires;
	bool in_signalled;
};

/**
 * struct svod_async_slice - one entry of a batch job
 * @part: the entry, as checked by the caller
 * @first_page: index of its first page in the job's @pages
 * @nr_pages: its pages there
 * @head: offset of its first byte in its first page
 * @moved: bytes it moved, set by the worker before the signal
 * @held: as the job's @held, for this entry's handle
 */
struct svod_async_slice {
	struct svod_async_part part;
	unsigned int first_page;
	unsigned int nr_pages;
	unsigned int head;
	u64 moved;
	struct kref *held;
};

/* The job moves bytes of the handle @key names; every job for a NULL @key. */
static bool svod_async_job_names(const struct svod_async_job *job, const void *key)
{
	unsigned int i;

	if (!key || job->key == key)
		return true;
	for (i = 0; i < job->nr_slices; i++) {
		if (job->slices[i].part.key == key)
			return true;
	}
	return false;
}

static struct svod_async_job *to_job(struct dma_fence *fence)
{
	return container_of(fence, struct svod_async_job, fence);
}

static const char *svod_async_driver_name(struct dma_fence *fence)
{
	return KBUILD_MODNAME;
}

static const char *svod_async_timeline_name(struct dma_fence *fence)
{
	return to_job(fence)->timeline;
}

/* svod_async_module_exit()'s rcu_barrier() waits for this to return. */
static void svod_async_job_free(struct rcu_head *rcu)
{
	struct svod_async_job *job = container_of(rcu, struct svod_async_job, fence.rcu);

	kmem_cache_free(svod_async_job_cache, job);
	module_put(THIS_MODULE);
}

static void svod_async_fence_release(struct dma_fence *fence)
{
	call_rcu(&fence->rcu, svod_async_job_free);
}

static const struct dma_fence_ops svod_async_fence_ops = {
	/* The timeline never wraps: compare all 64 bits. */
	.use_64bit_seqno = true,
	.get_driver_name = svod_async_driver_name,
	.get_timeline_name = svod_async_timeline_name,
	.release = svod_async_fence_release,
};

static void svod_async_work(struct work_struct *work);
static void svod_async_watchdog(struct work_struct *work);
static void svod_async_cleanup(struct work_struct *work);
static void svod_async_dma_go(struct svod_dma_turn *turn);

/**
 * svod_async_init() - an empty queue for a new file
 * @q: the queue
 * @client_id: the file's client id
 *
 * Context: process context.
 */
void svod_async_init(struct svod_async *q, u64 client_id)
{
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->queued);
	q->context = dma_fence_context_alloc(1);
	q->client_id = client_id;
	INIT_WORK(&q->work, svod_async_work);
	spin_lock(&svod_async_queues_lock);
	list_add_tail(&q->node, &svod_async_queues);
	spin_unlock(&svod_async_queues_lock);
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_init);

static enum dma_data_direction svod_async_mem_dir(const struct svod_async_job *job)
{
	return job->to_device ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

static enum dma_data_direction svod_async_bar_dir(const struct svod_async_job *job)
{
	return job->to_device ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/*
 * DMA: map the pinned pages and the BAR range for the channel's device,
 * before the job is published (this allocates). Return: 0, -ENOMEM, or
 * -EIO if a mapping failed otherwise.
 */
static int svod_async_dma_map(struct svod_async_job *job, const struct svod_bar *bar)
{
	struct device *dev = job->lane->chan->device->dev;
	/* No segment larger than the device can map (swiotlb: 256 KiB). */
	unsigned int seg = min_t(size_t, dma_max_mapping_size(dev), SZ_1G) & PAGE_MASK;
	int ret;

	ret = sg_alloc_table_from_pages_segment(&job->sgt, job->pages, job->nr_pages,
						job->head, job->length, seg,
						GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (ret)
		return ret;
	ret = dma_map_sgtable(dev, &job->sgt, svod_async_mem_dir(job), 0);
	if (ret)
		return ret == -ENOMEM ? ret : -EIO;
	job->sgt_mapped = true;
	job->bar_dma = dma_map_resource(dev, bar->phys + job->bar_off, job->length,
					svod_async_bar_dir(job), 0);
	if (dma_mapping_error(dev, job->bar_dma))
		return -EIO;
	job->bar_mapped = true;
	job->sg = job->sgt.sgl;
	return 0;
}

static void svod_async_dma_unmap(struct svod_async_job *job)
{
	struct device *dev;

	if (!job->lane)
		return;
	dev = job->lane->chan->device->dev;
	if (job->bar_mapped)
		dma_unmap_resource(dev, job->bar_dma, job->length, svod_async_bar_dir(job), 0);
	/* A READ's pages were synced for the CPU before its fence signalled. */
	if (job->sgt_mapped)
		dma_unmap_sgtable(dev, &job->sgt, svod_async_mem_dir(job),
				  job->to_device ? 0 : DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(&job->sgt);
	job->bar_mapped = false;
	job->sgt_mapped = false;
	job->lane = NULL;
}

/* Give back the caps a job reserved: after its pages are unpinned. */
static void svod_async_unreserve(struct svod_async *q, unsigned int nr_pages)
{
	unsigned long irq;

	spin_lock_irqsave(&q->lock, irq);
	q->inflight--;
	q->pinned -= nr_pages;
	spin_unlock_irqrestore(&q->lock, irq);
	wake_up_var(&q->inflight);
}

/* Give back the pages' charge to the submitter's locked_vm. */
static void svod_async_unaccount(struct svod_async_job *job, unsigned int nr)
{
	if (!job->mm)
		return;
	account_locked_vm(job->mm, nr, false);
	mmdrop(job->mm);
	job->mm = NULL;
}

/*
 * Unpin and free what a job holds but its fence; outside any signalling
 * (unpinning takes page locks, unaccounting the mm's lock). A READ's pages
 * are dirtied whenever a byte of it moved: a cancelled or failed READ
 * reports what it moved too.
 */
static void svod_async_job_drop(struct svod_async *q, struct svod_async_job *job)
{
	struct svod_async_slice *sl;
	unsigned long irq;
	unsigned int i;

	/*
	 * The job has signalled (or was never published): a hand-over that
	 * took the queue's lock before this saw it unsignalled and its @held
	 * is visible here; one after it finds the fence signalled and gives
	 * the job nothing.
	 */
	spin_lock_irqsave(&q->lock, irq);
	spin_unlock_irqrestore(&q->lock, irq);
	/* Neither queues the worker from now on: @q may go after the unreserve. */
	if (job->in_fence) {
		dma_fence_remove_callback(job->in_fence, &job->in_cb);
		del_timer_sync(&job->in_timer);
		dma_fence_put(job->in_fence);
		job->in_fence = NULL;
	}
	svod_async_dma_unmap(job);
	for (i = 0; i < job->nr_slices; i++) {
		sl = &job->slices[i];
		if (sl->nr_pages)
			unpin_user_pages_dirty_lock(job->pages + sl->first_page, sl->nr_pages,
						    !sl->part.to_device && sl->moved);
		svod_dev_tier_put(sl->part.tier);
		if (sl->held)
			kref_put(sl->held, job->held_release);
		sl->held = NULL;
	}
	/* The range goes back (and is zeroed) only now, after the signal. */
	if (job->held)
		kref_put(job->held, job->held_release);
	job->held = NULL;
	if (!job->slices && job->nr_pages)
		unpin_user_pages_dirty_lock(job->pages, job->nr_pages,
					    !job->to_device && job->done > job->resume);
	svod_async_unaccount(job, job->nr_pages);
	kvfree(job->pages);
	job->pages = NULL;
	kvfree(job->slices);
	job->slices = NULL;
	job->nr_slices = 0;
	svod_async_unreserve(q, job->nr_pages);
	job->nr_pages = 0;
	if (job->tier)
		svod_dev_tier_put(job->tier);
	job->tier = NULL;
}

/* The in-fence signalled: the job may go. The signaller's context: no lock of ours. */
static void svod_async_in_signalled(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct svod_async_job *job = container_of(cb, struct svod_async_job, in_cb);

	WRITE_ONCE(job->in_signalled, true);
	queue_work(svod_async_wq, &job->q->work);
}

/* The wait for the in-fence is over: the worker ends the job (-ETIMEDOUT). */
static void svod_async_in_timeout(struct timer_list *t)
{
	struct svod_async_job *job = from_timer(job, t, in_timer);

	queue_work(svod_async_wq, &job->q->work);
}

/* The rest of a job, once its pages are pinned: its fence and works. */
static void svod_async_job_setup(struct svod_async *q, struct svod_async_job *job)
{
	job->q = q;
	INIT_LIST_HEAD(&job->node);
	INIT_LIST_HEAD(&job->turn.node);
	job->turn.go = svod_async_dma_go;
	INIT_DELAYED_WORK(&job->watchdog, svod_async_watchdog);
	INIT_WORK(&job->cleanup, svod_async_cleanup);
	timer_setup(&job->in_timer, svod_async_in_timeout, 0);
	spin_lock_init(&job->lock);
	snprintf(job->timeline, sizeof(job->timeline), "svod-%llu", q->client_id);
	/* The seqno is set when the job is queued; nobody sees it before. */
	dma_fence_init(&job->fence, &svod_async_fence_ops, &job->lock,
		       q->context, 0);
	__module_get(THIS_MODULE);
}

/* Reserve @nr pages and one transfer of the file's caps. */
static int svod_async_reserve(struct svod_async *q, unsigned long nr)
{
	unsigned int max_pinned = READ_ONCE(svod_max_pinned_pages);
	unsigned long irq;
	int ret = 0;

	if (nr > max_pinned)
		return -EFBIG;
	spin_lock_irqsave(&q->lock, irq);
	if (q->inflight >= READ_ONCE(svod_max_inflight) ||
	    nr > max_pinned - min_t(unsigned long, q->pinned, max_pinned)) {
		ret = -EAGAIN;
	} else {
		q->inflight++;
		q->pinned += nr;
	}
	spin_unlock_irqrestore(&q->lock, irq);
	return ret;
}

/**
 * svod_async_prepare() - reserve, pin and allocate one transfer
 * @q: the file's queue
 * @req: the transfer, checked against the live grant by the caller
 *
 * Nothing is published: svod_async_submit() queues the job, or
 * svod_async_abort() undoes this.
 *
 * Context: process context; may sleep (pins the user pages).
 * Return: the job; ERR_PTR(-EAGAIN) if the file has max_inflight transfers
 * in flight, or the pages would pass max_pinned_pages with those in flight;
 * ERR_PTR(-EFBIG) if this transfer alone needs more than max_pinned_pages;
 * ERR_PTR(-EFAULT) for a user buffer that is not mapped (or, for READ, not
 * writable); ERR_PTR(-ENOMEM) when memory ran out, or the pages would take
 * the process's locked memory past RLIMIT_MEMLOCK (without CAP_IPC_LOCK);
 * ERR_PTR(-EINTR) on a fatal signal;
 * ERR_PTR(-EIO) if mapping the buffer or the BAR for the DMA channel
 * failed otherwise.
 */
struct svod_async_job *svod_async_prepare(struct svod_async *q,
					  const struct svod_async_req *req)
{
	unsigned int head = offset_in_page(req->ubuf);
	struct svod_async_job *job;
	unsigned long nr = 0;
	int pinned = 0, ret;

	if (req->length)
		nr = DIV_ROUND_UP(head + req->length, PAGE_SIZE);
	ret = svod_async_reserve(q, nr);
	if (ret)
		return ERR_PTR(ret);

	ret = -ENOMEM;
	job = kmem_cache_zalloc(svod_async_job_cache, GFP_KERNEL_ACCOUNT);
	if (!job)
		goto unreserve;
	if (nr) {
		job->pages = kvmalloc_array(nr, sizeof(*job->pages),
					    GFP_KERNEL_ACCOUNT);
		if (!job->pages)
			goto free_job;
		/* A pin for as long as the job is queued: a long-term one. */
		ret = account_locked_vm(current->mm, nr, true);
		if (ret)
			goto free_pages;
		job->mm = current->mm;
		mmgrab(job->mm);
		ret = svod_stage_pin(req->ubuf & PAGE_MASK, nr,
				     FOLL_LONGTERM | (req->to_device ? 0 : FOLL_WRITE),
				     job->pages, &pinned);
		if (ret) {
			unpin_user_pages(job->pages, pinned);
			svod_async_unaccount(job, nr);
			goto free_pages;
		}
	}
	job->nr_pages = nr;
	job->head = head;
	job->tier = req->tier;
	kref_get(&req->tier->ref);
	job->bar = req->bar;
	job->key = req->key;
	job->bar_off = req->bar_off;
	job->length = req->length;
	job->resume = req->resume;
	job->to_device = req->to_device;
	svod_async_job_setup(q, job);
	if (req->lane && job->length) {
		job->lane = req->lane;
		ret = svod_async_dma_map(job, req->bar);
		if (ret) {
			svod_async_abort(q, job);
			return ERR_PTR(ret);
		}
	}
	return job;

free_pages:
	kvfree(job->pages);
free_job:
	kmem_cache_free(svod_async_job_cache, job);
unreserve:
	svod_async_unreserve(q, nr);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_prepare);

/* Pin every entry's pages into @job->pages; on failure, unpin them all. */
static int svod_async_pin_batch(struct svod_async_job *job, unsigned int *failed)
{
	struct svod_async_slice *sl;
	unsigned int i, at = 0;
	int pinned, ret = 0;

	for (i = 0; i < job->nr_slices; i++) {
		sl = &job->slices[i];
		if (!sl->nr_pages)
			continue;
		pinned = 0;
		ret = svod_stage_pin(sl->part.ubuf & PAGE_MASK, sl->nr_pages,
				     FOLL_LONGTERM | (sl->part.to_device ? 0 : FOLL_WRITE),
				     job->pages + at, &pinned);
		if (ret) {
			*failed = i;
			unpin_user_pages(job->pages, at + pinned);
			return ret;
		}
		at += sl->nr_pages;
	}
	return 0;
}

/**
 * svod_async_prepare_batch() - reserve, pin and allocate a batch
 * @q: the file's queue
 * @parts: the entries, each checked against its live grant by the caller
 * @nr: entries, at least 1
 * @failed: out, on failure: the index of the entry the call stopped at
 *	(left alone for an error of the whole batch)
 *
 * One job moves every entry, in order, on the CPU engine: it takes one
 * place of max_inflight, one timeline value and one fence; its pages (the
 * entries' together) count against max_pinned_pages. Nothing is published:
 * svod_async_submit() queues the job, or svod_async_abort() undoes this,
 * and on failure nothing stays pinned or reserved.
 *
 * Context: process context; may sleep (pins the user pages).
 * Return: the job; as svod_async_prepare() otherwise (-EFBIG if the
 * entries together need more than max_pinned_pages, -EFAULT and -EINTR
 * from pinning an entry, with @failed set).
 */
struct svod_async_job *svod_async_prepare_batch(struct svod_async *q,
						const struct svod_async_part *parts,
						unsigned int nr, unsigned int *failed)
{
	struct svod_async_job *job;
	struct svod_async_slice *sl;
	unsigned long pages = 0;
	unsigned int i;
	int ret;

	ret = -ENOMEM;
	job = kmem_cache_zalloc(svod_async_job_cache, GFP_KERNEL_ACCOUNT);
	if (!job)
		return ERR_PTR(ret);
	job->slices = kvcalloc(nr, sizeof(*job->slices), GFP_KERNEL_ACCOUNT);
	if (!job->slices)
		goto free_job;
	for (i = 0; i < nr; i++) {
		sl = &job->slices[i];
		sl->part = parts[i];
		sl->head = offset_in_page(parts[i].ubuf);
		sl->first_page = pages;
		if (parts[i].length)
			sl->nr_pages = DIV_ROUND_UP(sl->head + parts[i].length, PAGE_SIZE);
		/* Past max_pinned_pages (at most 2^24) long before it wraps. */
		pages += sl->nr_pages;
		if (pages > READ_ONCE(svod_max_pinned_pages)) {
			*failed = i;
			ret = -EFBIG;
			goto free_slices;
		}
	}
	job->nr_slices = nr;
	ret = svod_async_reserve(q, pages);
	if (ret)
		goto free_slices;
	if (pages) {
		ret = -ENOMEM;
		job->pages = kvmalloc_array(pages, sizeof(*job->pages), GFP_KERNEL_ACCOUNT);
		if (!job->pages)
			goto unreserve;
		ret = account_locked_vm(current->mm, pages, true);
		if (ret)
			goto free_pages;
		job->mm = current->mm;
		mmgrab(job->mm);
		ret = svod_async_pin_batch(job, failed);
		if (ret) {
			svod_async_unaccount(job, pages);
			goto free_pages;
		}
	}
	job->nr_pages = pages;
	for (i = 0; i < nr; i++) {
		kref_get(&parts[i].tier->ref);
		job->length += parts[i].length;
	}
	svod_async_job_setup(q, job);
	return job;

free_pages:
	kvfree(job->pages);
unreserve:
	svod_async_unreserve(q, pages);
free_slices:
	kvfree(job->slices);
free_job:
	kmem_cache_free(svod_async_job_cache, job);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_prepare_batch);

/**
 * svod_async_fence_from_fd() - the fence of a sync_file, for an in-fence
 * @fd: the caller's fd
 *
 * Context: process context.
 * Return: a reference on the fence (for a merged sync_file, its fence
 * array); ERR_PTR(-EINVAL) for a negative @fd or an open file that is not
 * a sync_file (a dma-buf, a pipe: sync_file_get_fence() finds none);
 * ERR_PTR(-EBADF) for an @fd that is not open.
 */
struct dma_fence *svod_async_fence_from_fd(int fd)
{
	struct dma_fence *fence;
	struct file *file;

	if (fd < 0)
		return ERR_PTR(-EINVAL);
	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	fput(file);
	fence = sync_file_get_fence(fd);
	return fence ?: ERR_PTR(-EINVAL);
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_fence_from_fd);

/**
 * svod_async_wait_for() - make a prepared job wait for a fence first
 * @job: from svod_async_prepare() or svod_async_prepare_batch(), not
 *	submitted yet, with no in-fence
 * @fence: the in-fence; the job takes its own reference
 *
 * The job, once submitted, starts only after @fence signalled, and then
 * only if it signalled without an error; it ends, without moving a byte,
 * with @fence's error, or -ETIMEDOUT if @fence has not signalled
 * async_timeout_ms from now (see the top of the file). Nothing is
 * allocated; svod_async_abort() undoes it with the rest.
 *
 * Context: process context.
 */
void svod_async_wait_for(struct svod_async_job *job, struct dma_fence *fence)
{
	unsigned int ms = READ_ONCE(svod_async_timeout_ms);

	job->in_fence = dma_fence_get(fence);
	job->in_expires = jiffies + msecs_to_jiffies(ms);
	if (dma_fence_add_callback(fence, &job->in_cb, svod_async_in_signalled))
		WRITE_ONCE(job->in_signalled, true);
	else
		mod_timer(&job->in_timer, job->in_expires);
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_wait_for);

/**
 * svod_async_abort() - undo svod_async_prepare() of a job never submitted
 * @q: the file's queue
 * @job: the job
 *
 * Context: process context; may sleep.
 */
void svod_async_abort(struct svod_async *q, struct svod_async_job *job)
{
	svod_async_job_drop(q, job);
	dma_fence_put(&job->fence);
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_abort);

/**
 * svod_async_submit() - give a prepared job its timeline value and queue it
 * @q: the file's queue
 * @job: from svod_async_prepare()
 * @want_fd: also make a sync_file and reserve an fd for it
 * @seqno: out: the job's timeline value
 * @fence_fd: out: the reserved fd, or -1 without @want_fd
 * @fence_file: out: the sync_file's file, or NULL without @want_fd: the
 *	caller installs it at @fence_fd once userspace has the number
 *	(fd_install()), or drops both (put_unused_fd(), fput())
 *
 * On failure nothing is queued and the caller still owns @job (abort it).
 * The caller holds the lock that orders this against the cancellation of
 * the job's allocation (the file's), so a FREE either comes first (the
 * caller sees the handle gone) or finds the job queued.
 *
 * Context: process context; may sleep.
 * Return: 0; -ENOMEM; -EMFILE if the process has no free fd; -EAGAIN if
 * the result this job would replace in the history belongs to a transfer
 * still in flight (more than SVOD_ASYNC_HISTORY submissions behind it).
 */
int svod_async_submit(struct svod_async *q, struct svod_async_job *job,
		      bool want_fd, u64 *seqno, int *fence_fd,
		      struct file **fence_file)
{
	unsigned long irq;
	struct svod_async_job **ring = NULL, *old = NULL;
	struct sync_file *sync = NULL;
	int fd = -1, ret = 0;
	size_t slot;

	if (!READ_ONCE(q->ring)) {
		ring = kcalloc(SVOD_ASYNC_HISTORY, sizeof(*ring), GFP_KERNEL_ACCOUNT);
		if (!ring)
			return -ENOMEM;
	}
	if (want_fd) {
		ret = -ENOMEM;
		sync = sync_file_create(&job->fence);
		if (!sync)
			goto free_ring;
		fd = get_unused_fd_flags(O_CLOEXEC);
		if (fd < 0) {
			ret = fd;
			goto put_sync;
		}
	}

	spin_lock_irqsave(&q->lock, irq);
	if (!q->ring) {
		q->ring = ring;
		ring = NULL;
	}
	slot = (q->seqno + 1) % SVOD_ASYNC_HISTORY;
	old = q->ring[slot];
	if (old && !dma_fence_is_signaled(&old->fence)) {
		spin_unlock_irqrestore(&q->lock, irq);
		ret = -EAGAIN;
		goto put_fd;
	}
	job->fence.seqno = ++q->seqno;
	/* The job may be done and freed once the lock is dropped. */
	*seqno = job->fence.seqno;
	dma_fence_get(&job->fence);
	q->ring[slot] = job;
	list_add_tail(&job->node, &q->queued);
	spin_unlock_irqrestore(&q->lock, irq);

	if (old)
		dma_fence_put(&old->fence);
	queue_work(svod_async_wq, &q->work);
	*fence_fd = fd;
	*fence_file = sync ? sync->file : NULL;
	kfree(ring);
	return 0;

put_fd:
	if (fd >= 0)
		put_unused_fd(fd);
put_sync:
	if (sync)
		fput(sync->file);
free_ring:
	kfree(ring);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_submit);

/*
 * Move the job's bytes with the CPU engine, one chunk at a time. Runs in
 * the signalling path: spinlocks only, nothing allocated.
 */
static int svod_async_run(struct svod_async *q, struct svod_async_job *job,
			  u64 *moved)
{
	u64 deadline = ktime_get_ns() +
		(u64)READ_ONCE(svod_async_timeout_ms) * NSEC_PER_MSEC;
	struct svod_dev_tier *tier = job->tier;
	u64 pos = 0, at;
	size_t n;
	int ret = 0;

	*moved = 0;
	if (!svod_dev_tier_async_enter(tier))
		return -ENODEV;
	while (pos < job->length) {
		if (READ_ONCE(job->cancel)) {
			ret = -ECANCELED;
			break;
		}
		if (READ_ONCE(tier->async_closed)) {
			ret = -ENODEV;
			break;
		}
		if (pos && ktime_get_ns() > deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		n = min_t(u64, job->length - pos, SVOD_ASYNC_CHUNK);
		at = job->head + pos;
		svod_stage_cpu(job->bar, job->bar_off + pos,
			       job->pages + at / PAGE_SIZE, offset_in_page(at),
			       n, job->to_device);
		pos += n;
		atomic64_add(n, &tier->stats.cpu_bytes);
		cond_resched();
	}
	svod_dev_tier_async_exit(tier);
	*moved = pos;
	return ret;
}

/*
 * Move a batch's entries in order with the CPU engine, with the stops of
 * svod_async_run() between chunks (the clock read at most once a chunk's
 * worth of bytes: entries of a few KiB would pay for it otherwise). The
 * tier is entered once for a run of entries of the same tier. Runs in the
 * signalling path: spinlocks only, nothing allocated.
 */
static int svod_async_run_batch(struct svod_async_job *job, u64 *moved)
{
	u64 deadline = ktime_get_ns() +
		(u64)READ_ONCE(svod_async_timeout_ms) * NSEC_PER_MSEC;
	struct svod_dev_tier *entered = NULL;
	struct svod_async_slice *sl;
	u64 pos, at, since_clock = 0;
	unsigned int i;
	size_t n;
	int ret = 0;

	*moved = 0;
	for (i = 0; i < job->nr_slices && !ret; i++) {
		sl = &job->slices[i];
		if (sl->part.tier != entered) {
			if (entered)
				svod_dev_tier_async_exit(entered);
			entered = NULL;
			if (!svod_dev_tier_async_enter(sl->part.tier)) {
				ret = -ENODEV;
				break;
			}
			entered = sl->part.tier;
		}
		for (pos = 0; pos < sl->part.length; pos += n) {
			if (READ_ONCE(job->cancel)) {
				ret = -ECANCELED;
				break;
			}
			if (READ_ONCE(entered->async_closed)) {
				ret = -ENODEV;
				break;
			}
			if (since_clock >= SVOD_ASYNC_CHUNK) {
				since_clock = 0;
				if (ktime_get_ns() > deadline) {
					ret = -ETIMEDOUT;
					break;
				}
			}
			n = min_t(u64, sl->part.length - pos, SVOD_ASYNC_CHUNK);
			at = sl->head + pos;
			svod_stage_cpu(sl->part.bar, sl->part.bar_off + pos,
				       job->pages + sl->first_page + at / PAGE_SIZE,
				       offset_in_page(at), n, sl->part.to_device);
			sl->moved += n;
			*moved += n;
			since_clock += n;
			atomic64_add(n, &entered->stats.cpu_bytes);
			cond_resched();
		}
	}
	if (entered)
		svod_dev_tier_async_exit(entered);
	return ret;
}

/* A tier of the job is being retired. */
static bool svod_async_job_gone(struct svod_async_job *job)
{
	unsigned int i;

	if (!job->slices)
		return READ_ONCE(job->tier->async_closed);
	for (i = 0; i < job->nr_slices; i++) {
		if (READ_ONCE(job->slices[i].part.tier->async_closed))
			return true;
	}
	return false;
}

/*
 * The job at the head of the queue may leave it: it has no in-fence, or
 * the fence signalled, or the wait is over (cancelled, a tier retired,
 * past its time). Else it waits, and the jobs behind it with it.
 */
static bool svod_async_job_ready(struct svod_async_job *job)
{
	return !job->in_fence || READ_ONCE(job->in_signalled) ||
	       READ_ONCE(job->cancel) || svod_async_job_gone(job) ||
	       time_after_eq(jiffies, job->in_expires);
}

/*
 * Why a dequeued job must end before it moves a byte: cancelled, its
 * in-fence's error, or its wait ended without the fence (-ENODEV for a
 * retired tier, else -ETIMEDOUT); 0 if it may start.
 */
static int svod_async_job_stop(struct svod_async_job *job)
{
	int status;

	if (READ_ONCE(job->cancel))
		return -ECANCELED;
	if (!job->in_fence)
		return 0;
	status = dma_fence_get_status(job->in_fence);
	if (status)
		return min(status, 0);
	return svod_async_job_gone(job) ? -ENODEV : -ETIMEDOUT;
}

/* Record the outcome and signal; in a signalling section, spinlocks only. */
static void svod_async_signal(struct svod_async_job *job, u64 moved, int status)
{
	unsigned long flags;

	spin_lock_irqsave(&job->lock, flags);
	job->done = job->resume + moved;
	job->status = status;
	if (status)
		dma_fence_set_error(&job->fence, status);
	dma_fence_signal_locked(&job->fence);
	spin_unlock_irqrestore(&job->lock, flags);
}

/*
 * DMA: end the transfer, once: whoever gets here first (a callback, the
 * job's turn finding it stopped, the watchdog, a cancellation that took it
 * out of line) signals; the rest (unmapping, unpinning) runs in the job's
 * cleanup work, which may sleep. A READ's pages are synced for the CPU
 * first: with a bounce buffer the bytes reach them only then. In a
 * signalling section, spinlocks only.
 */
static void svod_async_dma_finish(struct svod_async_job *job, int status)
{
	unsigned long irq;
	struct svod_async *q = job->q;

	if (atomic_xchg(&job->finished, 1))
		return;
	if (!job->to_device && job->pos)
		dma_sync_sgtable_for_cpu(job->lane->chan->device->dev, &job->sgt,
					 DMA_FROM_DEVICE);
	svod_dev_tier_async_exit(job->tier);
	svod_async_signal(job, job->pos, status);
	spin_lock_irqsave(&q->lock, irq);
	q->running = NULL;
	spin_unlock_irqrestore(&q->lock, irq);
	wake_up_var(&q->running);
	/*
	 * The file's next job may start. Before the cleanup gives the job's
	 * caps back: a file with none in flight is never queued again
	 * (svod_async_fini() relies on it).
	 */
	queue_work(svod_async_wq, &q->work);
	queue_work(svod_async_aux_wq, &job->cleanup);
}

static void svod_async_dma_done(void *param, const struct dmaengine_result *res);

/*
 * DMA: the job's turn on the channel: submit its next descriptor (at most
 * one chunk, inside one mapped segment), or end it (done, cancelled, its
 * tier retired, past its deadline, or the channel refused the descriptor)
 * and give the turn on. The watchdog is armed before the submission, so a
 * callback always finds it to disarm.
 */
static void svod_async_dma_go(struct svod_dma_turn *turn)
{
	struct svod_async_job *job = container_of(turn, struct svod_async_job, turn);
	struct svod_dma_lane *lane = job->lane;
	struct dma_chan *chan = lane->chan;
	struct dma_async_tx_descriptor *tx;
	dma_addr_t mem, bar;
	int status = 0;
	size_t len;

	if (job->pos == job->length)
		goto finish;
	status = -ECANCELED;
	if (READ_ONCE(job->cancel))
		goto finish;
	status = -ENODEV;
	if (READ_ONCE(job->tier->async_closed))
		goto finish;
	status = -ETIMEDOUT;
	if (ktime_get_ns() > job->deadline)
		goto finish;

	status = -EIO;
	mem = sg_dma_address(job->sg) + job->sg_off;
	len = min_t(size_t, sg_dma_len(job->sg) - job->sg_off, SVOD_ASYNC_DMA_CHUNK);
	bar = job->bar_dma + job->pos;
	tx = dmaengine_prep_dma_memcpy(chan, job->to_device ? bar : mem,
				       job->to_device ? mem : bar, len,
				       DMA_PREP_INTERRUPT);
	if (!tx)
		goto finish;
	tx->callback_result = svod_async_dma_done;
	tx->callback_param = job;
	atomic_set(&job->desc_live, 1);
	job->desc_at = jiffies;
	mod_delayed_work(svod_async_aux_wq, &job->watchdog, svod_stage_dma_timeout() + 1);
	if (dma_submit_error(dmaengine_submit(tx))) {
		atomic_set(&job->desc_live, 0);
		cancel_delayed_work(&job->watchdog);
		goto finish;
	}
	dma_async_issue_pending(chan);
	return;

finish:
	svod_async_dma_finish(job, status);
	svod_dma_lane_next(lane);
}

/* A descriptor completed: account for it; back in line, or the end. */
static void svod_async_dma_done(void *param, const struct dmaengine_result *res)
{
	struct svod_async_job *job = param;
	struct svod_dma_lane *lane = job->lane;
	bool cookie = dma_fence_begin_signalling();
	size_t len;

	/* The watchdog took the descriptor: it ends the job. */
	if (!atomic_xchg(&job->desc_live, 0))
		goto out;
	cancel_delayed_work(&job->watchdog);
	if (res->result != DMA_TRANS_NOERROR) {
		svod_async_dma_finish(job, -EIO);
		svod_dma_lane_next(lane);
		goto out;
	}
	len = min_t(size_t, sg_dma_len(job->sg) - job->sg_off, SVOD_ASYNC_DMA_CHUNK);
	job->pos += len;
	job->sg_off += len;
	atomic64_add(len, &job->tier->stats.dma_bytes);
	if (job->sg_off == sg_dma_len(job->sg) && job->pos < job->length) {
		job->sg = sg_next(job->sg);
		job->sg_off = 0;
	}
	if (job->pos == job->length) {
		svod_async_dma_finish(job, 0);
		svod_dma_lane_next(lane);
	} else {
		/* The other users of the channel first, one descriptor each. */
		svod_dma_lane_pass(lane, &job->turn);
	}
out:
	dma_fence_end_signalling(cookie);
}

/*
 * DMA: a descriptor still on the engine dma_timeout_ms after its
 * submission. The channel is reset, which drops that descriptor alone (the
 * lane keeps one svod descriptor on it) and returns once the engine no
 * longer touches its memory; the transfer ends with -ETIMEDOUT and the next
 * turn goes.
 */
static void svod_async_watchdog(struct work_struct *work)
{
	struct svod_async_job *job =
		container_of(to_delayed_work(work), struct svod_async_job, watchdog);
	struct svod_dma_lane *lane = job->lane;
	bool cookie;

	/*
	 * A later descriptor of the job (this one's callback came first and
	 * re-armed the watchdog), or the callback takes it now: not hung.
	 * Taken here, a late callback of it does nothing, and passes no turn
	 * on: the reset below finds this descriptor alone on the channel.
	 */
	if (time_before(jiffies, job->desc_at + svod_stage_dma_timeout()) ||
	    !atomic_xchg(&job->desc_live, 0))
		return;
	dev_err_ratelimited(lane->chan->device->dev,
			    "svod: asynchronous DMA descriptor hung on %s; channel reset\n",
			    dma_chan_name(lane->chan));
	dmaengine_terminate_sync(lane->chan);
	cookie = dma_fence_begin_signalling();
	svod_async_dma_finish(job, -ETIMEDOUT);
	dma_fence_end_signalling(cookie);
	svod_dma_lane_next(lane);
}

/* After the signal, outside it: no descriptor of the job is left. */
static void svod_async_cleanup(struct work_struct *work)
{
	struct svod_async_job *job = container_of(work, struct svod_async_job, cleanup);

	cancel_delayed_work_sync(&job->watchdog);
	svod_async_job_drop(job->q, job);
	dma_fence_put(&job->fence);
}

/*
 * DMA: start a job from the file's worker, its tier entered: it joins the
 * channel's line and goes on from the engine's callbacks; its end queues
 * the worker again. The deadline is checked at each of its turns.
 */
static void svod_async_dma_start(struct svod_async_job *job)
{
	unsigned int ms = READ_ONCE(svod_async_timeout_ms);

	job->deadline = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;
	svod_dma_lane_enter(job->lane, &job->turn);
}

/*
 * Runs the file's jobs in order; a fence-signalling section as a whole:
 * each job it dequeues was published at submission. The jobs' cleanup
 * (unpinning, unaccounting, freeing) is queued, never done here.
 */
static void svod_async_work(struct work_struct *work)
{
	unsigned long irq;
	struct svod_async *q = container_of(work, struct svod_async, work);
	struct svod_async_job *job;
	bool cookie = dma_fence_begin_signalling();
	u64 moved;
	int ret;

	for (;;) {
		/* One job at a time: a DMA job's end queues this work again. */
		spin_lock_irqsave(&q->lock, irq);
		job = NULL;
		if (!q->running) {
			job = list_first_entry_or_null(&q->queued,
						       struct svod_async_job, node);
			/* Waiting for its in-fence: queued again when it may go. */
			if (job && !svod_async_job_ready(job))
				job = NULL;
			if (job) {
				list_del_init(&job->node);
				q->running = job;
			}
		}
		spin_unlock_irqrestore(&q->lock, irq);
		if (!job)
			break;

		moved = 0;
		/*
		 * Cancelled while queued, or its in-fence failed or never came:
		 * it ends here, in its turn.
		 */
		ret = svod_async_job_stop(job);
		if (!ret && job->lane && svod_dev_tier_async_enter(job->tier)) {
			/* @running until its end: svod_async_dma_finish(). */
			svod_async_dma_start(job);
			continue;
		} else if (!ret && job->lane) {
			/* The tier is being retired: nothing touches its BAR. */
			ret = -ENODEV;
		} else if (!ret && job->slices) {
			ret = svod_async_run_batch(job, &moved);
		} else if (!ret) {
			ret = svod_async_run(q, job, &moved);
		}
		spin_lock_irqsave(&q->lock, irq);
		q->running = NULL;
		spin_unlock_irqrestore(&q->lock, irq);
		wake_up_var(&q->running);
		svod_async_signal(job, moved, ret);
		queue_work(svod_async_aux_wq, &job->cleanup);
	}
	dma_fence_end_signalling(cookie);
}

static bool svod_async_idle(struct svod_async *q)
{
	unsigned long irq;
	bool idle;

	spin_lock_irqsave(&q->lock, irq);
	idle = !q->inflight;
	spin_unlock_irqrestore(&q->lock, irq);
	return idle;
}

static bool svod_async_runs(struct svod_async *q, const void *key)
{
	unsigned long irq;
	bool runs;

	spin_lock_irqsave(&q->lock, irq);
	runs = q->running && svod_async_job_names(q->running, key);
	spin_unlock_irqrestore(&q->lock, irq);
	return runs;
}

/**
 * svod_async_cancel() - cancel every transfer through a handle
 * @q: the file's queue
 * @key: the struct svod_hold of a handle already gone; NULL: every transfer
 *
 * Queued transfers are flagged: each ends with -ECANCELED in its turn,
 * before it moves a byte (a file's fences signal in timeline order, as
 * the dma_fence rules want of one context). A running one (CPU, or DMA with a
 * descriptor in flight) stops at its next chunk or descriptor (with
 * -ECANCELED) and this waits for that, so when it returns no transfer of
 * @key touches the BAR again and the handle may let go of its allocation.
 *
 * Context: process context; sleeps for at most one chunk or descriptor of
 * a running transfer. No svod lock held.
 */
void svod_async_cancel(struct svod_async *q, const void *key)
{
	unsigned long irq;
	struct svod_async_job *job;
	struct svod_dma_lane *lane;
	bool cookie;

	spin_lock_irqsave(&q->lock, irq);
	list_for_each_entry(job, &q->queued, node) {
		if (svod_async_job_names(job, key))
			WRITE_ONCE(job->cancel, true);
	}
	/*
	 * A running DMA job is kept (a reference) to be taken out of line; its
	 * lane is read here, while it runs: its cleanup clears job->lane.
	 */
	job = q->running;
	lane = job ? job->lane : NULL;
	if (job && svod_async_job_names(job, key))
		WRITE_ONCE(job->cancel, true);
	if (job && svod_async_job_names(job, key) && lane)
		dma_fence_get(&job->fence);
	else
		job = NULL;
	spin_unlock_irqrestore(&q->lock, irq);
	/* A job waiting for its in-fence at the head ends now. */
	queue_work(svod_async_wq, &q->work);

	/*
	 * A DMA job waiting for its turn on the channel ends now, not after
	 * the other users' descriptors: taken out of line, it is ours to end.
	 */
	if (job) {
		if (svod_dma_lane_leave(lane, &job->turn)) {
			cookie = dma_fence_begin_signalling();
			svod_async_dma_finish(job, -ECANCELED);
			dma_fence_end_signalling(cookie);
		}
		dma_fence_put(&job->fence);
	}

	/*
	 * One chunk at most: the worker checks @cancel between chunks, the
	 * DMA callbacks before they submit the next descriptor.
	 */
	wait_var_event(&q->running, !svod_async_runs(q, key));
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_cancel);

/**
 * svod_async_hand_over() - let a freed handle's transfers finish
 * @q: the file's queue
 * @key: the struct svod_hold of a handle already gone
 * @ref: a reference count on what the handle named
 * @release: what drops the last reference of @ref
 *
 * Every transfer through @key whose fence has not signalled (queued or
 * running: all are in the history ring, see svod_async_submit()) takes a
 * reference on @ref, which its cleanup drops after the signal; each
 * forgets @key, so neither a FREE of a later handle that reuses the
 * memory nor anything but the file's release (svod_async_fini()) or the
 * tier's retirement stops it. Nothing is allocated and only spinlocks are
 * taken.
 *
 * Context: process context; takes the queue's lock.
 */
void svod_async_hand_over(struct svod_async *q, const void *key,
			  struct kref *ref, void (*release)(struct kref *ref))
{
	struct svod_async_job *job;
	struct svod_async_slice *sl;
	unsigned long irq;
	unsigned int i, j;

	spin_lock_irqsave(&q->lock, irq);
	for (i = 0; q->ring && i < SVOD_ASYNC_HISTORY; i++) {
		job = q->ring[i];
		if (!job || dma_fence_is_signaled(&job->fence))
			continue;
		if (job->key == key) {
			kref_get(ref);
			job->held = ref;
			job->held_release = release;
			job->key = NULL;
		}
		for (j = 0; j < job->nr_slices; j++) {
			sl = &job->slices[j];
			if (sl->part.key != key)
				continue;
			kref_get(ref);
			sl->held = ref;
			job->held_release = release;
			sl->part.key = NULL;
		}
	}
	spin_unlock_irqrestore(&q->lock, irq);
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_hand_over);

/**
 * svod_async_tiers_retired() - end the waits for in-fences on retired tiers
 *
 * Every file's worker looks at its first job again: one waiting for its
 * in-fence with a tier retired since then ends with -ENODEV, and the jobs
 * behind it go on (to -ENODEV too if they are on that tier). Called after
 * a device's tiers are retired; nothing waits here.
 *
 * Context: process context; takes the module's list lock.
 */
void svod_async_tiers_retired(void)
{
	struct svod_async *q;

	spin_lock(&svod_async_queues_lock);
	list_for_each_entry(q, &svod_async_queues, node)
		queue_work(svod_async_wq, &q->work);
	spin_unlock(&svod_async_queues_lock);
}

/**
 * svod_async_fini() - the file's release: cancel and forget everything
 * @q: the queue; no submission can come any more
 *
 * Every transfer is cancelled as by svod_async_cancel(); when this returns
 * no page of the file's is pinned and no job touches a BAR. Fences already
 * handed out (sync_files) live on, signalled.
 *
 * Context: process context; sleeps.
 */
void svod_async_fini(struct svod_async *q)
{
	unsigned int i;

	svod_async_cancel(q, NULL);
	/*
	 * The worker ends the cancelled jobs in their turn, the DMA jobs'
	 * cleanup works unpin and unmap theirs. With none left nothing queues
	 * the worker again: one flush and it is idle for good.
	 */
	wait_var_event(&q->inflight, svod_async_idle(q));
	spin_lock(&svod_async_queues_lock);
	list_del(&q->node);
	spin_unlock(&svod_async_queues_lock);
	flush_work(&q->work);
	WARN_ON(q->pinned);
	if (!q->ring)
		return;
	for (i = 0; i < SVOD_ASYNC_HISTORY; i++) {
		if (q->ring[i])
			dma_fence_put(&q->ring[i]->fence);
	}
	kfree(q->ring);
	q->ring = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_fini);

/* Jiffies from now to @deadline_ns (CLOCK_MONOTONIC); S64_MAX: for ever. */
static long svod_async_timeout(s64 deadline_ns)
{
	s64 now = ktime_get_ns();

	if (deadline_ns == S64_MAX)
		return MAX_SCHEDULE_TIMEOUT;
	if (deadline_ns <= now)
		return 0;
	/* Round up: never give up before the deadline. */
	return min_t(u64, nsecs_to_jiffies64(deadline_ns - now) + 1,
		     MAX_SCHEDULE_TIMEOUT - 1);
}

/**
 * svod_async_wait() - wait for the end of one transfer of the file
 * @q: the file's queue
 * @seqno: the transfer's timeline value
 * @deadline_ns: CLOCK_MONOTONIC time to give up at; at or before now only
 *	looks; S64_MAX never gives up
 * @done: out: bytes of the request moved (its resume included)
 * @status: out: 0 or the transfer's negative errno
 *
 * Context: process context; sleeps, interruptibly.
 * Return: 0 when the transfer has ended (@done, @status set); -EINVAL for
 * a @seqno of 0 or beyond the last one given, or a negative @deadline_ns;
 * -ENOENT if the transfer ended SVOD_ASYNC_HISTORY or more submissions ago
 * and its result is no longer kept; -ETIME if it has not ended at
 * @deadline_ns; -ERESTARTSYS on a signal (the call restarts with the same
 * deadline).
 */
int svod_async_wait(struct svod_async *q, u64 seqno, s64 deadline_ns,
		    u64 *done, int *status)
{
	unsigned long irq;
	struct svod_async_job *job = NULL;
	long ret;

	if (deadline_ns < 0)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, irq);
	if (!seqno || seqno > q->seqno) {
		spin_unlock_irqrestore(&q->lock, irq);
		return -EINVAL;
	}
	job = q->ring[seqno % SVOD_ASYNC_HISTORY];
	if (job && job->fence.seqno == seqno)
		dma_fence_get(&job->fence);
	else
		job = NULL;
	spin_unlock_irqrestore(&q->lock, irq);
	if (!job)
		return -ENOENT;

	ret = dma_fence_wait_timeout(&job->fence, true,
				     svod_async_timeout(deadline_ns));
	if (ret >= 0 && !dma_fence_is_signaled(&job->fence))
		ret = -ETIME;
	if (ret >= 0) {
		spin_lock_irq(&job->lock);
		*done = job->done;
		*status = job->status;
		spin_unlock_irq(&job->lock);
		ret = 0;
	}
	dma_fence_put(&job->fence);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_async_wait);

/**
 * svod_async_show() - the queue's fdinfo lines
 * @q: the file's queue
 * @m: the seq_file
 *
 * Context: process context.
 */
void svod_async_show(struct svod_async *q, struct seq_file *m)
{
	unsigned long irq;
	unsigned int inflight;
	unsigned long pinned;
	u64 seqno;

	spin_lock_irqsave(&q->lock, irq);
	inflight = q->inflight;
	pinned = q->pinned;
	seqno = q->seqno;
	spin_unlock_irqrestore(&q->lock, irq);
	seq_printf(m, "svod-async-seqno:\t%llu\n", seqno);
	seq_printf(m, "svod-async-inflight:\t%u\n", inflight);
	seq_printf(m, "svod-async-pinned:\t%lu KiB\n", pinned * (PAGE_SIZE / SZ_1K));
}

/**
 * svod_async_module_init() - the job cache and the workqueues
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int svod_async_module_init(void)
{
	svod_async_job_cache = KMEM_CACHE(svod_async_job, 0);
	if (!svod_async_job_cache)
		return -ENOMEM;
	svod_async_wq = alloc_workqueue("svod_async", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!svod_async_wq)
		goto destroy_cache;
	svod_async_aux_wq = alloc_workqueue("svod_async_aux", WQ_UNBOUND, 0);
	if (!svod_async_aux_wq)
		goto destroy_wq;
	return 0;

destroy_wq:
	destroy_workqueue(svod_async_wq);
destroy_cache:
	kmem_cache_destroy(svod_async_job_cache);
	return -ENOMEM;
}

/**
 * svod_async_module_exit() - destroy the workqueues and the job cache
 *
 * Context: module exit, every file released (so every queue is empty);
 * destroying the auxiliary queue waits for the last cleanup's tail. The
 * last fence's RCU callback dropped the last module reference, and may
 * still be returning: rcu_barrier() waits for it before the module's text
 * and the cache go.
 */
void svod_async_module_exit(void)
{
	destroy_workqueue(svod_async_aux_wq);
	destroy_workqueue(svod_async_wq);
	rcu_barrier();
	kmem_cache_destroy(svod_async_job_cache);
}
