// SPDX-License-Identifier: GPL-2.0
/*
 * svod tier objects (struct svod_dev_tier): creation from a declaration,
 * publication in the id registry svod_tier_xa, lookup by id with a
 * reference, scrubbing through the BAR mapping, and retirement (marking a
 * tier gone so nothing touches its BAR again). Which tiers a device has, and
 * when they are replaced, is dev.c's business.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <linux/wait_bit.h>

#include <kunit/visibility.h>

#include "alloc.h"
#include "dev.h"
#include "mmap.h"
#include "tier.h"

/* Protects the device list and every device's tier set. */
struct mutex svod_decl_lock = __MUTEX_INITIALIZER(svod_decl_lock);
EXPORT_SYMBOL_IF_KUNIT(svod_decl_lock);

/*
 * Tier id -> struct svod_dev_tier, for every tier not yet released (gone
 * tiers stay while allocations hold them, so calls on them see -ENODEV).
 * Lookups take a reference under the xarray's lock; release erases the
 * entry under that lock before freeing.
 */
DEFINE_XARRAY_ALLOC(svod_tier_xa);

/* Next tier id to try; ids are allocated cyclically so they are not reused soon. */
static u32 svod_next_tier_id;

/**
 * svod_tier_name_valid() - is this a name a tier may have?
 * @name: NUL-terminated
 *
 * Context: any context.
 * Return: true for 1 to SVOD_NAME_LEN - 1 characters of [A-Za-z0-9_.-].
 */
