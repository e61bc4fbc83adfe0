// SPDX-License-Identifier: GPL-2.0
/*
 * svod bound devices: the list of devices, the checks of a declared tier set
 * against a device's BARs and the other devices' tier names, and the atomic
 * replacement of a device's tier set (a kept tier keeps its id and
 * allocations; a replaced one is retired, which needs it to be unused).
 * The values come from configfs.c; the tier objects are tier.c's.
 */
#include <linux/io.h>
#include <linux/pci.h>
#include <linux/string.h>

#include <kunit/visibility.h>

#include "dev.h"
#include "mmap.h"
#include "sysfs.h"
#include "tier.h"

/* Every bound device (struct svod_dev.node); protected by svod_decl_lock. */
static LIST_HEAD(svod_devices);

/*
 * Counts changes of the set of tiers userspace sees (publication, retirement,
 * a device's registration and unregistration): odd while one is under way.
 * Written under svod_decl_lock only (raw_write_seqcount_begin(): the write
 * sections sleep, readers never spin on them); QUERY reads it to take one
 * consistent snapshot without the lock (svod_tier_seq_read()).
 */
static seqcount_t svod_tier_seq = SEQCNT_ZERO(svod_tier_seq);

static void svod_tier_seq_begin(void)
{
	lockdep_assert_held(&svod_decl_lock);
	raw_write_seqcount_begin(&svod_tier_seq);
}

static void svod_tier_seq_end(void)
{
	lockdep_assert_held(&svod_decl_lock);
	raw_write_seqcount_end(&svod_tier_seq);
}

/**
 * svod_tier_seq_read() - start reading the tier set without svod_decl_lock
 *
 * Context: any context.
 * Return: a count for svod_tier_seq_changed(); odd if a change is under way
 * (the read then cannot be consistent: retry).
 */
unsigned int svod_tier_seq_read(void)
{
	return raw_read_seqcount(&svod_tier_seq);
}

/**
 * svod_tier_seq_changed() - did the tier set change since svod_tier_seq_read()?
 * @seq: what svod_tier_seq_read() returned
 *
 * Context: any context.
 * Return: true if @seq was odd or the set changed since (reads done between
 * the two calls may mix two sets).
 */
bool svod_tier_seq_changed(unsigned int seq)
{
	return (seq & 1) || read_seqcount_retry(&svod_tier_seq, seq);
}

static bool svod_ranges_overlap(u64 a, u64 a_len, u64 b, u64 b_len)
{
	return a < b + b_len && b < a + a_len;
}

static int svod_tier_spec_check_one(const struct svod_tier_spec *spec,
				    const u64 *bar_len, const char **why)
{
	u64 end;

	if (spec->bar >= PCI_STD_NUM_BARS || !bar_len[spec->bar]) {
		*why = "BAR is not a memory BAR of the device";
		return -EINVAL;
	}
	if (check_add_overflow(spec->offset, spec->size, &end) ||
	    end > bar_len[spec->bar]) {
		*why = "does not fit inside the BAR";
		return -ERANGE;
	}
	return 0;
}

/**
 * svod_tier_spec_check() - check a tier set against a device's BARs
 * @specs: the tiers
 * @nr: entries in @specs
 * @bar_len: length of each BAR of the device, 0 if it is not a memory BAR
 * @why: out: on failure, a static string saying why
 * @bad: out: on failure, index of the offending tier
 *
 * The allocator's constructor checks the rest (size, alignment, device
 * addresses, reserved regions) when the tier is set up.
 *
 * Context: any context.
 * Return: 0; -EINVAL for a BAR that is not a memory BAR or a name used twice;
 * -ERANGE if a tier does not fit inside its BAR; -EEXIST if two tiers overlap
 * inside a BAR.
 */
