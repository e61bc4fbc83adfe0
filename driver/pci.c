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

	pci_set_drvdata(pdev, sdev);
	ret = svod_configfs_dev_bind(sdev);
	if (ret)
		return ret;
	svod_pci_announce(sdev);
	return 0;
}

static void svod_pci_remove(struct pci_dev *pdev)
{
	struct svod_dev *sdev = pci_get_drvdata(pdev);

	/* First: no commit may race with the tiers' retirement. */
	svod_configfs_dev_unbind(sdev);
	svod_dev_unregister(sdev);
	/* Transfers still waiting for an in-fence on its tiers end now. */
	svod_async_tiers_retired();
}

static struct pci_driver svod_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = svod_pci_ids,
	.probe = svod_pci_probe,
	.remove = svod_pci_remove,
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
