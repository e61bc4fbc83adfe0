// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by svod's guest harness programs. See common.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "drm_uapi.h"
#include "tap.h"

/**
 * ht_open() - open the svod device ($SVOD_DEV, default /dev/svod)
 *
 * SVOD_DEV=/dev/null runs a program without the driver: every ioctl fails,
 * which shows that each case reports a result (the count matches the plan).
 *
 * Context: any thread.
 * Return: a descriptor, or -errno.
 */
int ht_open(void)
{
	const char *path = getenv("SVOD_DEV");

	return svod_open_path(path ? path : SVOD_DEV_PATH);
}

/**
 * ht_write_file() - write a value to a file, as ``echo -n VAL >PATH`` would
 * @path: a sysfs, debugfs or configfs attribute, or any file
 * @val: the text, written in one write() (no newline added)
 *
 * Context: any thread.
 * Return: 0, -errno of open() or write(), or -EIO for a short write.
 */
int ht_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int ret;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	ret = n < 0 ? -errno : (size_t)n == strlen(val) ? 0 : -EIO;
	close(fd);
	return ret;
}

/* One debugfs fault attribute, e.g. "failslab/times": 0 or -errno. */
static int ht_fault_attr(const char *rel, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s", rel);
	return ht_write_file(path, val);
}

/* A fault capability's attribute @rel set to @val; the first error kept. */
static void ht_fault_set(int *ret, const char *rel, const char *val)
{
	int r = ht_fault_attr(rel, val);

	if (!*ret)
		*ret = r;
}

/**
 * ht_fail_nth_quiet() - fault injection through fail-nth only, silently
 * @page_alloc: fail_page_alloc too (every order and gfp), not only failslab
 *	and fail_usercopy (where the kernel has it)
 *
 * Probability 0, no task filter, no limit on times, verbose 0, and
 * sleeping allocations included: a point fires only when
 * /proc/thread-self/fail-nth counts down to it, and prints nothing.
 *
 * Context: root, debugfs mounted.
 * Return: 0, or the first -errno (-ENOENT where the kernel has no failslab
 * or, with @page_alloc, no fail_page_alloc).
 */
int ht_fail_nth_quiet(bool page_alloc)
{
	int ret = 0;

	ht_fault_set(&ret, "failslab/probability", "0");
	ht_fault_set(&ret, "failslab/verbose", "0");
	ht_fault_set(&ret, "failslab/ignore-gfp-wait", "N");
	ht_fault_set(&ret, "failslab/task-filter", "N");
	ht_fault_set(&ret, "failslab/times", "-1");
	if (!access("/sys/kernel/debug/fail_usercopy", F_OK)) {
		ht_fault_set(&ret, "fail_usercopy/probability", "0");
		ht_fault_set(&ret, "fail_usercopy/verbose", "0");
		ht_fault_set(&ret, "fail_usercopy/times", "-1");
	}
	if (page_alloc) {
		ht_fault_set(&ret, "fail_page_alloc/probability", "0");
		ht_fault_set(&ret, "fail_page_alloc/verbose", "0");
		ht_fault_set(&ret, "fail_page_alloc/ignore-gfp-wait", "N");
		ht_fault_set(&ret, "fail_page_alloc/ignore-gfp-highmem", "N");
		ht_fault_set(&ret, "fail_page_alloc/min-order", "0");
		ht_fault_set(&ret, "fail_page_alloc/task-filter", "N");
		ht_fault_set(&ret, "fail_page_alloc/times", "-1");
	}
	return ret;
}

/**
 * ht_fail_nth_restore() - the kernel's defaults back after ht_fail_nth_quiet()
 * @page_alloc: as given to ht_fail_nth_quiet()
 *
 * Context: root, debugfs mounted; an attribute that cannot be written is
 * left as it is (nothing to restore there).
 */