int svod_tier_spec_check(const struct svod_tier_spec *specs, unsigned int nr,
			 const u64 *bar_len, const char **why,
			 unsigned int *bad)
{
	unsigned int i, j;
	int ret;

	for (i = 0; i < nr; i++) {
		*bad = i;
		ret = svod_tier_spec_check_one(&specs[i], bar_len, why);
		if (ret)
			return ret;
		for (j = 0; j < i; j++) {
			if (!strcmp(specs[i].name, specs[j].name)) {
				*why = "name declared twice";
				return -EINVAL;
			}
			if (specs[i].bar == specs[j].bar &&
			    svod_ranges_overlap(specs[i].offset, specs[i].size,
						specs[j].offset, specs[j].size)) {
				*why = "overlaps another tier of the device";
				return -EEXIST;
			}
		}
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_spec_check);

/**
 * svod_dev_bar_lengths() - the length of each memory BAR of a device
 * @sdev: the device
 * @bar_len: out: PCI_STD_NUM_BARS lengths, 0 for a BAR that is not memory
 *
 * Context: any context.
 */
void svod_dev_bar_lengths(const struct svod_dev *sdev, u64 *bar_len)
{
	unsigned int bar;

	for (bar = 0; bar < PCI_STD_NUM_BARS; bar++)
		bar_len[bar] = pci_resource_flags(sdev->pdev, bar) & IORESOURCE_MEM ?
			       pci_resource_len(sdev->pdev, bar) : 0;
}

/* Maps a BAR write-combined, once, for the staging engines and scrubbing. */
static int svod_dev_bar_map(struct svod_dev *sdev, unsigned int bar)
{
	struct pci_dev *pdev = sdev->pdev;
	struct svod_bar *b = &sdev->bars[bar];

	lockdep_assert_held(&svod_decl_lock);
	if (b->wc)
		return 0;
	b->wc = devm_ioremap_wc(&pdev->dev, pci_resource_start(pdev, bar),
				pci_resource_len(pdev, bar));
	if (!b->wc)
		return -ENOMEM;
	b->dev = &pdev->dev;
	b->phys = pci_resource_start(pdev, bar);
	b->len = pci_resource_len(pdev, bar);
	return 0;
}

static bool svod_tier_name_taken(const struct svod_dev *self, const char *name)
{
	const struct svod_dev *sdev;
	const struct svod_dev_tier *tier;

	lockdep_assert_held(&svod_decl_lock);
	list_for_each_entry(sdev, &svod_devices, node) {
		if (sdev == self)
			continue;
		list_for_each_entry(tier, &sdev->tiers, dev_node) {
			if (!strcmp(tier->spec.name, name))
				return true;
		}
	}
	return false;
}

static bool svod_tier_in(const struct svod_dev_tier *tier,
			 struct svod_dev_tier * const *set, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (set[i] == tier)
			return true;
	}
	return false;
}

/*
 * Logs why a declaration is refused, "commit: <why>", and keeps the text in
 * @why (SVOD_DECL_WHY_LEN bytes, or NULL) for configfs's last_apply.
 */
static __printf(3, 4) void svod_dev_refuse(struct svod_dev *sdev, char *why,
					   const char *fmt, ...)
{
	char buf[SVOD_DECL_WHY_LEN];
	va_list args;

	va_start(args, fmt);
	vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	dev_err(&sdev->pdev->dev, "commit: %s\n", buf);
	if (why)
		strscpy(why, buf, SVOD_DECL_WHY_LEN);
}

/* svod_tier_spec_check() against @sdev's BARs, the refusal logged. */
static int svod_dev_check(struct svod_dev *sdev, const struct svod_tier_spec *specs,
			  unsigned int nr, const u64 *bar_len, char *why)
{
	const char *reason;
	unsigned int bad;
	int ret;

	ret = svod_tier_spec_check(specs, nr, bar_len, &reason, &bad);
	if (ret)
		svod_dev_refuse(sdev, why, "tier %s: %s", specs[bad].name, reason);
	return ret;
}

/*
 * A tier set being installed: @keep[i] is the current tier @specs[i]
 * leaves as it is, @fresh[i] the tier created for it otherwise.
 */
struct svod_dev_set {
	const struct svod_tier_spec *specs;
	unsigned int nr;
	struct svod_dev_tier *keep[SVOD_MAX_DEV_TIERS];
	struct svod_dev_tier *fresh[SVOD_MAX_DEV_TIERS];
	char *why;
};

/* Step 1: refuses names of other devices' tiers, finds the tiers kept. */
static int svod_dev_set_match(struct svod_dev *sdev, struct svod_dev_set *set)
{
	struct svod_dev_tier *tier;
	unsigned int i;

	for (i = 0; i < set->nr; i++) {
		if (svod_tier_name_taken(sdev, set->specs[i].name)) {
			svod_dev_refuse(sdev, set->why, "tier %s: name used by another device",
					set->specs[i].name);
			return -EEXIST;
		}
		list_for_each_entry(tier, &sdev->tiers, dev_node) {
			if (svod_tier_spec_equal(&tier->spec, &set->specs[i]))
				set->keep[i] = tier;
		}
	}
	return 0;
}

/*
 * Step 2: creates the new tiers, unpublished, with their sysfs devices (not
 * announced yet: a refusal after this step sends no uevent).
 */
