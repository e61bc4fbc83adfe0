// SPDX-License-Identifier: GPL-2.0
/*
 * svod PCI driver: binds devices whose BARs hold memory tiers. QEMU's
 * ivshmem-plain is in the ID table; other devices are bound through new_id.
 */
#include <linux/module.h>
#include <linux/pci.h>

#include "async.h"
#include "configfs.h"
#include "dev.h"
#include "svod.h"
#include "tier.h"

#define PCI_DEVICE_ID_IVSHMEM	0x1110

static const struct pci_device_id svod_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, PCI_DEVICE_ID_IVSHMEM) },
	{ }
};
MODULE_DEVICE_TABLE(pci, svod_pci_ids);

/*
 * One line per bound device: its tiers with their names and sizes, e.g.
 * "svod 0000:00:04.0: bound: 1 tier: bar2 16777216 bytes (BAR 2)".
 */
static void svod_pci_announce(struct svod_dev *sdev)
{
	struct svod_dev_tier *tier;
	unsigned int nr = 0;
	char line[192];
	int len = 0;

	/* svod_decl_lock: the tier set is stable while it is listed. */
	mutex_lock(&svod_decl_lock);
	list_for_each_entry(tier, &sdev->tiers, dev_node) {
		nr++;
		if (len < (int)sizeof(line))
			len += scnprintf(line + len, sizeof(line) - len,
					 "%s %s %llu bytes (BAR %u)",
					 nr > 1 ? "," : "", tier->spec.name,
					 tier->spec.size, tier->spec.bar);
	}
	mutex_unlock(&svod_decl_lock);
	dev_info(&sdev->pdev->dev, "bound: %u tier%s:%s\n", nr,
		 nr == 1 ? "" : "s", nr ? line : " none (declare them in configfs)");
}

static int svod_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct svod_dev *sdev;
	int ret;

	sdev = devm_kzalloc(&pdev->dev, sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->pdev = pdev;
	INIT_LIST_HEAD(&sdev->tiers);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;

	/* Released by pcim when the device is unbound. */
	ret = pci_request_mem_regions(pdev, KBUILD_MODNAME);
	if (ret)
		return ret;

	/* What slot_reset restores after an error's reset. */
	pci_save_state(pdev);
	pci_set_drvdata(pdev, sdev);
	ret = svod_configfs_dev_bind(sdev);
	if (ret)
		return ret;
	svod_pci_announce(sdev);
	return 0;
}

/* Retires the device's tiers, as its unbind does. */
static void svod_pci_retire(struct svod_dev *sdev)
{
	/* First: no commit may race with the tiers' retirement. */
	svod_configfs_dev_unbind(sdev);
	svod_dev_unregister(sdev);
	/* Transfers still waiting for an in-fence on its tiers end now. */
	svod_async_tiers_retired();
}

/*
 * Takes the device out of service: its declaration is detached and its
 * tiers are retired exactly as on an unbind (svod_dev_unregister(): calls
 * on them fail with -ENODEV, mappings raise SIGBUS, asynchronous transfers
 * end with -ENODEV, importers are revoked, live ranges zeroed), while the
 * driver stays bound. Does nothing more to a device already out of service.
 */
static void svod_pci_quiesce(struct svod_dev *sdev, int state, const char *why)
{
	device_lock_assert(&sdev->pdev->dev);
	if (sdev->state != SVOD_DEV_LIVE) {
		if (state == SVOD_DEV_FAILED)
			WRITE_ONCE(sdev->state, state);
		return;
	}
	svod_pci_retire(sdev);
	WRITE_ONCE(sdev->state, state);
	dev_warn(&sdev->pdev->dev, "%s: out of service, its tiers retired\n", why);
}

/*
 * Back in service: new tiers from the declaration in configfs (or the
 * default), with new ids and zeroed, as on a bind; no handle made before
 * names them. A device that does not answer stays out of service.
 */
static void svod_pci_revive(struct svod_dev *sdev, const char *why)
{
	int ret = -ENODEV;

	device_lock_assert(&sdev->pdev->dev);
	if (pci_device_is_present(sdev->pdev))
		ret = svod_configfs_dev_bind(sdev);
	if (ret) {
		WRITE_ONCE(sdev->state, SVOD_DEV_FAILED);
		dev_err(&sdev->pdev->dev, "%s: stays out of service (%d); unbind and bind it to retry\n",
			why, ret);
		return;
	}
	WRITE_ONCE(sdev->state, SVOD_DEV_LIVE);
	dev_info(&sdev->pdev->dev, "%s: back in service\n", why);
	svod_pci_announce(sdev);
}

