/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by svod's guest harness programs: device and tier lookup,
 * the configfs tree of tier declarations, guard pages, a seeded PRNG, pipes, capabilities,
 * descriptors passed over Unix sockets.
 */
#ifndef SVOD_HARNESS_COMMON_H
#define SVOD_HARNESS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libsvod.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

int ht_open(void);
int ht_write_file(const char *path, const char *val);
int ht_fail_nth_quiet(bool page_alloc);
void ht_fail_nth_restore(bool page_alloc);
int ht_cfs_write(const char *bdf, const char *rel, const char *val);
int ht_cfs_read(const char *bdf, const char *rel, char *buf, size_t len);
int ht_cfs_mkdir(const char *bdf, const char *rel);
int ht_cfs_rmdir(const char *bdf, const char *rel);
int ht_undeclare_all(void);
long long ht_module_refcnt(void);
const char *ht_err(int ret);
int ht_first_tier(int fd, struct svod_tier_info *tier);
int ht_bar2_offset(const struct svod_tier_info *tier, uint64_t device_addr, uint64_t *off);
int ht_bar2_map(const struct svod_tier_info *tier, uint64_t device_addr, uint64_t len,
		volatile uint8_t **at, void **map, size_t *map_len);
uint64_t ht_engine_bytes(int fd, uint32_t id, int dma);
int ht_tier_usage(int fd, uint32_t id, uint64_t *free_bytes, uint32_t *nr_live);
int ht_wait_free(int fd, uint32_t id, uint64_t free_bytes, unsigned int ms);
int ht_bar_size(const char *bdf, unsigned int bar, uint64_t *size);
void *ht_guarded_page(size_t *page_size);
void ht_unguard_page(void *page, size_t page_size);
uint64_t ht_seed(const char *prog);
uint64_t ht_rand(uint64_t *state);
int ht_write_all(int fd, const void *buf, size_t len);
int ht_read_all(int fd, void *buf, size_t len);
int ht_drop_cap(unsigned int cap);
int ht_wait_exit(pid_t pid);
int ht_kmsg_open(void);
int ht_kmsg_find(int kfd, const char *needle);
int ht_unbind_waits_for_importer(const char *bdf, pid_t *pid);
int ht_unbind_while_importer_holds(const char *bdf, pid_t *pid);
void ht_fill_xorshift(uint8_t *p, size_t len, uint32_t seed);
int ht_pinned_pages(long long *out);
int64_t ht_fdinfo_value(pid_t pid, int fd, const char *key);
int ht_touch(volatile uint8_t *p, int write);
int ht_send_fd(int sock, int fd);
int ht_recv_fd(int sock);
int ht_open_without_dac_override(void);
int ht_read_line(const char *path, char *buf, size_t len);
int ht_edu_bdf(char *bdf, size_t len);
int ht_open_vgem(void);

#endif /* SVOD_HARNESS_COMMON_H */