static int svod_dev_set_create(struct svod_dev *sdev, struct svod_dev_set *set)
{
	struct svod_dev_tier *tier;
	unsigned int i;
	int ret;

	for (i = 0; i < set->nr; i++) {
		if (set->keep[i])
			continue;
		ret = svod_dev_bar_map(sdev, set->specs[i].bar);
		tier = ret ? ERR_PTR(ret) : svod_dev_tier_create(sdev, &set->specs[i]);
		if (!IS_ERR(tier)) {
			ret = svod_sysfs_tier_add(tier, &sdev->pdev->dev);
			if (ret) {
				svod_dev_tier_put(tier);
				tier = ERR_PTR(ret);
			}
		}
		if (IS_ERR(tier)) {
			const struct svod_tier_spec *spec = &set->specs[i];
			const char *why = NULL;

			if (PTR_ERR(tier) == -EINVAL)
				why = svod_range_refusal(spec->base, spec->size, spec->align,
							 spec->reserved, spec->nr_reserved);
			svod_dev_refuse(sdev, set->why, "tier %s: refused: %s (%ld)",
					spec->name, why ?: "could not be set up",
					PTR_ERR(tier));
			return PTR_ERR(tier);
		}
		set->fresh[i] = tier;
	}
	return 0;
}

/* Undoes step 2 after a refusal. */
static void svod_dev_set_put_fresh(struct svod_dev_set *set)
{
	unsigned int i;

	for (i = 0; i < set->nr; i++) {
		if (!set->fresh[i])
			continue;
		svod_sysfs_tier_del(set->fresh[i]);
		svod_dev_tier_put(set->fresh[i]);
	}
}

/* Unlocks the tiers of @set's step 3 that were locked, up to @stop. */
static void svod_dev_set_unlock_going(struct svod_dev *sdev,
				      struct svod_dev_set *set,
				      struct svod_dev_tier *stop)
{
	struct svod_dev_tier *tier;

	list_for_each_entry(tier, &sdev->tiers, dev_node) {
		if (tier == stop)
			break;
		if (!svod_tier_in(tier, set->keep, set->nr))
			svod_dev_tier_unlock_retire(tier);
	}
}

/*
 * Step 3: locks every tier that goes, so none gains an allocation meanwhile;
 * refuses at once (unlocking them again) if one has live allocations or a
 * transfer in flight: a declaration never waits for a transfer.
 */
static int svod_dev_set_lock_going(struct svod_dev *sdev, struct svod_dev_set *set)
{
	struct svod_dev_tier *tier, *busy = NULL;

	list_for_each_entry(tier, &sdev->tiers, dev_node) {
		if (svod_tier_in(tier, set->keep, set->nr))
			continue;
		if (!svod_dev_tier_trylock_retire(tier)) {
			svod_dev_refuse(sdev, set->why, "tier %s: a transfer is in flight",
					tier->spec.name);
			svod_dev_set_unlock_going(sdev, set, tier);
			return -EBUSY;
		}
		if (tier->core.nr_live && !busy)
			busy = tier;
	}
	if (!busy)
		return 0;

	svod_dev_refuse(sdev, set->why, "tier %s: has %u live allocations",
			busy->spec.name, busy->core.nr_live);
	svod_dev_set_unlock_going(sdev, set, NULL);
	return -EBUSY;
}

/*
 * Drops a gone tier from its device. Separate from svod_dev_tier_mark_gone():
 * a tier is freed here at the earliest, once no tier lock is held, as lockdep
 * tracks several nested tier locks as one.
 */
static void svod_dev_tier_drop(struct svod_dev_tier *tier)
{
	lockdep_assert_held(&svod_decl_lock);

	svod_sysfs_tier_del(tier);
	list_del_init(&tier->dev_node);
	svod_dev_tier_put(tier);
}

/*
 * Step 4: zeroes what the new tiers will hand out (svod_dev_tier_scrub_new()).
 * Only now, once the set can no longer be refused: a refused commit leaves
 * every byte of the BAR as it was, live allocations of a busy tier included.
 * The tiers that go are locked meanwhile, so their bytes are idle; calls on
 * them wait for the scrub, then fail with -ENODEV.
 */
static void svod_dev_set_scrub_fresh(struct svod_dev_set *set)
{
	unsigned int i;

	for (i = 0; i < set->nr; i++) {
		if (set->fresh[i])
			svod_dev_tier_scrub_new(set->fresh[i]);
	}
}

