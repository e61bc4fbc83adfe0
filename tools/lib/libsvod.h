/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * libsvod: a thin C library over the ioctls of /dev/svod.
 *
 * Every call returns 0 (or a count) on success and -errno on failure; errno
 * itself is left as the system call set it. The library keeps no state: the
 * caller owns the file descriptor and passes it to every call. Handles are
 * valid only in the open file that issued them (and in every process that
 * shares that open file through fork() or SCM_RIGHTS), never in another,
 * however many files were opened since (Documentation/uapi.rst "Handles").
 * A handle is opaque; svod_alloc() also fills the struct's id and
 * generation (the handle's slot, and which use of it this is).
 *
 * Besides the ioctls, the library declares a bound device's tiers through
 * its configfs directory (SVOD_CONFIGFS/<bdf>/: mkdir, rmdir, one value per
 * file, then commit) and reads them back. For people it keeps one text
 * format, one tier per line (or per ';'):
 *   <name> bar=<n> offset=0x.. size=0x.. [base=0x..] [align=<n>] [reserved=0xB+0xS,...]
 * (base defaults to 0, align to 64; reserved regions are device addresses;
 * numbers are svod_parse_size()'s). This library holds the only parser of
 * that format.
 */
#ifndef LIBSVOD_H
#define LIBSVOD_H

#include <stddef.h>
#include <stdint.h>
#include <linux/svod.h>

#define SVOD_DEV_PATH		"/dev/svod"
#define SVOD_SYSFS_DRIVER	"/sys/bus/pci/drivers/svod"
#define SVOD_SYSFS_DEVICES	"/sys/bus/pci/devices"
#define SVOD_SYSFS_PARAMS	"/sys/module/svod/parameters"
#define SVOD_CONFIGFS		"/sys/kernel/config/svod"

#ifdef __cplusplus
extern "C" {
#endif

/* The driver's default alignment when a declaration gives none. */
#define SVOD_DECL_DEFAULT_ALIGN	64

/* A tier's access when a declaration gives none: owner 0, group 0, 0666. */
#define SVOD_DECL_DEFAULT_MODE	0666

/* Reserved regions one declared tier may have (the driver's limit, not ABI). */
#define SVOD_MAX_RESERVED	8

/* Longest declaration line the library formats or parses. */
#define SVOD_DECL_LINE_MAX	512

/* Tiers a device may have (the driver's limit). */
#define SVOD_DECL_MAX_TIERS	8

int svod_open(void);
int svod_open_path(const char *path);
int svod_close(int fd);
int svod_ioctl(int fd, unsigned long cmd, void *arg);

int svod_query(int fd, struct svod_query *q);
int svod_query_tiers(int fd, struct svod_tier_info *tiers, uint32_t cap,
		     uint32_t *abi_version);
int svod_query_all(int fd, struct svod_tier_info **tiers, uint32_t *nr);
int svod_query_full(int fd, struct svod_tier_info **tiers, uint32_t *nr,
		    struct svod_region **regions, uint32_t *nr_regions);
int svod_tier_regions(int fd, uint32_t id, struct svod_region *out,
		      uint32_t cap);
int svod_tier_by_name(int fd, const char *name, struct svod_tier_info *out);
int svod_tier_by_id(int fd, uint32_t id, struct svod_tier_info *out);
int svod_tier_by_device(int fd, const char *bdf, struct svod_tier_info *out);

int svod_alloc(int fd, uint32_t tier, uint64_t size, uint64_t align,
	       struct svod_alloc *out);
int svod_alloc_flags(int fd, uint32_t tier, uint64_t size, uint64_t align,
		     uint32_t flags, struct svod_alloc *out);
int svod_free(int fd, uint64_t handle);
int svod_resolve(int fd, uint64_t handle, struct svod_resolve *out);

/*
 * Sharing (Documentation/uapi.rst, "Sharing"): svod_export() makes a
 * dma-buf fd of a mappable allocation, to pass to another process (fork,
 * SCM_RIGHTS); svod_import() there gives a handle of that process's own
 * open file for the same bytes, read-only unless the dma-buf was exported
 * with SVOD_EXPORT_WRITE. The dma-buf fd can also be mmap()ed itself.
 */
int svod_export(int fd, uint64_t handle, uint32_t flags, int *dmabuf_fd, uint64_t *size);
int svod_import(int fd, int dmabuf_fd, struct svod_import *out);
int svod_stage(int fd, uint64_t handle, uint64_t offset, const void *buf,
	       uint64_t length, uint32_t flags, uint64_t *done);
int svod_read(int fd, uint64_t handle, uint64_t offset, void *buf,
	      uint64_t length, uint32_t flags, uint64_t *done);
int svod_stage_interruptible(int fd, uint64_t handle, uint64_t offset, const void *buf,
			     uint64_t length, uint32_t flags, uint64_t *done);
int svod_read_interruptible(int fd, uint64_t handle, uint64_t offset, void *buf,
			    uint64_t length, uint32_t flags, uint64_t *done);

/*
 * Asynchronous transfers (Documentation/uapi.rst, "Asynchronous STAGE and
 * READ"): queued on the open file, run in order by the driver's worker;
 * svod_wait() or the optional sync_file fd says when each has ended.
 */
int svod_stage_async(int fd, uint64_t handle, uint64_t offset, const void *buf,
		     uint64_t length, uint32_t flags, uint64_t *seqno, int *fence_fd);
int svod_read_async(int fd, uint64_t handle, uint64_t offset, void *buf,
		    uint64_t length, uint32_t flags, uint64_t *seqno, int *fence_fd);
int svod_wait(int fd, uint64_t seqno, int timeout_ms, int *status, uint64_t *done);
/*
 * The same, started only after an in-fence (a sync_file fd: svod's or any
 * driver's) has signalled; -1 for none (Documentation/staging.rst,
 * "In-fences").
 */
int svod_stage_async_after(int fd, uint64_t handle, uint64_t offset, const void *buf,
			   uint64_t length, uint32_t flags, int in_fence_fd,
			   uint64_t *seqno, int *fence_fd);
int svod_read_async_after(int fd, uint64_t handle, uint64_t offset, void *buf,
			  uint64_t length, uint32_t flags, int in_fence_fd,
			  uint64_t *seqno, int *fence_fd);
/*
 * SVOD_IOCTL_BATCH (Documentation/uapi.rst): many STAGE and READ entries
 * queued as one asynchronous transfer, one timeline value, one fence.
 */
int svod_batch(int fd, const struct svod_batch_entry *entries, uint32_t nr,
	       uint64_t *seqno, int *fence_fd, uint32_t *failed);
int svod_batch_after(int fd, const struct svod_batch_entry *entries, uint32_t nr,
		     int in_fence_fd, uint64_t *seqno, int *fence_fd, uint32_t *failed);

/*
 * SVOD_IOCTL_PLAN: the kernel's planners (TLSF, BEST). The search for a
 * plan with a lower peak is libsvodplan's svod_plan_solve() (libsvodplan.h),
 * which needs no device; it left this library with libsvod.so.2.
 */
int svod_plan(int fd, struct svod_plan *plan);

/*
 * Mappings (Documentation/uapi.rst, "Mapping an allocation"): allocate with
 * SVOD_ALLOC_MAPPABLE, then svod_map(). A mapping is MAP_SHARED,
 * write-combined and revoked when the allocation is freed (FREE, the last
 * close of the file, device removal): any later access raises SIGBUS, never
 * shows the range's next owner's bytes. It keeps the open file (and its
 * allocations) alive after close(fd), as every file mapping does. Forked
 * children share it (MADV_DONTFORK keeps it out); it cannot grow (mremap()
 * -EFAULT) nor become executable (mprotect() -EACCES); it may be shrunk,
 * moved or partly unmapped. It cannot be the buffer of svod_stage() or
 * svod_read() (-EFAULT).
 */
int svod_map_offset(int fd, uint64_t handle, uint64_t *offset, uint64_t *size);
int svod_map(int fd, uint64_t handle, void **addr, uint64_t *size);
int svod_unmap(void *addr, uint64_t size);

const char *svod_errno_name(int err);
const char *svod_strerror(int err);

/*
 * svod's one number grammar (Documentation/svod.rst, "Numbers"), the same
 * in configfs, this library, svodctl and Python's svod.parse_size():
 *   decimal (no leading zero) or 0x hex, optionally followed by K, M, G, T,
 *   P, E (either case) or KiB, MiB, GiB, TiB, PiB, EiB: powers of 1024.
 * So 4096, 0x1000, 4k and 4KiB are 4096; 010, 1MB, " 1", -1 are refused.
 */
int svod_parse_size(const char *text, uint64_t *val);
const char *svod_size_forms(void);

/**
 * struct svod_tier_decl - one tier of a device's declaration
 * @name: tier name, NUL-terminated
 * @bar: PCI BAR index
 * @offset: first byte of the tier inside the BAR
 * @size: bytes
 * @base: device-side address of the tier's first byte
 * @align: minimum alignment, a power of two
 * @nr_reserved: valid entries in @reserved
 * @reserved: reserved regions (device addresses), in the line's order (read
 *	back, live or declared: sorted by base, then size)
 * @has_access: @owner, @group and @mode say who may use the tier; 0 (as a
 *	zeroed struct has it) means the default, 0, 0 and 0666
 * @owner: user id of the initial user namespace
 * @group: group id of the initial user namespace
 * @mode: permission bits, 0 to 0777
 */
struct svod_tier_decl {
	char name[SVOD_NAME_LEN];
	uint32_t bar;
	uint64_t offset;
	uint64_t size;
	uint64_t base;
	uint64_t align;
	uint32_t nr_reserved;
	struct svod_region reserved[SVOD_MAX_RESERVED];
	uint32_t has_access;
	uint32_t owner;
	uint32_t group;
	uint32_t mode;
};

int svod_decl_parse(const char *line, struct svod_tier_decl *decl);
int svod_decl_parse_set(const char *text, struct svod_tier_decl *decls,
			unsigned int cap);
int svod_decl_format(const struct svod_tier_decl *decl, char *buf, size_t len);
/*
 * Declarations (Documentation/svod.rst, "Declaring tiers"): svod_decl_read()
 * and svod_tiers_read() give a bound device's live tiers;
 * svod_declared_read() what configfs declares for a device, bound or not;
 * svod_decl_write() and svod_tiers_write() declare (and apply at once, on a
 * bound device); svod_decl_status() says whether the device is bound and
 * how the last apply went; svod_undeclare() forgets a declaration.
 */
int svod_decl_read(const char *bdf, struct svod_tier_decl *decls, unsigned int cap);
int svod_decl_write(const char *bdf, const struct svod_tier_decl *decls,
		    unsigned int nr);
int svod_declared_read(const char *bdf, struct svod_tier_decl *decls, unsigned int cap);
int svod_decl_status(const char *bdf, char *last_apply, size_t len);
int svod_undeclare(const char *bdf);
int svod_tiers_read(const char *bdf, char *buf, size_t len);
int svod_tiers_write(const char *bdf, const char *text);
int svod_devices(char (*bdfs)[SVOD_NAME_LEN], unsigned int cap);

/*
 * Saved declarations (Documentation/svod.rst, "Saving declarations"): a
 * text of lines "<pci name> <tier>", the tier in the declaration format
 * above (or several, ';'-separated), or "<pci name>" alone for a device
 * declared with no tier; a device's lines together are its declaration;
 * blank lines and lines starting with '#' are skipped. `svodctl declare
 * --save` writes it from configfs, `svodctl restore` applies it.
 */

/**
 * struct svod_dev_decl - one device's declaration, as a saved file has it
 * @bdf: PCI name, as the kernel spells it ("0000:00:04.0")
 * @nr: entries in @tiers
 * @tiers: its tiers, in the file's order
 * @line: the line that first named the device
 */
struct svod_dev_decl {
	char bdf[SVOD_NAME_LEN];
	unsigned int nr;
	struct svod_tier_decl tiers[SVOD_DECL_MAX_TIERS];
	unsigned int line;
};

int svod_pci_name_valid(const char *name);
int svod_declared_devices(char (*bdfs)[SVOD_NAME_LEN], unsigned int cap);
int svod_decl_equal(const struct svod_tier_decl *a, unsigned int nr_a,
		    const struct svod_tier_decl *b, unsigned int nr_b);
int svod_decl_file_parse(const char *text, struct svod_dev_decl *devs, unsigned int cap,
			 unsigned int *line);
int svod_param_read(const char *name, uint64_t *val);
int svod_param_write(const char *name, uint64_t val);
int svod_driver_bind(const char *bdf, int bind);

#ifdef __cplusplus
}
#endif

#endif /* LIBSVOD_H */