void ht_fail_nth_restore(bool page_alloc)
{
	if (page_alloc) {
		ht_fault_attr("fail_page_alloc/ignore-gfp-wait", "Y");
		ht_fault_attr("fail_page_alloc/ignore-gfp-highmem", "Y");
		ht_fault_attr("fail_page_alloc/min-order", "1");
		ht_fault_attr("fail_page_alloc/verbose", "2");
		ht_fault_attr("fail_page_alloc/times", "1");
	}
	ht_fault_attr("failslab/ignore-gfp-wait", "Y");
	ht_fault_attr("failslab/verbose", "2");
	ht_fault_attr("failslab/times", "1");
	if (!access("/sys/kernel/debug/fail_usercopy", F_OK)) {
		ht_fault_attr("fail_usercopy/verbose", "2");
		ht_fault_attr("fail_usercopy/times", "1");
	}
}

/* SVOD_CONFIGFS/<bdf>/<rel> into @path; -ENAMETOOLONG if it does not fit. */
static int ht_cfs_path(char *path, size_t len, const char *bdf, const char *rel)
{
	int n = snprintf(path, len, SVOD_CONFIGFS "/%s/%s", bdf, rel);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* open() of SVOD_CONFIGFS/<bdf>/<rel>: a descriptor or -errno. */
static int ht_cfs_open(const char *bdf, const char *rel, int flags)
{
	char path[512];
	int fd, ret;

	ret = ht_cfs_path(path, sizeof(path), bdf, rel);
	if (ret)
		return ret;
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/**
 * ht_cfs_write() - write one value into a device's configfs tree
 * @bdf: PCI address
 * @rel: path under SVOD_CONFIGFS/<bdf>/, e.g. "tiers/bar2/size"
 * @val: the text, written in one write() as echo(1) would (no newline added)
 *
 * Context: any thread.
 * Return: 0, or -errno of open() or write().
 */
int ht_cfs_write(const char *bdf, const char *rel, const char *val)
{
	char path[512];
	int ret = ht_cfs_path(path, sizeof(path), bdf, rel);

	return ret ? ret : ht_write_file(path, val);
}

/**
 * ht_cfs_read() - read one value of a device's configfs tree
 * @bdf: PCI address
 * @rel: path under SVOD_CONFIGFS/<bdf>/
 * @buf: out: the text without its newline, NUL-terminated
 * @len: bytes at @buf
 *
 * Context: any thread.
 * Return: 0, or -errno.
 */
int ht_cfs_read(const char *bdf, const char *rel, char *buf, size_t len)
{
	int fd = ht_cfs_open(bdf, rel, O_RDONLY);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return fd;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/**
 * ht_cfs_mkdir() - mkdir in a device's configfs tree
 * @bdf: PCI address
 * @rel: path under SVOD_CONFIGFS/<bdf>/, e.g. "tiers/fast"
 *
 * Makes the device's declaration directory first if there is none (as an
 * administrator would; ht_undeclare_all() removes it).
 *
 * Context: any thread.
 * Return: 0, or -errno of mkdir().
 */
int ht_cfs_mkdir(const char *bdf, const char *rel)
{
	char path[512];
	int ret = ht_cfs_path(path, sizeof(path), bdf, "");

	if (!ret && mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	ret = ret ? ret : ht_cfs_path(path, sizeof(path), bdf, rel);
	return ret ? ret : mkdir(path, 0755) ? -errno : 0;
}

/**
 * ht_undeclare_all() - remove every declaration from configfs
 *
 * What a program that declared tiers does last, after putting each
 * device's live tiers back: svod.ko cannot be unloaded while a
 * declaration exists, and the next program starts from none.
 *
 * Context: any thread.
 * Return: the number of declarations removed, or -errno.
 */
int ht_undeclare_all(void)
{
	struct dirent *de;
	int nr = 0, ret = 0;
	DIR *dir;

	dir = opendir(SVOD_CONFIGFS);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		ret = svod_undeclare(de->d_name);
		nr += !ret;
	}
	closedir(dir);
	return ret ? ret : nr;
}

/**
 * ht_cfs_rmdir() - rmdir in a device's configfs tree
 * @bdf: PCI address
 * @rel: path under SVOD_CONFIGFS/<bdf>/
 *
 * Context: any thread.
 * Return: 0, or -errno of rmdir().
 */
int ht_cfs_rmdir(const char *bdf, const char *rel)
{
	char path[512];
	int ret = ht_cfs_path(path, sizeof(path), bdf, rel);

	return ret ? ret : rmdir(path) ? -errno : 0;
}

/**
 * ht_module_refcnt() - svod.ko's reference count
 *
 * Context: any thread.
 * Return: /sys/module/svod/refcnt, or -1 if it cannot be read.
 */
long long ht_module_refcnt(void)
{
	char buf[32] = "";
	FILE *fp = fopen("/sys/module/svod/refcnt", "r");
	long long v = -1;

	if (fp) {
		if (fgets(buf, sizeof(buf), fp))
			v = strtoll(buf, NULL, 10);
		fclose(fp);
	}
	return v;
}

/**
 * ht_err() - a call's result for a diagnostic
 * @ret: 0 or -errno
 *
 * Context: any thread.
 * Return: "ok" for 0, else the errno's name ("ENOSPC").
 */
const char *ht_err(int ret)
{
	return ret ? svod_errno_name(ret) : "ok";
}

/**
 * ht_first_tier() - the first present tier of the first bound device
 * @fd: descriptor of /dev/svod
 * @tier: out: its record
 *
 * Devices are taken in PCI address order, not by tier id: a redeclared or
 * rebound device's tiers get new ids, and the rig's first device (the one
 * whose backing file the host checks) must stay the one tests use.
 *
 * Context: any thread.
 * Return: 0, -ENODEV if every tier is gone or there is none, or -errno.
 */
int ht_first_tier(int fd, struct svod_tier_info *tier)
{
	char bdfs[8][SVOD_NAME_LEN];
	int nr, i, ret;

	nr = svod_devices(bdfs, ARRAY_SIZE(bdfs));
	for (i = 0; i < nr && i < (int)ARRAY_SIZE(bdfs); i++) {
		ret = svod_tier_by_device(fd, bdfs[i], tier);
		if (ret != -ENODEV)
			return ret;
	}
	return svod_tier_by_device(fd, NULL, tier);
}

/**
 * ht_bar2_offset() - where a device address of a tier lies in its BAR 2
 * @tier: the tier (its device's declaration is read from configfs)
 * @device_addr: a device address inside @tier
 * @off: out: byte offset of @device_addr in BAR 2
 *
 * Context: any thread.
 * Return: 0, -ENOENT if @tier is not declared in BAR 2, or -EIO.
 */
int ht_bar2_offset(const struct svod_tier_info *tier, uint64_t device_addr, uint64_t *off)
{
	struct svod_tier_decl d;
	char text[4096], *line, *save;

	if (svod_tiers_read(tier->device, text, sizeof(text)) < 0)
		return -EIO;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (svod_decl_parse(line, &d) || strcmp(d.name, tier->name))
			continue;
		if (d.bar != 2)
			return -ENOENT;
		*off = d.offset + (device_addr - d.base);
		return 0;
	}
	return -ENOENT;
}

/**
 * ht_tier_usage() - free bytes and live allocations of one tier
 * @fd: descriptor of /dev/svod
 * @id: tier id
 * @free_bytes: out (may be NULL)
 * @nr_live: out (may be NULL)
 *
 * Context: any thread.
 * Return: 0, or -errno (-ENOENT when the tier does not exist).
 */
int ht_tier_usage(int fd, uint32_t id, uint64_t *free_bytes, uint32_t *nr_live)
{
	struct svod_tier_info t;
	int ret;

	ret = svod_tier_by_id(fd, id, &t);
	if (ret)
		return ret;
	if (free_bytes)
		*free_bytes = t.free_bytes;
	if (nr_live)
		*nr_live = t.nr_live;
	return 0;
}

/**
 * ht_bar2_map() - a tier's device address range in BAR 2 itself
 * @tier: the tier (declared in BAR 2)
 * @device_addr: the range's first device address
 * @len: bytes in the range, > 0
 * @at: out: the byte at @device_addr
 * @map: out: the mapping (read-only, through sysfs resource2, not svod), for
 *	munmap(); NULL on failure
 * @map_len: out: its length
 *
 * Context: any thread.
 * Return: 0, -ENOENT if @tier is not in BAR 2 (or @len is 0), or -errno.
 */
int ht_bar2_map(const struct svod_tier_info *tier, uint64_t device_addr, uint64_t len,
		volatile uint8_t **at, void **map, size_t *map_len)
{
	uint64_t off;
	char path[256];
	size_t n;
	void *m;
	int rfd;

	*map = NULL;
	*map_len = 0;
	if (!len || ht_bar2_offset(tier, device_addr, &off))
		return -ENOENT;
	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource2", tier->device);
	rfd = open(path, O_RDONLY);
	if (rfd < 0)
		return -errno;
	n = ((off + len - 1) | 4095) + 1;
	m = mmap(NULL, n, PROT_READ, MAP_SHARED, rfd, 0);
	close(rfd);
	if (m == MAP_FAILED)
		return -ENOMEM;
	*map = m;
	*map_len = n;
	*at = (volatile uint8_t *)m + off;
	return 0;
}

/**
 * ht_engine_bytes() - bytes a staging engine has moved in a tier
 * @fd: descriptor of /dev/svod
 * @id: tier id
 * @dma: the DMA engine's count if nonzero, else the CPU's
 *
 * Context: any thread.
 * Return: the tier's dma_bytes or cpu_bytes, 0 if the tier is not found.
 */
uint64_t ht_engine_bytes(int fd, uint32_t id, int dma)
{
	struct svod_tier_info t;

	if (svod_tier_by_id(fd, id, &t))
		return 0;
	return dma ? t.dma_bytes : t.cpu_bytes;
}

/**
 * ht_wait_free() - wait until a tier shows @free_bytes free
 * @fd: descriptor of /dev/svod
 * @id: tier id
 * @free_bytes: the expected value
 * @ms: how long to keep polling
 *
 * Release of a dead process's file is finished when wait() returns; the
 * poll only keeps a slow guest from turning a late release into a false
 * failure, and the caller prints how long it took.
 *
 * Context: any thread.
 * Return: the milliseconds waited, or -ETIMEDOUT, or -errno.
 */
int ht_wait_free(int fd, uint32_t id, uint64_t free_bytes, unsigned int ms)
{
	uint64_t now;
	unsigned int waited;
	int ret;

	for (waited = 0;; waited += 10) {
		ret = ht_tier_usage(fd, id, &now, NULL);
		if (ret)
			return ret;
		if (now == free_bytes)
			return (int)waited;
		if (waited >= ms)
			return -ETIMEDOUT;
		usleep(10000);
	}
}

/**
 * ht_bar_size() - size of a PCI BAR, from sysfs "resource"
 * @bdf: PCI address
 * @bar: BAR index
 * @size: out: bytes
 *
 * Context: any thread.
 * Return: 0, or -errno (-ENOENT when the BAR is not implemented).
 */
int ht_bar_size(const char *bdf, unsigned int bar, uint64_t *size)
{
	unsigned long long start, end, flags;
	char path[256];
	unsigned int i;
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource", bdf);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (i = 0; fscanf(f, "%llx %llx %llx", &start, &end, &flags) == 3; i++) {
		if (i == bar) {
			if (end > start) {
				*size = end - start + 1;
				ret = 0;
			}
			break;
		}
	}
	fclose(f);
	return ret;
}

/**
 * ht_guarded_page() - one read-write page followed by a PROT_NONE page
 * @page_size: out: the page size
 *
 * Context: any thread.
 * Return: the read-write page, or NULL.
 */
void *ht_guarded_page(size_t *page_size)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	char *p;

	p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + ps, ps, PROT_NONE)) {
		munmap(p, 2 * ps);
		return NULL;
	}
	*page_size = ps;
	return p;
}