/* Step 5: retires the locked tiers, publishes the new ones, in set order. */
static void svod_dev_set_install(struct svod_dev *sdev, struct svod_dev_set *set)
{
	struct svod_dev_tier *tier, *tmp;
	unsigned int i;

	svod_tier_seq_begin();
	list_for_each_entry(tier, &sdev->tiers, dev_node) {
		if (!svod_tier_in(tier, set->keep, set->nr)) {
			WRITE_ONCE(tier->detached, true);
			svod_dev_tier_mark_gone(tier);
		}
	}
	list_for_each_entry_safe(tier, tmp, &sdev->tiers, dev_node) {
		if (!svod_tier_in(tier, set->keep, set->nr))
			svod_dev_tier_drop(tier);
	}
	for (i = 0; i < set->nr; i++) {
		tier = set->keep[i] ? set->keep[i] : set->fresh[i];
		if (set->fresh[i])
			svod_dev_tier_publish(tier);
		else
			svod_dev_tier_set_access(tier, &set->specs[i].access);
		list_move_tail(&tier->dev_node, &sdev->tiers);
	}
	svod_tier_seq_end();
	/* The retired tiers' "remove" uevents went first, in svod_dev_tier_drop(). */
	for (i = 0; i < set->nr; i++) {
		if (set->fresh[i])
			svod_sysfs_tier_announce(set->fresh[i]);
	}
}

static int svod_dev_set_tiers_locked(struct svod_dev *sdev,
				     const struct svod_tier_spec *specs,
				     unsigned int nr, char *why)
{
	struct svod_dev_set *set;
	int ret;

	lockdep_assert_held(&svod_decl_lock);
	if (WARN_ON(nr > SVOD_MAX_DEV_TIERS))
		return -EINVAL;
	set = kzalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	set->specs = specs;
	set->nr = nr;
	set->why = why;

	ret = svod_dev_set_match(sdev, set);
	if (!ret)
		ret = svod_dev_set_create(sdev, set);
	if (!ret)
		ret = svod_dev_set_lock_going(sdev, set);
	if (ret) {
		svod_dev_set_put_fresh(set);
	} else {
		svod_dev_set_scrub_fresh(set);
		svod_dev_set_install(sdev, set);
	}
	kfree(set);
	return ret;
}

/**
 * svod_dev_set_tiers() - atomically replace a device's tier set
 * @sdev: the device
 * @specs: the new set (reserved regions sorted), checked here by
 *	svod_tier_spec_check()
 * @nr: entries in @specs, at most SVOD_MAX_DEV_TIERS
 * @why: out: on a refusal, the reason logged (SVOD_DECL_WHY_LEN bytes,
 *	NUL-terminated); may be NULL
 *
 * A tier whose declaration is unchanged stays as it is (same id, same
 * allocations). Every other current tier is retired, which needs it to have
 * no live allocation and no transfer in flight. Each new tier is zeroed
 * (minus its reserved regions) before it is published, once the set is
 * accepted: a pass over the new tiers' bytes under svod_decl_lock. Each
 * refusal logs one dev_err line saying why (copied to @why) and zeroes
 * nothing. Never waits for a transfer, on this device or another: a busy
 * tier is refused at once.
 *
 * Context: process context; takes svod_decl_lock and the retired tiers' locks.
 * Return: 0; an errno of svod_tier_spec_check(); -EEXIST if a name is used by
 * another device's tier; -EBUSY if a tier that would be replaced or removed
 * has live allocations or a transfer in flight; -ENOMEM; -EINVAL if the
 * allocator refuses a tier.
 * The set is unchanged on failure.
 */