static void svod_pci_remove(struct pci_dev *pdev)
{
	struct svod_dev *sdev = pci_get_drvdata(pdev);

	if (sdev->state == SVOD_DEV_LIVE)
		svod_pci_retire(sdev);
}

/*
 * PCI error recovery (Documentation/PCI/pci-error-recovery.rst): every
 * error takes the device out of service; a permanent one for good, else
 * it asks for a reset and comes back in resume. The core calls these
 * under the device's lock.
 */
static pci_ers_result_t svod_pci_error_detected(struct pci_dev *pdev,
						pci_channel_state_t state)
{
	bool perm = state == pci_channel_io_perm_failure;

	svod_pci_quiesce(pci_get_drvdata(pdev), perm ? SVOD_DEV_FAILED : SVOD_DEV_ERROR,
			 perm ? "permanent PCI error" : "PCI error");
	return perm ? PCI_ERS_RESULT_DISCONNECT : PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t svod_pci_slot_reset(struct pci_dev *pdev)
{
	pci_restore_state(pdev);
	pci_save_state(pdev);
	return pci_device_is_present(pdev) ? PCI_ERS_RESULT_RECOVERED :
					     PCI_ERS_RESULT_DISCONNECT;
}

static void svod_pci_resume(struct pci_dev *pdev)
{
	struct svod_dev *sdev = pci_get_drvdata(pdev);

	if (sdev->state == SVOD_DEV_ERROR)
		svod_pci_revive(sdev, "PCI error recovered");
}

/*
 * A function or bus reset (sysfs "reset", or a reset of the bus the device
 * is on). An error's recovery resets the device with the device out of
 * service already: it comes back in resume, not here.
 */
static void svod_pci_reset_prepare(struct pci_dev *pdev)
{
	svod_pci_quiesce(pci_get_drvdata(pdev), SVOD_DEV_RESET, "reset");
}

static void svod_pci_reset_done(struct pci_dev *pdev)
{
	struct svod_dev *sdev = pci_get_drvdata(pdev);

	if (sdev->state == SVOD_DEV_RESET)
		svod_pci_revive(sdev, "reset done");
}

static const struct pci_error_handlers svod_pci_err_handlers = {
	.error_detected = svod_pci_error_detected,
	.slot_reset = svod_pci_slot_reset,
	.resume = svod_pci_resume,
	.reset_prepare = svod_pci_reset_prepare,
	.reset_done = svod_pci_reset_done,
};

static const char *const svod_dev_state_names[] = {
	[SVOD_DEV_LIVE] = "live",
	[SVOD_DEV_RESET] = "reset",
	[SVOD_DEV_ERROR] = "error",
	[SVOD_DEV_FAILED] = "failed",
};

/* /sys/bus/pci/devices/<bdf>/svod_state: one of svod_dev_state_names. */
static ssize_t svod_state_show(struct device *dev, struct device_attribute *attr,
			       char *buf)
{
	struct svod_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", svod_dev_state_names[READ_ONCE(sdev->state)]);
}
static DEVICE_ATTR_RO(svod_state);

static struct attribute *svod_pci_attrs[] = {
	&dev_attr_svod_state.attr,
	NULL
};
ATTRIBUTE_GROUPS(svod_pci);

static struct pci_driver svod_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = svod_pci_ids,
	.probe = svod_pci_probe,
	.remove = svod_pci_remove,
	.err_handler = &svod_pci_err_handlers,
	.dev_groups = svod_pci_groups,
};

/**
 * svod_pci_register() - register the PCI driver
 *
 * Context: process context (module init).
 * Return: 0 or an errno of pci_register_driver().
 */
int svod_pci_register(void)
{
	return pci_register_driver(&svod_pci_driver);
}

/**
 * svod_pci_unregister() - unregister the PCI driver, unbinding every device
 *
 * Context: process context (module exit).
 */
void svod_pci_unregister(void)
{
	pci_unregister_driver(&svod_pci_driver);
}