bool svod_tier_name_valid(const char *name)
{
	size_t len = strnlen(name, SVOD_NAME_LEN);
	size_t i;

	if (!len || len >= SVOD_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		if (!isalnum(name[i]) && !strchr("_.-", name[i]))
			return false;
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_name_valid);

static int svod_region_cmp(const void *a, const void *b)
{
	const struct svod_range_region *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return 0;
}

/**
 * svod_tier_spec_sort_reserved() - put reserved regions in canonical order
 * @spec: the declaration
 *
 * Regions are kept sorted by base, then size, so two declarations of the
 * same regions compare equal whatever order they were written in.
 *
 * Context: any context.
 */
void svod_tier_spec_sort_reserved(struct svod_tier_spec *spec)
{
	sort(spec->reserved, spec->nr_reserved, sizeof(spec->reserved[0]),
	     svod_region_cmp, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_spec_sort_reserved);

/**
 * svod_tier_spec_equal() - do two declarations describe the same tier?
 * @a: one declaration
 * @b: the other
 *
 * Context: any context.
 * Return: true if every field (reserved regions in order) but the access is
 * the same: who may use a tier is not what it is.
 */
bool svod_tier_spec_equal(const struct svod_tier_spec *a,
			  const struct svod_tier_spec *b)
{
	return !strcmp(a->name, b->name) && a->bar == b->bar &&
	       a->offset == b->offset && a->size == b->size &&
	       a->base == b->base && a->align == b->align &&
	       a->nr_reserved == b->nr_reserved &&
	       !memcmp(a->reserved, b->reserved,
		       a->nr_reserved * sizeof(a->reserved[0]));
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_spec_equal);

/* Is @gid the fsgid of @cred or one of its supplementary groups? */
static bool svod_cred_in_group(const struct cred *cred, kgid_t gid)
{
	const struct group_info *groups = cred->group_info;
	int i;

	if (gid_eq(cred->fsgid, gid))
		return true;
	for (i = 0; groups && i < groups->ngroups; i++) {
		if (gid_eq(groups->gid[i], gid))
			return true;
	}
	return false;
}

/**
 * svod_tier_access_allows() - do a tier's permission bits let @cred use it?
 * @access: the tier's owner, group and mode
 * @cred: the credentials of the file's opener (file->f_cred)
 *
 * Judged as opening a device node O_RDWR is, without capabilities: the
 * class @cred falls in is the owner's if its fsuid is @access->uid, else
 * the group's if its fsgid or a supplementary group is @access->gid, else
 * other; that class's bits must grant both read and write. Ids are those
 * of the initial user namespace, so a process in a user namespace is
 * judged by the ids it maps to there.
 *
 * Context: any context.
 * Return: true if the bits grant it.
 */
bool svod_tier_access_allows(const struct svod_tier_access *access,
			     const struct cred *cred)
{
	kuid_t uid = make_kuid(&init_user_ns, access->uid);
	kgid_t gid = make_kgid(&init_user_ns, access->gid);
	u32 bits = access->mode;

	if (uid_eq(cred->fsuid, uid))
		bits >>= 6;
	else if (svod_cred_in_group(cred, gid))
		bits >>= 3;
	return (bits & 06) == 06;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_access_allows);

/**
 * svod_dev_tier_access() - a tier's access, as it is now
 * @tier: the tier
 *
 * Context: process context; takes @tier's lock.
 * Return: a copy of its owner, group and mode.
 */
struct svod_tier_access svod_dev_tier_access(struct svod_dev_tier *tier)
{
	struct svod_tier_access access;

	mutex_lock(&tier->lock);
	access = tier->spec.access;
	mutex_unlock(&tier->lock);
	return access;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_access);

/**
 * svod_dev_tier_set_access() - change who may use a live tier
 * @tier: the tier
 * @access: its new owner, group and mode
 *
 * Applies to every ALLOC and IMPORT that checks after this returns;
 * allocations and handles that exist keep working, as an open file
 * survives chmod(2).
 *
 * Context: process context; svod_decl_lock held; takes @tier's lock.
 */
void svod_dev_tier_set_access(struct svod_dev_tier *tier,
			      const struct svod_tier_access *access)
{
	lockdep_assert_held(&svod_decl_lock);
	mutex_lock(&tier->lock);
	tier->spec.access = *access;
	mutex_unlock(&tier->lock);
}

/**
 * svod_dev_tier_usable() - may the opener of @file use @tier?
 * @tier: the tier
 * @file: an open file of /dev/svod; its f_cred are judged, not the caller's
 *
 * The tier's permission bits (svod_tier_access_allows()), or else
 * CAP_DAC_OVERRIDE of the opener in the initial user namespace, as for a
 * device node.
 *
 * Context: process context; takes @tier's lock.
 * Return: true if it may.
 */
bool svod_dev_tier_usable(struct svod_dev_tier *tier, struct file *file)
{
	struct svod_tier_access access = svod_dev_tier_access(tier);

	return svod_tier_access_allows(&access, file->f_cred) ||
	       file_ns_capable(file, &init_user_ns, CAP_DAC_OVERRIDE);
}

/**
 * svod_dev_tier_may_use() - svod_dev_tier_usable(), a refusal counted
 * @tier: the tier
 * @file: an open file of /dev/svod
 *
 * For the calls that take memory of @tier (ALLOC, IMPORT); each refusal
 * adds one to the tier's denied (sysfs).
 *
 * Context: process context; takes @tier's lock.
 * Return: 0, or -EACCES.
 */
int svod_dev_tier_may_use(struct svod_dev_tier *tier, struct file *file)
{
	if (svod_dev_tier_usable(tier, file))
		return 0;
	atomic64_inc(&tier->denied);
	return -EACCES;
}

/**
 * svod_dev_tier_create() - a new tier of a device, not yet published
 * @sdev: the device; the tier's BAR is mapped
 * @spec: the declaration
 *
 * The tier's id is reserved (lookups see nothing until
 * svod_dev_tier_publish()). The caller owns the one reference and drops it
 * with svod_dev_tier_put() if the tier is never published.
 *
 * Context: process context; svod_decl_lock held.
 * Return: the tier, or ERR_PTR(-ENOMEM), ERR_PTR(-EINVAL) if the allocator
 * refuses the declaration (size 0, align not a power of two, addresses
 * wrap, a reserved region outside the tier), or an errno of
 * xa_alloc_cyclic().
 */
struct svod_dev_tier *svod_dev_tier_create(struct svod_dev *sdev,
					   const struct svod_tier_spec *spec)
{
	struct svod_dev_tier *tier;
	int ret;

	lockdep_assert_held(&svod_decl_lock);
	tier = kzalloc(sizeof(*tier), GFP_KERNEL_ACCOUNT);
	if (!tier)
		return ERR_PTR(-ENOMEM);
	kref_init(&tier->ref);
	tier->spec = *spec;
	strscpy(tier->device, pci_name(sdev->pdev), sizeof(tier->device));
	tier->sdev = sdev;
	INIT_LIST_HEAD(&tier->dev_node);
	init_rwsem(&tier->io_sem);
	spin_lock_init(&tier->async_lock);
	mutex_init(&tier->lock);
	INIT_LIST_HEAD(&tier->live);
	mutex_init(&tier->dmabuf_lock);
	INIT_LIST_HEAD(&tier->dmabufs);

	ret = svod_range_init(&tier->core, spec->base, spec->size, spec->align,
			      spec->reserved, spec->nr_reserved,
			      GFP_KERNEL_ACCOUNT);
	if (ret)
		goto free_tier;

	ret = xa_alloc_cyclic(&svod_tier_xa, &tier->id, NULL, xa_limit_31b,
			      &svod_next_tier_id, GFP_KERNEL);
	if (ret < 0)
		goto fini_core;

	return tier;

fini_core:
	svod_range_fini(&tier->core);
free_tier:
	mutex_destroy(&tier->dmabuf_lock);
	mutex_destroy(&tier->lock);
	kfree(tier);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_create);

/**
 * svod_dev_tier_publish() - make a created tier reachable by its id
 * @tier: a tier of svod_dev_tier_create()
 *
 * Context: process context; svod_decl_lock held.
 */
void svod_dev_tier_publish(struct svod_dev_tier *tier)
{
	lockdep_assert_held(&svod_decl_lock);
	/* Storing into a reserved index cannot fail. */
	xa_store(&svod_tier_xa, tier->id, tier, GFP_KERNEL);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_publish);

static void svod_dev_tier_release(struct kref *ref)
{
	struct svod_dev_tier *tier = container_of(ref, struct svod_dev_tier, ref);

	xa_erase(&svod_tier_xa, tier->id);
	WARN_ON(!list_empty(&tier->live));
	WARN_ON(!list_empty(&tier->dmabufs));
	svod_range_fini(&tier->core);
	mutex_destroy(&tier->dmabuf_lock);
	mutex_destroy(&tier->lock);
	kfree(tier);
}

/**
 * svod_dev_tier_put() - drop a reference to a tier
 * @tier: the tier
 *
 * Context: process context; takes svod_tier_xa's lock on the last reference.
 */
void svod_dev_tier_put(struct svod_dev_tier *tier)
{
	kref_put(&tier->ref, svod_dev_tier_release);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_put);

/**
 * svod_dev_tier_get_by_id() - look a tier up by its id
 * @id: the id, as SVOD_IOCTL_QUERY reports it
 *
 * Context: any context; takes svod_tier_xa's lock.
 * Return: the tier with a reference the caller drops with
 * svod_dev_tier_put(), or NULL if no tier has that id. The tier may be gone.
 */
struct svod_dev_tier *svod_dev_tier_get_by_id(u32 id)
{
	struct svod_dev_tier *tier;

	xa_lock(&svod_tier_xa);
	tier = xa_load(&svod_tier_xa, id);
	if (tier && !kref_get_unless_zero(&tier->ref))
		tier = NULL;
	xa_unlock(&svod_tier_xa);
	return tier;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_get_by_id);

/**
 * svod_dev_tier_next() - the next tier in id order, for walks over all tiers
 * @id: in: the first id to consider; out: the id of the tier returned
 *
 * Context: any context; takes svod_tier_xa's lock.
 * Return: the tier with a reference the caller drops with
 * svod_dev_tier_put(), or NULL after the last one. The tier may be gone.
 */
struct svod_dev_tier *svod_dev_tier_next(unsigned long *id)
{
	struct svod_dev_tier *tier;

	xa_lock(&svod_tier_xa);
	xa_for_each_start(&svod_tier_xa, *id, tier, *id) {
		if (kref_get_unless_zero(&tier->ref))
			break;
	}
	xa_unlock(&svod_tier_xa);
	return tier;
}

/* Zero @size bytes of @tier from device address @start; the caller locks. */
static void svod_dev_tier_zero(struct svod_dev_tier *tier, u64 start, u64 size)
{
	svod_stage_zero(&tier->sdev->bars[tier->spec.bar],
			tier->spec.offset + (start - tier->spec.base), size);
}

/**
 * svod_dev_tier_scrub() - zero a range of a tier through its mapping
 * @tier: the tier, not gone
 * @start: first device address
 * @size: bytes
 *
 * The zeros are posted to the device (wmb()) before this returns.
 *
 * Context: process context; @tier's io_sem held; may sleep.
 */
void svod_dev_tier_scrub(struct svod_dev_tier *tier, u64 start, u64 size)
{
	lockdep_assert_held(&tier->io_sem);
	svod_dev_tier_zero(tier, start, size);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_scrub);

/**
 * svod_dev_tier_scrub_new() - zero every byte a new tier can hand out
 * @tier: a tier of svod_dev_tier_create(), not yet published
 *
 * Scrubbing at FREE keeps a range clean from one owner to the next, but a
 * tier's bytes start with whatever firmware, an ivshmem peer or root
 * (sysfs resource<n>) left in the BAR, and so does a reserved region or a
 * stretch outside every tier that a new declaration makes allocatable. So
 * each new tier zeroes its whole allocatable span (the tier minus its
 * reserved regions, which svod never touches) once, before anything can
 * reach it; from then on every free byte of a tier is zero. A kept tier is
 * not scrubbed again. The cost is one pass over the tier: about the time a
 * STAGE of its whole size takes (Documentation/svod.rst, "Scrubbing").
 *
 * @tier's io_sem is not taken: nothing reaches an unpublished tier, and
 * the caller keeps the BAR mapped (it holds the device bound).
 *
 * Context: process context; svod_decl_lock held; may sleep.
 */
void svod_dev_tier_scrub_new(struct svod_dev_tier *tier)
{
	const struct svod_tier_spec *spec = &tier->spec;
	/* The allocator accepted the tier: base + size does not wrap. */
	u64 at = spec->base, end = spec->base + spec->size, r_end;
	unsigned int i;

	lockdep_assert_held(&svod_decl_lock);
	/* Regions are sorted by base; they may overlap each other. */
	for (i = 0; i < spec->nr_reserved; i++) {
		const struct svod_range_region *r = &spec->reserved[i];

		if (r->base > at)
			svod_dev_tier_zero(tier, at, r->base - at);
		r_end = r->base + r->size;
		at = max(at, r_end);
	}
	if (end > at)
		svod_dev_tier_zero(tier, at, end - at);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_scrub_new);

/**
 * svod_dev_tier_trylock_retire() - stop a tier's allocations, unless busy
 * @tier: a tier of a device
 *
 * Never waits for a transfer: if one is in flight (or an allocation is
 * being released), @tier's io_sem is held and this fails at once. On
 * success, holds off new transfers and new allocations until
 * svod_dev_tier_mark_gone() or svod_dev_tier_unlock_retire().
 *
 * Context: process context; svod_decl_lock held (several tiers may be locked
 * at once under it); takes @tier's io_sem for write (trylock) and its lock.
 * Return: true if @tier is locked, false if a transfer holds it.
 */
bool svod_dev_tier_trylock_retire(struct svod_dev_tier *tier)
{
	lockdep_assert_held(&svod_decl_lock);
	if (!down_write_trylock(&tier->io_sem))
		return false;
	mutex_lock_nest_lock(&tier->lock, &svod_decl_lock);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_trylock_retire);

/* One more user of @tier's BAR in @count, unless the tier is retiring. */
static bool svod_dev_tier_enter(struct svod_dev_tier *tier, unsigned int *count)
{
	unsigned long irq;
	bool open;

	spin_lock_irqsave(&tier->async_lock, irq);
	open = !tier->async_closed;
	if (open)
		(*count)++;
	spin_unlock_irqrestore(&tier->async_lock, irq);
	return open;
}

/* One user of @tier's BAR fewer in @count; the last wakes the retirement. */
static void svod_dev_tier_exit(struct svod_dev_tier *tier, unsigned int *count)
{
	unsigned long irq;
	bool last;

	spin_lock_irqsave(&tier->async_lock, irq);
	--*count;
	last = !tier->async_active && !tier->importers && tier->async_closed;
	spin_unlock_irqrestore(&tier->async_lock, irq);
	if (last)
		wake_up_var(&tier->async_active);
}

/**
 * svod_dev_tier_async_enter() - start touching a tier's BAR, asynchronously
 * @tier: the tier
 *
 * For the asynchronous transfers (async.c), which must not sleep on a lock
 * that is held around a memory allocation: a spinlock and a count instead
 * of @tier's io_sem. Pair with svod_dev_tier_async_exit().
 *
 * Context: any; takes @tier's async_lock.
 * Return: true if the BAR stays mapped until svod_dev_tier_async_exit();
 * false once the tier is being retired (its device is going away).
 */
bool svod_dev_tier_async_enter(struct svod_dev_tier *tier)
{
	return svod_dev_tier_enter(tier, &tier->async_active);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_async_enter);

/**
 * svod_dev_tier_async_exit() - stop touching a tier's BAR
 * @tier: the tier, entered with svod_dev_tier_async_enter()
 *
 * Context: any; takes @tier's async_lock.
 */
void svod_dev_tier_async_exit(struct svod_dev_tier *tier)
{
	svod_dev_tier_exit(tier, &tier->async_active);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_async_exit);

/**
 * svod_dev_tier_importer_get() - let a kernel importer reach the tier's BAR
 * @tier: the tier
 *
 * A dma-buf importer's vmap (dmabuf.c) lasts until the importer lets go,
 * which svod cannot hurry: retiring the tier waits for it (see
 * svod_dev_tier_async_close()). An attachment holds the tier only while it
 * attaches: retiring revokes its mappings instead of waiting
 * (svod_dev_tier_revoke_dmabufs()). Pair with svod_dev_tier_importer_put().
 *
 * Context: any; takes @tier's async_lock.
 * Return: true if the BAR stays mapped, and @tier's device bound, until
 * svod_dev_tier_importer_put(); false once the tier is being retired.
 */
bool svod_dev_tier_importer_get(struct svod_dev_tier *tier)
{
	return svod_dev_tier_enter(tier, &tier->importers);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_importer_get);

/**
 * svod_dev_tier_importer_put() - an importer let go of the tier's BAR
 * @tier: the tier, entered with svod_dev_tier_importer_get()
 *
 * Context: any; takes @tier's async_lock.
 */
void svod_dev_tier_importer_put(struct svod_dev_tier *tier)
{
	svod_dev_tier_exit(tier, &tier->importers);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_importer_put);

/**
 * svod_dev_tier_dmabuf_add() - count a new dma-buf among the tier's
 * @tier: the tier of the dma-buf's allocation
 * @td: the dma-buf's record, not on any list
 *
 * Context: process context; takes @tier's dmabuf_lock.
 * Return: 0; -ENODEV once the tier's dma-bufs were revoked (it is retiring).
 */
int svod_dev_tier_dmabuf_add(struct svod_dev_tier *tier, struct svod_tier_dmabuf *td)
{
	int ret = 0;

	mutex_lock(&tier->dmabuf_lock);
	if (tier->dmabufs_revoked)
		ret = -ENODEV;
	else
		list_add_tail(&td->link, &tier->dmabufs);
	mutex_unlock(&tier->dmabuf_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_dmabuf_add);

/**
 * svod_dev_tier_dmabuf_del() - a dma-buf of the tier is released
 * @tier: the tier
 * @td: the dma-buf's record, added or with an empty @td->link
 *
 * Context: process context; takes @tier's dmabuf_lock.
 */
void svod_dev_tier_dmabuf_del(struct svod_dev_tier *tier, struct svod_tier_dmabuf *td)
{
	mutex_lock(&tier->dmabuf_lock);
	list_del_init(&td->link);
	mutex_unlock(&tier->dmabuf_lock);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_dmabuf_del);

/**
 * svod_dev_tier_revoke_dmabufs() - revoke every dma-buf of a retiring tier
 * @tier: the tier
 *
 * As vfio's BAR exporter does: each dma-buf is marked revoked under its
 * reservation lock and its importers are told with dma_buf_move_notify();
 * from then on a map gives -ENODEV (dmabuf.c). An importer must stop using
 * its mapping when told and unmap it; nothing here waits for that, and no
 * dma-buf of the tier is made afterwards. A dma-buf being released (its
 * file's last reference gone) is skipped: it has no importer left.
 *
 * Context: process context; no svod lock held; takes @tier's dmabuf_lock,
 * then each dma-buf's reservation lock.
 */
void svod_dev_tier_revoke_dmabufs(struct svod_dev_tier *tier)
{
	struct svod_tier_dmabuf *td;

	mutex_lock(&tier->dmabuf_lock);
	tier->dmabufs_revoked = true;
	list_for_each_entry(td, &tier->dmabufs, link) {
		if (!get_file_rcu(td->dmabuf->file))
			continue;
		dma_resv_lock(td->dmabuf->resv, NULL);
		/* svod_dmabuf_attach() reads it unlocked. */
		WRITE_ONCE(td->revoked, true);
		dma_buf_move_notify(td->dmabuf);
		dma_resv_unlock(td->dmabuf->resv);
		/* Deferred to task work or a worker: the release never runs here. */
		fput(td->dmabuf->file);
	}
	mutex_unlock(&tier->dmabuf_lock);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_revoke_dmabufs);

/* Transfers and importers still on @tier's BAR; @importers: the latter. */
static unsigned int svod_dev_tier_users(struct svod_dev_tier *tier,
					unsigned int *importers)
{
	unsigned long irq;
	unsigned int users;

	spin_lock_irqsave(&tier->async_lock, irq);
	users = tier->async_active + tier->importers;
	*importers = tier->importers;
	spin_unlock_irqrestore(&tier->async_lock, irq);
	return users;
}

/*
 * No asynchronous transfer enters @tier from now on and no importer
 * reaches it; waits for those inside. Transfers stop at their next chunk
 * (async.c checks between chunks); an importer's vmap lasts until the
 * importer lets go (a V4L2 queue, until its buffers are freed),
 * so this says once that it waits, and wakes every 10 s, as vfio's unbind
 * does for its users, never counting as a hung task.
 */
static void svod_dev_tier_async_close(struct svod_dev_tier *tier)
{
	unsigned long irq;
	unsigned int importers;
	long timeout = 0;
	bool said = false;

	spin_lock_irqsave(&tier->async_lock, irq);
	tier->async_closed = true;
	spin_unlock_irqrestore(&tier->async_lock, irq);
	while (!wait_var_event_timeout(&tier->async_active,
				       !svod_dev_tier_users(tier, &importers), timeout)) {
		timeout = 10 * HZ;
		if (importers && !said) {
			pr_info("svod %s: tier %s: retiring it waits for %u kernel importer%s of its dma-bufs to let go\n",
				tier->device, tier->spec.name, importers,
				importers == 1 ? "" : "s");
			said = true;
		}
	}
}

/**
 * svod_dev_tier_retire_unbound() - retire a tier of a device being unbound
 * @tier: a tier detached from its device (svod_dev_unregister())
 *
 * Revokes the dma-bufs of @tier's allocations (svod_dev_tier_revoke_dmabufs(),
 * no wait for their importers' attachments), stops the asynchronous
 * transfers on @tier (each at its next chunk; those queued fail with -ENODEV
 * without touching the BAR) and waits for them and for kernel importers'
 * vmaps (svod_dev_tier_async_close()), waits for the
 * synchronous ones in flight (io_sem for write), marks it gone
 * (so no allocation is added to its live list any more), then, holding
 * io_sem alone (no allocation leaves the list meanwhile: releases and
 * ALLOC's undo take io_sem for read), revokes every mapping of its live
 * allocations and zeroes their ranges: their owners can no longer free them while the BAR is there.
 * @tier's lock is not held across the zeroing, so QUERY, sysfs, debugfs and
 * fdinfo never wait for it. Only the device's unbind waits like this, and it
 * holds no module-wide lock meanwhile.
 *
 * Context: process context; no svod lock held; takes @tier's dmabuf_lock,
 * its io_sem for write and its lock.
 */
void svod_dev_tier_retire_unbound(struct svod_dev_tier *tier)
{
	struct svod_allocation *alloc;

	lockdep_assert_not_held(&svod_decl_lock);
	svod_dev_tier_revoke_dmabufs(tier);
	svod_dev_tier_async_close(tier);
	down_write(&tier->io_sem);
	mutex_lock(&tier->lock);
	WRITE_ONCE(tier->gone, true);
	mutex_unlock(&tier->lock);

	list_for_each_entry(alloc, &tier->live, tier_link) {
		svod_mmap_revoke_all(alloc);
		svod_dev_tier_scrub(tier, svod_allocation_start(alloc),
				    svod_allocation_size(alloc));
	}
	tier->sdev = NULL;
	up_write(&tier->io_sem);
}

/**
 * svod_dev_tier_unlock_retire() - give up retiring a tier
 * @tier: a tier locked by svod_dev_tier_trylock_retire()
 *
 * Context: process context; releases @tier's locks.
 */
void svod_dev_tier_unlock_retire(struct svod_dev_tier *tier)
{
	mutex_unlock(&tier->lock);
	up_write(&tier->io_sem);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_tier_unlock_retire);

/**
 * svod_dev_tier_mark_gone() - retire a tier and unlock it
 * @tier: a tier locked by svod_dev_tier_trylock_retire()
 *
 * From here on nothing touches the tier's BAR: calls on it fail with
 * -ENODEV. The tier is freed when its last reference goes.
 *
 * Context: process context; releases @tier's locks.
 */
void svod_dev_tier_mark_gone(struct svod_dev_tier *tier)
{
	lockdep_assert_held_write(&tier->io_sem);
	lockdep_assert_held(&tier->lock);

	/* Unused, so no asynchronous transfer is inside: no wait. */
	svod_dev_tier_async_close(tier);
	WRITE_ONCE(tier->gone, true);
	tier->sdev = NULL;
	svod_dev_tier_unlock_retire(tier);
}
