/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface of svod_p2p_importer.ko (tools/testing/p2p_importer), the
 * test importer on behalf of QEMU's edu device, as t_p2p and t_iommu call
 * it: the same definitions as the module's own.
 */
#ifndef SVOD_HARNESS_P2P_IMPORTER_H
#define SVOD_HARNESS_P2P_IMPORTER_H

#include <stdint.h>
#include <sys/ioctl.h>

struct svod_p2p_req {
	int32_t fd;
	uint32_t op;
	uint64_t addr;
	uint64_t len;
	uint32_t nents;
	uint32_t contiguous;
	uint64_t offset;
	uint32_t length;
	uint32_t seed;
	uint32_t moves;
	uint32_t mapped;
};

enum {
	SVOD_P2P_STATIC, SVOD_P2P_HOLD, SVOD_P2P_RELEASE, SVOD_P2P_NOT_PCI, SVOD_P2P_WRITE,
	SVOD_P2P_WRONG, SVOD_P2P_PIN, SVOD_P2P_MAP, SVOD_P2P_STATE,
};

#define SVOD_P2P_IOCTL	_IOWR('S', 0x70, struct svod_p2p_req)
#define SVOD_P2P_CTL	"/sys/kernel/debug/svod_p2p_importer/ctl"

#endif
