/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod ioctl dispatch (ioctl.c) and the handlers it calls. A handler gets
 * the kernel copy of its command's struct, zero-extended to the driver's
 * size, and fills its outputs in place; it checks its own flags and pads.
 */
#ifndef SVOD_IOCTL_H
#define SVOD_IOCTL_H

#include <linux/types.h>

struct file;
struct svod_file;

/*
 * The kernel copy of a command's struct has this many bytes; those past the
 * struct's own size are never copied out: a handler may keep there what its
 * unwind or commit needs.
 */
#define SVOD_IOCTL_MAX_SIZE	128

long svod_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

int svod_query_ioctl(struct svod_file *sf, void *data);
int svod_alloc_ioctl(struct svod_file *sf, void *data);
void svod_alloc_ioctl_unwind(struct svod_file *sf, void *data);
int svod_free_ioctl(struct svod_file *sf, void *data);
int svod_resolve_ioctl(struct svod_file *sf, void *data);
int svod_stage_ioctl(struct svod_file *sf, void *data);
int svod_read_ioctl(struct svod_file *sf, void *data);
int svod_xfer_ioctl_check(void *data, size_t usize);
int svod_batch_ioctl_check(void *data, size_t usize);
void svod_xfer_ioctl_unwind(struct svod_file *sf, void *data);
void svod_xfer_ioctl_commit(struct svod_file *sf, void *data);
int svod_plan_ioctl(struct svod_file *sf, void *data);
int svod_map_offset_ioctl(struct svod_file *sf, void *data);
int svod_wait_ioctl(struct svod_file *sf, void *data);
int svod_export_ioctl(struct svod_file *sf, void *data);
void svod_export_ioctl_unwind(struct svod_file *sf, void *data);
void svod_export_ioctl_commit(struct svod_file *sf, void *data);
int svod_import_ioctl(struct svod_file *sf, void *data);
void svod_import_ioctl_unwind(struct svod_file *sf, void *data);
int svod_batch_ioctl(struct svod_file *sf, void *data);
void svod_batch_ioctl_unwind(struct svod_file *sf, void *data);
void svod_batch_ioctl_commit(struct svod_file *sf, void *data);

#endif /* SVOD_IOCTL_H */