/**
 * ht_unguard_page() - undo ht_guarded_page()
 * @page: what ht_guarded_page() returned
 * @page_size: the page size
 *
 * Context: any thread.
 */
void ht_unguard_page(void *page, size_t page_size)
{
	munmap(page, 2 * page_size);
}

/**
 * ht_seed() - the seed of a randomised program, printed as a diagnostic
 * @prog: program name for the diagnostic
 *
 * The environment variable SVOD_SEED replays a run.
 *
 * Context: main thread.
 * Return: the seed (never 0).
 */
uint64_t ht_seed(const char *prog)
{
	const char *env = getenv("SVOD_SEED");
	struct timespec ts;
	uint64_t seed;

	if (env) {
		seed = strtoull(env, NULL, 0);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec;
	}
	if (!seed)
		seed = 1;
	tap_diag("%s: seed 0x%llx (replay with SVOD_SEED=0x%llx)", prog,
		 (unsigned long long)seed, (unsigned long long)seed);
	return seed;
}

/**
 * ht_rand() - xorshift64* step
 * @state: the generator state, never 0
 *
 * Context: any thread (one state per thread).
 * Return: the next pseudo-random number.
 */
uint64_t ht_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/**
 * ht_write_all() - write all of @buf to a pipe or socket
 * @fd: descriptor
 * @buf: bytes
 * @len: byte count
 *
 * Context: any thread.
 * Return: 0, or -errno.
 */
