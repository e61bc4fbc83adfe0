/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod bound devices: the device list, each device's tier set and its
 * atomic replacement, and the checks of a declaration against a device.
 */
#ifndef SVOD_DEV_H
#define SVOD_DEV_H

#include <linux/list.h>
#include <linux/pci.h>
#include <linux/seqlock.h>
#include <linux/types.h>

#include "stage.h"
#include "tier.h"

struct svod_cfs_dev;

/* Tiers one device may declare. */
#define SVOD_MAX_DEV_TIERS	8

/* Bytes of the reason svod_dev_set_tiers() gives for a refusal. */
#define SVOD_DECL_WHY_LEN	96

/* The default tier of a newly bound device. */
#define SVOD_DEFAULT_BAR	2
#define SVOD_DEFAULT_ALIGN	64

/**
 * struct svod_dev - one bound PCI device
 * @pdev: the device
 * @node: entry in the device list
 * @tiers: the device's current tiers (struct svod_dev_tier.dev_node)
 * @bars: the BARs tiers use, mapped write-combined (devm-managed) when the
 *	first tier in them is declared; .wc is NULL for the others
 * @cfs: the device's declaration in configfs, NULL without one
 * @cfs_node: entry in configfs.c's list of bound devices
 * @state: enum svod_dev_state; written by the PCI driver's callbacks, which
 *	run under the PCI device's lock, read locklessly (sysfs)
 *
 * Every member but @pdev, @cfs, @cfs_node and @state is protected by
 * svod_decl_lock; @cfs and @cfs_node by configfs.c's svod_cfs_lock.
 */
struct svod_dev {
	struct pci_dev *pdev;
	struct list_head node;
	struct list_head tiers;
	struct svod_bar bars[PCI_STD_NUM_BARS];
	struct svod_cfs_dev *cfs;
	struct list_head cfs_node;
	int state;
};

/**
 * enum svod_dev_state - whether a bound device's tiers are in service
 * @SVOD_DEV_LIVE: registered, its tiers in service
 * @SVOD_DEV_RESET: quiesced for a reset, from reset_prepare to reset_done
 * @SVOD_DEV_ERROR: quiesced by a PCI error, from error_detected to resume
 * @SVOD_DEV_FAILED: quiesced for good (a permanent error, or the device did
 *	not come back): no tiers until it is unbound and bound again
 *
 * Quiesced, the device is unregistered (svod_dev_unregister()): its tiers
 * are retired as on an unbind, and new ones come back when it is live again.
 */
enum svod_dev_state {
	SVOD_DEV_LIVE,
	SVOD_DEV_RESET,
	SVOD_DEV_ERROR,
	SVOD_DEV_FAILED,
};

int svod_tier_spec_check(const struct svod_tier_spec *specs, unsigned int nr,
			 const u64 *bar_len, const char **why,
			 unsigned int *bad);
void svod_dev_bar_lengths(const struct svod_dev *sdev, u64 *bar_len);
int svod_dev_set_tiers(struct svod_dev *sdev, const struct svod_tier_spec *specs,
		       unsigned int nr, char *why);
int svod_dev_get_specs(struct svod_dev *sdev, struct svod_tier_spec *specs,
		       unsigned int max);
int svod_dev_register(struct svod_dev *sdev, const struct svod_tier_spec *specs,
		      unsigned int nr, int *refused, char *why);
unsigned int svod_tier_seq_read(void);
bool svod_tier_seq_changed(unsigned int seq);
void svod_dev_unregister(struct svod_dev *sdev);

#endif /* SVOD_DEV_H */
