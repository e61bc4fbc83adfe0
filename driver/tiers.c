// SPDX-License-Identifier: GPL-2.0
/*
 * svod tiers of bound devices: the declaration format (parse, check, print),
 * the tier objects userspace reaches by id, and the atomic replacement of a
 * device's tier set.
 *
 * A declaration is one tier per line (or per ';'):
 *
 *   <name> bar=<n> offset=<off> size=<bytes> [base=<addr>] [align=<n>]
 *          [reserved=<base>+<size>[,<base>+<size>...]]
 *
 * Numbers are decimal or 0x-prefixed hex; base defaults to 0 and align to
 * 64. Reserved regions are device addresses inside the tier.
 */
#include <kunit/visibility.h>
#include <linux/ctype.h>
#include <linux/export.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "svod.h"

/* Scrub in chunks so a large range never hogs the CPU. */
#define SVOD_SCRUB_CHUNK	SZ_1M

/* Every bound device (struct svod_dev.node); protected by svod_decl_lock. */
static LIST_HEAD(svod_devices);

/* Next tier id to try; ids are allocated cyclically so they are not reused soon. */
static u32 svod_next_tier_id;

enum svod_spec_key {
	SVOD_KEY_BAR,
	SVOD_KEY_OFFSET,
	SVOD_KEY_SIZE,
	SVOD_KEY_BASE,
	SVOD_KEY_ALIGN,
	SVOD_KEY_RESERVED,
	SVOD_NR_KEYS,
};

static const char * const svod_spec_keys[SVOD_NR_KEYS] = {
	[SVOD_KEY_BAR] = "bar",
	[SVOD_KEY_OFFSET] = "offset",
	[SVOD_KEY_SIZE] = "size",
	[SVOD_KEY_BASE] = "base",
	[SVOD_KEY_ALIGN] = "align",
	[SVOD_KEY_RESERVED] = "reserved",
};

#define SVOD_REQUIRED_KEYS \
	(BIT(SVOD_KEY_BAR) | BIT(SVOD_KEY_OFFSET) | BIT(SVOD_KEY_SIZE))

static bool svod_tier_name_valid(const char *name)
{
	size_t len = strlen(name);
	size_t i;

	if (!len || len >= SVOD_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		if (!isalnum(name[i]) && !strchr("_.-", name[i]))
			return false;
	}
	return true;
}

static int svod_parse_reserved(char *val, struct svod_tier_spec *spec)
{
	char *item;

	while ((item = strsep(&val, ",")) != NULL) {
		struct svod_range_region *r;
		char *plus = strchr(item, '+');

		if (!plus || spec->nr_reserved == SVOD_MAX_RESERVED)
			return -EINVAL;
		*plus = '\0';
		r = &spec->reserved[spec->nr_reserved];
		if (kstrtou64(item, 0, &r->base) ||
		    kstrtou64(plus + 1, 0, &r->size))
			return -EINVAL;
		spec->nr_reserved++;
	}
	return 0;
}

static int svod_parse_value(enum svod_spec_key key, char *val,
			    struct svod_tier_spec *spec)
{
	switch (key) {
	case SVOD_KEY_BAR:
		return kstrtouint(val, 0, &spec->bar);
	case SVOD_KEY_OFFSET:
		return kstrtou64(val, 0, &spec->offset);
	case SVOD_KEY_SIZE:
		return kstrtou64(val, 0, &spec->size);
	case SVOD_KEY_BASE:
		return kstrtou64(val, 0, &spec->base);
	case SVOD_KEY_ALIGN:
		return kstrtou64(val, 0, &spec->align);
	case SVOD_KEY_RESERVED:
		return svod_parse_reserved(val, spec);
	default:
		return -EINVAL;
	}
}

/* Parses one declaration line; returns 1 if it was blank. */
static int svod_parse_line(char *line, struct svod_tier_spec *spec)
{
	unsigned long seen = 0;
	bool named = false;
	char *tok;

	memset(spec, 0, sizeof(*spec));
	spec->align = SVOD_DEFAULT_ALIGN;

	while ((tok = strsep(&line, " \t")) != NULL) {
		enum svod_spec_key key;
		char *val;
		int ret;

		if (!*tok)
			continue;
		if (!named) {
			if (strscpy(spec->name, tok, sizeof(spec->name)) < 0 ||
			    !svod_tier_name_valid(spec->name))
				return -EINVAL;
			named = true;
			continue;
		}
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		for (key = 0; key < SVOD_NR_KEYS; key++) {
			if (!strcmp(tok, svod_spec_keys[key]))
				break;
		}
		if (key == SVOD_NR_KEYS || (seen & BIT(key)))
			return -EINVAL;
		seen |= BIT(key);
		ret = svod_parse_value(key, val, spec);
		if (ret)
			return -EINVAL;
	}
	if (!named)
		return 1;
	if ((seen & SVOD_REQUIRED_KEYS) != SVOD_REQUIRED_KEYS)
		return -EINVAL;
	return 0;
}