int ht_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/**
 * ht_read_all() - read exactly @len bytes from a pipe or socket
 * @fd: descriptor
 * @buf: destination
 * @len: byte count
 *
 * Context: any thread.
 * Return: 0, -EPIPE at end of file before @len bytes, or -errno.
 */
int ht_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/**
 * ht_drop_cap() - drop one capability from this thread's sets
 * @cap: CAP_* number, e.g. CAP_SYS_ADMIN
 *
 * Only the effective, permitted and inheritable sets of the calling thread
 * change; the uid stays, so file permissions still allow what root may do.
 *
 * Context: a single-threaded child, before it exercises the missing right.
 * Return: 0, or -errno.
 */
int ht_drop_cap(unsigned int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	data[cap / 32].permitted &= ~(1U << (cap % 32));
	data[cap / 32].inheritable &= ~(1U << (cap % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/**
 * ht_wait_exit() - reap a child
 * @pid: the child
 *
 * Context: main thread.
 * Return: its exit status (0..255), 128 + signal if it was killed, or -errno.
 */
int ht_wait_exit(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/**
 * ht_kmsg_open() - open the kernel log, positioned at its end
 *
 * Context: main thread; needs root.
 * Return: a non-blocking descriptor of /dev/kmsg, or -errno.
 */
int ht_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

/**
 * ht_kmsg_find() - count new kernel log records containing @needle
 * @kfd: from ht_kmsg_open(); advanced past every record read
 * @needle: text to look for
 *
 * Context: main thread.
 * Return: the number of matching records since the last call.
 */
int ht_kmsg_find(int kfd, const char *needle)
{
	char rec[2048];
	ssize_t n;
	int found = 0;

	for (;;) {
		n = read(kfd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, needle)) {
			tap_diag("kmsg: %.*s", (int)strcspn(rec, "\n"), rec);
			found++;
		}
	}
	return found;
}

/**
 * ht_unbind_waits_for_importer() - unbind a device in a child, and see it wait
 * @bdf: the device; one kernel importer holds a dma-buf of it
 * @pid: out: the child, to reap with ht_wait_exit() once the importer let
 *	go (its status is 0 if the unbind succeeded), or -1 if none started
 *
 * The child writes @bdf to svod's unbind. The unbind must say once in the
 * kernel log that it waits for the importer (driver/tier.c), and the child
 * must still be inside it after that. The poll for the line is bounded
 * (60 s) only so that a broken driver fails instead of hanging.
 *
 * Context: main thread; needs root.
 * Return: 1 if the line was logged and the child still waits, else 0.
 */
int ht_unbind_waits_for_importer(const char *bdf, pid_t *pid)
{
	int kfd = ht_kmsg_open(), said = 0, i;

	*pid = -1;
	if (kfd < 0)
		return 0;
	*pid = fork();
	if (!*pid)
		_exit(svod_driver_bind(bdf, 0) ? 1 : 0);
	for (i = 0; *pid > 0 && i < 6000 && !said; i++) {
		said = ht_kmsg_find(kfd, "waits for 1 kernel importer of its dma-bufs to let go");
		if (!said)
			usleep(10000);
	}
	close(kfd);
	tap_diag("unbind of %s: the wait %s logged", bdf, said ? "was" : "was not");
	return said && *pid > 0 && waitpid(*pid, NULL, WNOHANG) == 0;
}

/**
 * ht_unbind_while_importer_holds() - unbind a device in a child, and see it not wait
 * @bdf: the device; one dynamic kernel importer holds a dma-buf of it
 * @pid: out: the child if it is still inside the unbind (to reap with
 *	ht_wait_exit() once the importer let go), else -1
 *
 * The child writes @bdf to svod's unbind while the importer keeps its
 * attachment. The unbind must end on its own, never saying that it waits
 * for the importer (driver/tier.c): that line, or the child still inside
 * after the bound that only keeps a broken driver from hanging the run
 * (60 s), is a failure, and the caller lets the importer go to end it.
 *
 * Context: main thread; needs root.
 * Return: 1 if the unbind succeeded without waiting for the importer, else 0.
 */
int ht_unbind_while_importer_holds(const char *bdf, pid_t *pid)
{
	int kfd = ht_kmsg_open(), waited = 0, status = -1, i;
	pid_t done = 0;

	*pid = -1;
	if (kfd < 0)
		return 0;
	*pid = fork();
	if (!*pid)
		_exit(svod_driver_bind(bdf, 0) ? 1 : 0);
	for (i = 0; *pid > 0 && i < 6000 && !waited && !done; i++) {
		done = waitpid(*pid, &status, WNOHANG);
		waited = ht_kmsg_find(kfd, "of its dma-bufs to let go");
		if (!done && !waited)
			usleep(10000);
	}
	close(kfd);
	if (done > 0)
		*pid = -1;
	tap_diag("unbind of %s: %s%s", bdf, done > 0 ? "returned" : "still inside",
		 waited ? ", waiting for the importer" : "");
	return done > 0 && !waited && WIFEXITED(status) && !WEXITSTATUS(status);
}

/**
 * ht_fill_xorshift() - a reproducible byte pattern
 * @p: the buffer
 * @len: bytes
 * @seed: nonzero; the same seed gives the same bytes
 *
 * Byte i is the low byte of the (i+1)th xorshift32 of @seed: the pattern
 * tools/testing/verify_bar.py checks on the host.
 *
 * Context: any thread.
 */
void ht_fill_xorshift(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		p[i] = (uint8_t)seed;
	}
}

/**
 * ht_pinned_pages() - user pages pinned in the whole system now
 * @out: nr_foll_pin_acquired - nr_foll_pin_released
 *
 * Folds every CPU's pending deltas into /proc/vmstat first
 * (vm/stat_refresh): without that the two counters lag by different
 * amounts.
 *
 * Context: any thread; needs root.
 * Return: 0, -ENOENT if the kernel has no such counters, or -errno.
 */
int ht_pinned_pages(long long *out)
{
	long long acq = -1, rel = -1, v;
	char name[64];
	int ret = ht_write_file("/proc/sys/vm/stat_refresh", "1");
	FILE *f;

	if (ret)
		return ret;
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acq = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			rel = v;
	}
	fclose(f);
	if (acq < 0 || rel < 0)
		return -ENOENT;
	*out = acq - rel;
	return 0;
}

/**
 * ht_fdinfo_value() - a number in a process's fdinfo of one fd
 * @pid: the process
 * @fd: its descriptor
 * @key: the key, e.g. "drm-total-bar2" (without the colon)
 *
 * Reads "KEY:\t<n>[ KiB| MiB| GiB]" (DRM's fdinfo units).
 *
 * Context: any thread.
 * Return: the value in bytes (or the bare number), -ENOENT if the key is
 * absent, or -errno if the fdinfo cannot be read.
 */
int64_t ht_fdinfo_value(pid_t pid, int fd, const char *key)
{
	char path[64], line[256], *end;
	size_t klen = strlen(key);
	int64_t val = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		val = (int64_t)strtoull(line + klen + 1, &end, 10);
		if (!strncmp(end, " KiB", 4))
			val <<= 10;
		else if (!strncmp(end, " MiB", 4))
			val <<= 20;
		else if (!strncmp(end, " GiB", 4))
			val <<= 30;
		break;
	}
	fclose(f);
	return val;
}

