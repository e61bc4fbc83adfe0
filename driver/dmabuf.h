/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod dma-bufs (dmabuf.c): what KUnit checks of them. EXPORT and IMPORT,
 * the ioctl handlers, are declared in ioctl.h with every other handler.
 */
#ifndef SVOD_DMABUF_H
#define SVOD_DMABUF_H

#include <linux/types.h>

struct dma_buf_ops;

int svod_dmabuf_nents(u64 size, unsigned int seg, unsigned int *nents);
unsigned int svod_dmabuf_own_pins(unsigned int pins, unsigned int maps, bool core_pins);
const struct dma_buf_ops *svod_dmabuf_ops(bool writable, u64 size);

#endif /* SVOD_DMABUF_H */