int svod_dev_set_tiers(struct svod_dev *sdev, const struct svod_tier_spec *specs,
		       unsigned int nr, char *why)
{
	u64 bar_len[PCI_STD_NUM_BARS];
	int ret;

	svod_dev_bar_lengths(sdev, bar_len);
	ret = svod_dev_check(sdev, specs, nr, bar_len, why);
	if (ret)
		return ret;

	mutex_lock(&svod_decl_lock);
	ret = svod_dev_set_tiers_locked(sdev, specs, nr, why);
	mutex_unlock(&svod_decl_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_set_tiers);

/**
 * svod_dev_get_specs() - the declarations of a device's current tiers
 * @sdev: the device
 * @specs: out: up to @max declarations, in set order
 * @max: entries @specs holds
 *
 * Context: process context; takes svod_decl_lock.
 * Return: the number of tiers (at most SVOD_MAX_DEV_TIERS).
 */
int svod_dev_get_specs(struct svod_dev *sdev, struct svod_tier_spec *specs,
		       unsigned int max)
{
	const struct svod_dev_tier *tier;
	unsigned int n = 0;

	mutex_lock(&svod_decl_lock);
	list_for_each_entry(tier, &sdev->tiers, dev_node) {
		if (n < max)
			specs[n] = tier->spec;
		n++;
	}
	mutex_unlock(&svod_decl_lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_get_specs);

/**
 * svod_dev_register() - add a device with its declared tiers, or its default
 * @sdev: the device, bound to its PCI device (the parent of its tiers' devices)
 * @specs: the administrator's declaration (reserved regions sorted), checked
 *	here; NULL when there is none
 * @nr: entries in @specs; 0 for the default tier
 * @refused: out, may be NULL: 0 if @specs was applied (or @nr is 0), else
 *	the errno svod_dev_set_tiers() would give, with its reason in @why
 * @why: out, may be NULL: SVOD_DECL_WHY_LEN bytes
 *
 * The device starts with @specs' tiers if they can be applied, so nothing
 * sees a default tier come and go. Otherwise (or without @specs) it gets the
 * default tier: the whole of BAR 2 (device base 0, align 64) named "bar2",
 * or "bar2-<pci name with ':' as '-'>" if another device already has a
 * "bar2". A device without a memory BAR 2 then starts with no tier. Either
 * way its tiers are zeroed (minus reserved regions) before they are
 * published, as by svod_dev_set_tiers(): whatever the BAR held before the
 * bind never reaches an owner.
 *
 * Context: process context; takes svod_decl_lock.
 * Return: 0, or an errno of svod_dev_set_tiers() for the default tier; the
 * device is not added on failure.
 */
int svod_dev_register(struct svod_dev *sdev, const struct svod_tier_spec *specs,
		      unsigned int nr, int *refused, char *why)
{
	struct svod_tier_spec spec = {
		.bar = SVOD_DEFAULT_BAR,
		.align = SVOD_DEFAULT_ALIGN,
		.access.mode = SVOD_TIER_DEFAULT_MODE,
	};
	u64 bar_len[PCI_STD_NUM_BARS];
	int ret = 0;

	svod_dev_bar_lengths(sdev, bar_len);
	spec.size = bar_len[SVOD_DEFAULT_BAR];
	if (nr)
		ret = svod_dev_check(sdev, specs, nr, bar_len, why);

	mutex_lock(&svod_decl_lock);
	svod_tier_seq_begin();
	list_add_tail(&sdev->node, &svod_devices);
	svod_tier_seq_end();
	if (nr && !ret)
		ret = svod_dev_set_tiers_locked(sdev, specs, nr, why);
	if (refused)
		*refused = ret;
	ret = 0;
	if (!list_empty(&sdev->tiers) || !spec.size)
		goto unlock;

	strscpy(spec.name, "bar2", sizeof(spec.name));
	if (svod_tier_name_taken(sdev, spec.name)) {
		snprintf(spec.name, sizeof(spec.name), "bar2-%s",
			 pci_name(sdev->pdev));
		strreplace(spec.name, ':', '-');
	}
	ret = svod_dev_set_tiers_locked(sdev, &spec, 1, NULL);
	if (ret) {
		svod_tier_seq_begin();
		list_del(&sdev->node);
		svod_tier_seq_end();
	}
unlock:
	mutex_unlock(&svod_decl_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_register);

/**
 * svod_dev_unregister() - retire every tier of a device that is going away
 * @sdev: the device
 *
 * Detaches the device and its tiers under svod_decl_lock (QUERY reports them
 * gone from then on, declarations of other devices go on), then, without any
 * module-wide lock, retires each tier: waits for its transfers in flight
 * (the only wait for a transfer outside the transfer's own call: a long
 * STAGE on the device delays its unbind), revokes every mapping of its live
 * allocations (SIGBUS on access), zeroes their ranges (their owners can no
 * longer free them while the BAR is there) and marks it gone: from then on
 * calls on it fail with -ENODEV and nothing touches the BAR. Allocations
 * stay until their owners free them or close.
 *
 * Context: process context; takes svod_decl_lock, then each tier's locks
 * in turn without it.
 */
void svod_dev_unregister(struct svod_dev *sdev)
{
	struct svod_dev_tier *tier, *tmp;
	LIST_HEAD(going);

	mutex_lock(&svod_decl_lock);
	svod_tier_seq_begin();
	list_del(&sdev->node);
	list_splice_init(&sdev->tiers, &going);
	list_for_each_entry(tier, &going, dev_node)
		WRITE_ONCE(tier->detached, true);
	svod_tier_seq_end();
	mutex_unlock(&svod_decl_lock);

	list_for_each_entry_safe(tier, tmp, &going, dev_node) {
		svod_dev_tier_retire_unbound(tier);
		svod_sysfs_tier_del(tier);
		list_del_init(&tier->dev_node);
		svod_dev_tier_put(tier);
	}
}
EXPORT_SYMBOL_IF_KUNIT(svod_dev_unregister);