static __thread sigjmp_buf ht_touch_jmp;

static void ht_touch_sigbus(int sig)
{
	(void)sig;
	siglongjmp(ht_touch_jmp, 1);
}

/**
 * ht_touch() - read or write one byte here, surviving a SIGBUS
 * @p: the byte (in a mapping that may have been revoked)
 * @write: write 0x42 instead of reading
 *
 * In this thread, through this process's own PTEs and faults (not a
 * child's). The SIGBUS handler is this process's for the access only.
 *
 * Context: any thread; not reentrant with another thread's ht_touch()
 * (the handler is process-wide).
 * Return: SIGBUS if the access raised it, else 0.
 */
int ht_touch(volatile uint8_t *p, int write)
{
	struct sigaction sa = { .sa_handler = ht_touch_sigbus }, old;
	volatile int sig = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(ht_touch_jmp, 1))
		sig = SIGBUS;
	else if (write)
		p[0] = 0x42;
	else
		(void)p[0];
	sigaction(SIGBUS, &old, NULL);
	return sig;
}

/**
 * ht_send_fd() - pass a descriptor over a Unix socket (SCM_RIGHTS)
 * @sock: one end of a socketpair
 * @fd: the descriptor; the receiver gets a new one for the same open file
 *
 * Context: any thread.
 * Return: 0, or -errno of sendmsg().
 */