/**
 * svod_tier_spec_parse() - parse a tier declaration
 * @buf: NUL-terminated text, one tier per line or per ';'; modified
 * @specs: out: the tiers, in the order given
 * @max: entries @specs holds
 * @nr: out: tiers parsed (0 for blank text)
 *
 * Checks the syntax only; svod_tier_spec_check() checks the values.
 *
 * Context: any context.
 * Return: 0, or -EINVAL if the text is malformed or declares more than @max
 * tiers.
 */
int svod_tier_spec_parse(char *buf, struct svod_tier_spec *specs,
			 unsigned int max, unsigned int *nr)
{
	struct svod_tier_spec spec;
	char *line;

	*nr = 0;
	while ((line = strsep(&buf, "\n;")) != NULL) {
		int ret = svod_parse_line(line, &spec);

		if (ret < 0)
			return ret;
		if (ret > 0)
			continue;
		if (*nr == max)
			return -EINVAL;
		specs[(*nr)++] = spec;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_spec_parse);

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
 * svod_tier_spec_check() - check a parsed tier declaration against a device
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
 * svod_tier_spec_equal() - do two declarations describe the same tier?
 * @a: one declaration
 * @b: the other
 *
 * Context: any context.
 * Return: true if every field (reserved regions in order) is the same.
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

/**
 * svod_tier_spec_print() - print a declaration in the format that parses
 * @spec: the tier
 * @buf: a sysfs buffer (PAGE_SIZE bytes)
 * @at: offset in @buf to print at
 *
 * Context: any context.
 * Return: bytes printed (one line, newline included).
 */
int svod_tier_spec_print(const struct svod_tier_spec *spec, char *buf, int at)
{
	int len = at;
	unsigned int i;

	len += sysfs_emit_at(buf, len,
			     "%s bar=%u offset=0x%llx size=0x%llx base=0x%llx align=%llu",
			     spec->name, spec->bar, spec->offset, spec->size,
			     spec->base, spec->align);
	for (i = 0; i < spec->nr_reserved; i++)
		len += sysfs_emit_at(buf, len, "%s0x%llx+0x%llx",
				     i ? "," : " reserved=",
				     spec->reserved[i].base,
				     spec->reserved[i].size);
	len += sysfs_emit_at(buf, len, "\n");
	return len - at;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_spec_print);

static void svod_dev_tier_release(struct kref *ref)
{
	struct svod_dev_tier *tier = container_of(ref, struct svod_dev_tier, ref);

	xa_erase(&svod_tier_xa, tier->id);
	WARN_ON(!list_empty(&tier->live));
	svod_range_fini(&tier->core);
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
	void __iomem *p;

	lockdep_assert_held(&tier->io_sem);
	p = tier->sdev->bars[tier->spec.bar].wc + tier->spec.offset +
	    (start - tier->spec.base);
	while (size) {
		size_t chunk = min_t(u64, size, SVOD_SCRUB_CHUNK);

		memset_io(p, 0, chunk);
		p += chunk;
		size -= chunk;
		cond_resched();
	}
	/* Drain the write-combining buffers before the range is reused. */
	wmb();
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

/*
 * A new tier, its id reserved (lookups see nothing until it is published)
 * and its sysfs directory added.
 */
static struct svod_dev_tier *svod_dev_tier_create(struct svod_dev *sdev,
						  const struct svod_tier_spec *spec)
{
	struct svod_dev_tier *tier;
	int ret;

	ret = svod_dev_bar_map(sdev, spec->bar);
	if (ret)
		return ERR_PTR(ret);

	tier = kzalloc(sizeof(*tier), GFP_KERNEL_ACCOUNT);
	if (!tier)
		return ERR_PTR(-ENOMEM);
	kref_init(&tier->ref);
	tier->spec = *spec;
	strscpy(tier->device, pci_name(sdev->pdev), sizeof(tier->device));
	tier->sdev = sdev;
	INIT_LIST_HEAD(&tier->dev_node);
	init_rwsem(&tier->io_sem);
	mutex_init(&tier->lock);
	INIT_LIST_HEAD(&tier->live);

	ret = svod_range_init(&tier->core, spec->base, spec->size, spec->align,
			      spec->reserved, spec->nr_reserved,
			      GFP_KERNEL_ACCOUNT);
	if (ret)
		goto free_tier;

	ret = xa_alloc_cyclic(&svod_tier_xa, &tier->id, NULL, xa_limit_31b,
			      &svod_next_tier_id, GFP_KERNEL);
	if (ret < 0)
		goto fini_core;

	ret = svod_sysfs_tier_add(tier, sdev->kobj_dir);
	if (ret)
		goto release_id;
	return tier;

release_id:
	xa_erase(&svod_tier_xa, tier->id);
fini_core:
	svod_range_fini(&tier->core);
free_tier:
	mutex_destroy(&tier->lock);
	kfree(tier);
	return ERR_PTR(ret);
}

/*
 * Marks a tier gone and unlocks it; the caller took its io_sem for write and
 * its lock. From here on nothing touches the tier's BAR.
 */
static void svod_dev_tier_mark_gone(struct svod_dev_tier *tier)
{
	lockdep_assert_held_write(&tier->io_sem);
	lockdep_assert_held(&tier->lock);

	WRITE_ONCE(tier->gone, true);
	tier->sdev = NULL;
	mutex_unlock(&tier->lock);
	up_write(&tier->io_sem);
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

static int svod_dev_set_tiers_locked(struct svod_dev *sdev,
				     const struct svod_tier_spec *specs,
				     unsigned int nr)
{
	struct svod_dev_tier *keep[SVOD_MAX_DEV_TIERS] = {};
	struct svod_dev_tier *fresh[SVOD_MAX_DEV_TIERS] = {};
	struct device *dev = &sdev->pdev->dev;
	struct svod_dev_tier *tier, *tmp, *busy = NULL;
	unsigned int i;
	int ret;

	lockdep_assert_held(&svod_decl_lock);

	for (i = 0; i < nr; i++) {
		if (svod_tier_name_taken(sdev, specs[i].name)) {
			dev_err(dev, "svod_tiers: tier %s: name used by another device\n",
				specs[i].name);
			return -EEXIST;
		}
		list_for_each_entry(tier, &sdev->tiers, dev_node) {
			if (svod_tier_spec_equal(&tier->spec, &specs[i]))
				keep[i] = tier;
		}
	}

	for (i = 0; i < nr; i++) {
		if (keep[i])
			continue;
		fresh[i] = svod_dev_tier_create(sdev, &specs[i]);
		if (IS_ERR(fresh[i])) {
			ret = PTR_ERR(fresh[i]);
			fresh[i] = NULL;
			dev_err(dev, "svod_tiers: tier %s: refused: size 0, align not a power of two, addresses wrap, reserved region outside the tier, or no memory (%d)\n",
				specs[i].name, ret);
			goto put_fresh;
		}
	}

	/* Lock every tier that goes, so none gains an allocation meanwhile. */
	list_for_each_entry(tier, &sdev->tiers, dev_node) {
		if (svod_tier_in(tier, keep, nr))
			continue;
		down_write_nest_lock(&tier->io_sem, &svod_decl_lock);
		mutex_lock_nest_lock(&tier->lock, &svod_decl_lock);
		if (tier->core.nr_live && !busy)
			busy = tier;
	}
	if (busy) {
		dev_err(dev, "svod_tiers: tier %s: has %u live allocations\n",
			busy->spec.name, busy->core.nr_live);
		list_for_each_entry(tier, &sdev->tiers, dev_node) {
			if (svod_tier_in(tier, keep, nr))
				continue;
			mutex_unlock(&tier->lock);
			up_write(&tier->io_sem);
		}
		ret = -EBUSY;
		goto put_fresh;
	}

	list_for_each_entry(tier, &sdev->tiers, dev_node) {
		if (!svod_tier_in(tier, keep, nr))
			svod_dev_tier_mark_gone(tier);
	}
	list_for_each_entry_safe(tier, tmp, &sdev->tiers, dev_node) {
		if (!svod_tier_in(tier, keep, nr))
			svod_dev_tier_drop(tier);
	}
	for (i = 0; i < nr; i++) {
		tier = keep[i] ? keep[i] : fresh[i];
		/* Storing into a reserved index cannot fail. */
		if (fresh[i])
			xa_store(&svod_tier_xa, tier->id, tier, GFP_KERNEL);
		list_move_tail(&tier->dev_node, &sdev->tiers);
	}
	return 0;

put_fresh:
	for (i = 0; i < nr; i++) {
		if (!fresh[i])
			continue;
		svod_sysfs_tier_del(fresh[i]);
		svod_dev_tier_put(fresh[i]);
	}
	return ret;
}

static void svod_dev_bar_lengths(const struct svod_dev *sdev, u64 *bar_len)
{
	unsigned int bar;

	for (bar = 0; bar < PCI_STD_NUM_BARS; bar++)
		bar_len[bar] = pci_resource_flags(sdev->pdev, bar) & IORESOURCE_MEM ?
			       pci_resource_len(sdev->pdev, bar) : 0;
}

/**
 * svod_dev_set_tiers() - atomically replace a device's tier set
 * @sdev: the device
 * @specs: the new set, checked by svod_tier_spec_check() here
 * @nr: entries in @specs
 *
 * A tier whose declaration is unchanged stays as it is (same id, same
 * allocations). Every other current tier is retired, which needs it to have
 * no live allocation. Each refusal logs one dev_err line saying why.
 *
 * Context: process context; takes svod_decl_lock and the retired tiers' locks.
 * Return: 0; an errno of svod_tier_spec_check(); -EEXIST if a name is used by
 * another device's tier; -EBUSY if a tier that would be replaced or removed
 * has live allocations; -ENOMEM; -EINVAL if the allocator refuses a tier.
 * The set is unchanged on failure.
 */
int svod_dev_set_tiers(struct svod_dev *sdev, const struct svod_tier_spec *specs,
		       unsigned int nr)
{
	u64 bar_len[PCI_STD_NUM_BARS];
	const char *why;
	unsigned int bad;
	int ret;

	svod_dev_bar_lengths(sdev, bar_len);
	ret = svod_tier_spec_check(specs, nr, bar_len, &why, &bad);
	if (ret) {
		dev_err(&sdev->pdev->dev, "svod_tiers: tier %s: %s\n",
			specs[bad].name, why);
		return ret;
	}

	mutex_lock(&svod_decl_lock);
	ret = svod_dev_set_tiers_locked(sdev, specs, nr);
	mutex_unlock(&svod_decl_lock);
	return ret;
}

/**
 * svod_dev_register() - add a device and give it its default tier
 * @sdev: the device, its kobj_dir set up
 *
 * The default tier covers the whole of BAR 2 (device base 0, align 64) and is
 * named "bar2", or "bar2-<pci name with ':' as '-'>" if another device already
 * has a "bar2". A device without a memory BAR 2 starts with no tier.
 *
 * Context: process context; takes svod_decl_lock.
 * Return: 0, or an errno of svod_dev_set_tiers(); the device is not added
 * on failure.
 */
int svod_dev_register(struct svod_dev *sdev)
{
	struct svod_tier_spec spec = {
		.bar = SVOD_DEFAULT_BAR,
		.align = SVOD_DEFAULT_ALIGN,
	};
	u64 bar_len[PCI_STD_NUM_BARS];
	int ret = 0;

	svod_dev_bar_lengths(sdev, bar_len);
	spec.size = bar_len[SVOD_DEFAULT_BAR];

	mutex_lock(&svod_decl_lock);
	list_add_tail(&sdev->node, &svod_devices);
	if (!spec.size)
		goto unlock;

	strscpy(spec.name, "bar2", sizeof(spec.name));
	if (svod_tier_name_taken(sdev, spec.name)) {
		snprintf(spec.name, sizeof(spec.name), "bar2-%s",
			 pci_name(sdev->pdev));
		strreplace(spec.name, ':', '-');
	}
	ret = svod_dev_set_tiers_locked(sdev, &spec, 1);
	if (ret)
		list_del(&sdev->node);
unlock:
	mutex_unlock(&svod_decl_lock);
	return ret;
}

/**
 * svod_dev_unregister() - retire every tier of a device that is going away
 * @sdev: the device
 *
 * Waits for transfers in flight on each tier, zeroes the ranges of its live
 * allocations (their owners can no longer free them while the BAR is there),
 * then marks it gone: from then on calls on it fail with -ENODEV and nothing
 * touches the BAR. Allocations stay until their owners free them or close.
 *
 * Context: process context; takes svod_decl_lock and each tier's locks.
 */
void svod_dev_unregister(struct svod_dev *sdev)
{
	struct svod_dev_tier *tier, *tmp;
	struct svod_allocation *alloc;

	mutex_lock(&svod_decl_lock);
	list_del(&sdev->node);
	list_for_each_entry_safe(tier, tmp, &sdev->tiers, dev_node) {
		down_write(&tier->io_sem);
		mutex_lock(&tier->lock);
		list_for_each_entry(alloc, &tier->live, tier_link)
			svod_dev_tier_scrub(tier, svod_allocation_start(alloc),
					    svod_allocation_size(alloc));
		svod_dev_tier_mark_gone(tier);
		svod_dev_tier_drop(tier);
	}
	mutex_unlock(&svod_decl_lock);
}

/**
 * svod_dev_tiers_show() - print a device's tier set in declaration format
 * @sdev: the device
 * @buf: a sysfs buffer (PAGE_SIZE bytes)
 *
 * Context: process context; takes svod_decl_lock.
 * Return: bytes printed.
 */
int svod_dev_tiers_show(struct svod_dev *sdev, char *buf)
{
	const struct svod_dev_tier *tier;
	int len = 0;

	mutex_lock(&svod_decl_lock);
	list_for_each_entry(tier, &sdev->tiers, dev_node)
		len += svod_tier_spec_print(&tier->spec, buf, len);
	mutex_unlock(&svod_decl_lock);
	return len;
}