int ht_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

/**
 * ht_recv_fd() - receive a descriptor ht_send_fd() sent
 * @sock: the other end of the socketpair
 *
 * Context: any thread.
 * Return: the new descriptor, or -1.
 */
int ht_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/**
 * ht_open_without_dac_override() - /dev/svod opened by root without
 *	CAP_DAC_OVERRIDE
 *
 * A forked child drops the capability, opens /dev/svod and passes the file
 * back: the file's opener is judged by each tier's owner, group and mode
 * as uid 0 (the owner class of a tier owned by 0, else group or other).
 *
 * Context: main thread; needs root.
 * Return: the descriptor, or -1.
 */
int ht_open_without_dac_override(void)
{
	int sv[2], fd = -1;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid = fork();
	if (!pid) {
		close(sv[1]);
		fd = ht_drop_cap(CAP_DAC_OVERRIDE) ? -1 : svod_open();
		_exit(fd < 0 || ht_send_fd(sv[0], fd) ? 1 : 0);
	}
	close(sv[0]);
	if (pid > 0)
		fd = ht_recv_fd(sv[1]);
	close(sv[1]);
	if (pid > 0 && ht_wait_exit(pid) && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/**
 * ht_read_line() - the first line of a file
 * @path: the file (a sysfs attribute, say)
 * @buf: out: the line, without its newline
 * @len: room in @buf
 *
 * Context: any thread.
 * Return: 0, -errno of fopen(), or -EIO for an empty file.
 */
int ht_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/**
 * ht_edu_bdf() - the PCI address of QEMU's edu device (1234:11e8)
 * @bdf: out: its name, e.g. 0000:04:00.0
 * @len: room in @bdf
 *
 * Context: any thread.
 * Return: 0, or -ENODEV if the guest has none.
 */
int ht_edu_bdf(char *bdf, size_t len)
{
	char path[512], v[32], d[32];
	struct dirent *e;
	DIR *dir = opendir(SVOD_SYSFS_DEVICES);
	int ret = -ENODEV;

	while (dir && ret && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/vendor", e->d_name);
		if (ht_read_line(path, v, sizeof(v)))
			continue;
		snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/device", e->d_name);
		if (ht_read_line(path, d, sizeof(d)))
			continue;
		if (!strcmp(v, "0x1234") && !strcmp(d, "0x11e8")) {
			snprintf(bdf, len, "%.31s", e->d_name);
			ret = 0;
		}
	}
	if (dir)
		closedir(dir);
	return ret;
}

/**
 * ht_open_vgem() - open the card of the vgem driver
 *
 * Debian's stock kernel has vgem as a module, which the guest's /init
 * loads; the test kernel has no DRM.
 *
 * Context: any thread.
 * Return: an O_CLOEXEC descriptor of /dev/dri/cardN whose driver is vgem,
 * or -1 when there is none.
 */
int ht_open_vgem(void)
{
	char path[64], name[32];
	struct drm_version v;
	unsigned int i;
	int fd;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%u", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(&v, 0, sizeof(v));
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}
