// SPDX-License-Identifier: GPL-2.0
/*
 * t_share: dma-buf sharing (Documentation/uapi.rst, "Sharing").
 *
 * EXPORT gives a new dma-buf fd (O_CLOEXEC; O_RDWR only with
 * SVOD_EXPORT_WRITE) of a mappable allocation at each call; IMPORT gives a
 * new handle in the caller's file (the exporter's own file too) naming the
 * same bytes, read-only for a read-only dma-buf: STAGE and a writable mmap
 * of it are EACCES and write nothing. Every errno of both commands. Two
 * processes share an allocation over a Unix socket (SCM_RIGHTS): the owner
 * stages, the receiver imports, reads and stages back, the owner reads the
 * receiver's bytes; a third process without the fd reaches it by no handle
 * value and no mmap offset of its own /dev/svod. The dma-buf fd maps the
 * allocation itself. FREE while shared: the handle and its /dev/svod
 * mappings go, the bytes stay, still charged to the exporter (fdinfo,
 * max_bytes), and the range returns to its tier, zeroed, only with its last
 * handle, mapping or dma-buf. fdinfo's svod-exported-<tier> and
 * svod-imported-<tier>. Last, the device with a shared allocation is
 * unbound (the second device: the first one's BAR must stay zero for the
 * host's check): the dma-buf's mapping dies of SIGBUS, the imported handle
 * gives ENODEV, IMPORT of its dma-buf too, the BAR (read through sysfs
 * resource2) holds after all that what it held when the unbind returned,
 * FREE and close work; a rebind brings the tier back clean, as t_unbind
 * does.
 */
#define _GNU_SOURCE	/* memfd_create() */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	76

#define SZ		(64 << 10)	/* each shared allocation */
#define HALF		(SZ / 2)

/* <linux/udmabuf.h>, not in every libc's headers: another dma-buf exporter. */
struct ht_udmabuf_create {
	uint32_t memfd;
	uint32_t flags;
	uint64_t offset;
	uint64_t size;
};
#define HT_UDMABUF_CREATE	_IOW('u', 0x42, struct ht_udmabuf_create)

static int fd = -1;		/* the exporter's file */
static int fd2 = -1;		/* a second open file of this process: an importer */
static struct svod_tier_info tier;
static size_t ps;
static uint8_t pat[SZ], pat2[SZ], got[SZ];

static uint64_t tier_free(void)
{
	uint64_t f = 0;

	ht_tier_usage(fd, tier.id, &f, NULL);
	return f;
}

/* Value of "<prefix>-<tier>:\t<n>[ KiB| MiB| GiB]" in this process's fdinfo of @which. */
static int64_t fdinfo_bytes(int which, const char *prefix)
{
	char key[96];

	snprintf(key, sizeof(key), "%s-%s", prefix, tier.name);
	return ht_fdinfo_value(getpid(), which, key);
}

/* Does this process's fdinfo of @which hold the line "<prefix>-<tier>:\t<text>"? */
static int fdinfo_line(int which, const char *prefix, const char *text)
{
	char path[64], want[160], line[256];
	int found = 0;
	FILE *f;

	snprintf(want, sizeof(want), "%s-%s:\t%s\n", prefix, tier.name, text);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", which);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		found |= !strcmp(line, want);
	fclose(f);
	return found;
}

/* Is @dfd open with access mode @acc and FD_CLOEXEC? */
static int fd_is(int dfd, int acc)
{
	int fl = fcntl(dfd, F_GETFL), fdf = fcntl(dfd, F_GETFD);

	return fl >= 0 && (fl & O_ACCMODE) == acc && fdf >= 0 && (fdf & FD_CLOEXEC);
}

/* The lowest free descriptor: a refused call that left an fd moves it. */
static int next_fd(void)
{
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (n >= 0)
		close(n);
	return n;
}

/* EXPORT's result; the fd of an unexpected success is closed. */
static int export_err(int f, uint64_t h, uint32_t flags)
{
	int d = -1, ret = svod_export(f, h, flags, &d, NULL);

	if (!ret)
		close(d);
	return ret;
}

/* IMPORT's result with @flags; the handle of an unexpected success is freed. */
static int import_err(int f, int dfd, uint32_t flags)
{
	struct svod_import i = { .fd = dfd, .flags = flags };
	int ret = svod_ioctl(f, SVOD_IOCTL_IMPORT, &i);

	if (!ret)
		svod_free(f, i.handle);
	return ret;
}

/* A mappable SZ allocation in @f holding pat. */
static int alloc_staged(int f, uint32_t id, struct svod_alloc *a)
{
	int ret = svod_alloc_flags(f, id, SZ, 0, SVOD_ALLOC_MAPPABLE, a);

	if (ret)
		return ret;
	ret = svod_stage(f, a->handle, 0, pat, SZ, 0, NULL);
	if (ret)
		svod_free(f, a->handle);
	return ret;
}

/* Does @h of @f read @want at [@off, @off + @len)? */
static int reads(int f, uint64_t h, uint64_t off, const uint8_t *want, size_t len)
{
	memset(got, 0xee, len);
	return !svod_read(f, h, off, got, len, 0, NULL) && !memcmp(got, want, len);
}

/* An asynchronous STAGE (or READ) and its wait: the submission's or the transfer's errno. */
static int xfer_async(int f, uint64_t h, uint64_t off, void *buf, uint64_t len, int stage)
{
	uint64_t seq = 0, done = 0;
	int ret, st = -EIO;

	ret = stage ? svod_stage_async(f, h, off, buf, len, 0, &seq, NULL) :
		      svod_read_async(f, h, off, buf, len, 0, &seq, NULL);
	if (ret)
		return ret;
	ret = svod_wait(f, seq, 10000, &st, &done);
	return ret ? ret : st ? st : done == len ? 0 : -EIO;
}

static void test_export(void)
{
	struct svod_alloc a = {}, b = {}, small = {};
	uint64_t size = 0, size2 = 0;
	struct stat s1 = {}, s2 = {};
	int d1 = -1, d2 = -1, ret, ret2, before, bad, ok;

	ret = svod_alloc_flags(fd, tier.id, SZ, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_export(fd, a.handle, SVOD_EXPORT_WRITE, &d1, &size);
	tap_ok(!ret && size == a.capacity && fd_is(d1, O_RDWR),
	       "export_write_fd_rdwr_cloexec_size_is_capacity (%s, size %llu)", ht_err(ret),
	       (unsigned long long)size);
	ret2 = ret ? ret : svod_export(fd, a.handle, 0, &d2, &size2);
	tap_ok(!ret2 && size2 == a.capacity && fd_is(d2, O_RDONLY),
	       "export_without_write_fd_rdonly_cloexec (%s)", ht_err(ret2));
	ok = !ret && !ret2 && !fstat(d1, &s1) && !fstat(d2, &s2);
	tap_ok(ok && s1.st_ino != s2.st_ino,
	       "export_each_call_new_dmabuf (inodes %llu, %llu)", (unsigned long long)s1.st_ino,
	       (unsigned long long)s2.st_ino);

	before = next_fd();
	tap_errno(export_err(fd, a.handle, 1U << 1), -EINVAL, "export_unknown_flag_einval");
	tap_errno(export_err(fd, a.handle, 1U << 31), -EINVAL, "export_top_flag_einval");
	tap_ok(export_err(fd, 0, 0) == -ESTALE && export_err(fd, ~0ULL, 0) == -ESTALE,
	       "export_never_issued_handle_estale");
	ret = svod_alloc_flags(fd, tier.id, SZ, 0, SVOD_ALLOC_MAPPABLE, &b);
	ret = ret ? ret : svod_free(fd, b.handle);
	tap_errno(ret ? ret : export_err(fd, b.handle, 0), -ESTALE, "export_freed_handle_estale");
	tap_errno(export_err(fd2, a.handle, 0), -ESTALE, "export_handle_of_another_file_estale");
	ret = svod_alloc(fd, tier.id, 100, 0, &small);
	tap_errno(ret ? ret : export_err(fd, small.handle, SVOD_EXPORT_WRITE), -EOPNOTSUPP,
		  "export_not_page_sized_allocation_eopnotsupp");
	tap_errno(ret ? ret : export_err(fd, small.handle, 0), -EOPNOTSUPP,
		  "export_not_page_sized_read_only_eopnotsupp");
	bad = next_fd() != before;
	tap_ok(before >= 0 && !bad, "refused_exports_leave_no_fd (lowest free fd %d, was %d)",
	       next_fd(), before);
	if (!ret)
		svod_free(fd, small.handle);
	if (d1 >= 0)
		close(d1);
	if (d2 >= 0)
		close(d2);
	svod_free(fd, a.handle);
}

/* A dma-buf of udmabuf (another exporter), or -errno. */
static int udmabuf_fd(void)
{
	struct ht_udmabuf_create c = { .flags = 0, .offset = 0, .size = ps };
	int u, m, d;

	u = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (u < 0)
		return -errno;
	m = memfd_create("t_share", MFD_ALLOW_SEALING);
	if (m < 0 || ftruncate(m, (off_t)ps) || fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK)) {
		d = -errno;
	} else {
		c.memfd = (uint32_t)m;
		d = ioctl(u, HT_UDMABUF_CREATE, &c);
		if (d < 0)
			d = -errno;
	}
	if (m >= 0)
		close(m);
	close(u);
	return d;
}

static void test_import_errors(void)
{
	struct svod_alloc a = {}, b = {};
	uint64_t old = 0;
	int d = -1, p[2] = { -1, -1 }, nul, ret, ud, fq;

	ret = svod_alloc_flags(fd, tier.id, SZ, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_export(fd, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	if (ret)
		tap_diag("import errors: no dma-buf (%s)", ht_err(ret));
	tap_errno(import_err(fd2, d, 1), -EINVAL, "import_flags_1_einval");
	tap_errno(import_err(fd2, d, 1U << 31), -EINVAL, "import_top_flag_einval");
	tap_errno(import_err(fd2, -1, 0), -EBADF, "import_fd_minus_1_ebadf");
	ret = pipe(p) ? -errno : 0;
	if (!ret)
		close(p[1]);
	tap_errno(ret ? ret : import_err(fd2, p[0], 0), -EINVAL, "import_pipe_einval");
	if (!ret)
		close(p[0]);
	tap_errno(ret ? ret : import_err(fd2, p[0], 0), -EBADF, "import_closed_fd_ebadf");
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	tap_errno(import_err(fd2, nul, 0), -EINVAL, "import_dev_null_einval");
	if (nul >= 0)
		close(nul);
	tap_errno(import_err(fd2, fd, 0), -EINVAL, "import_svod_fd_einval");
	ud = udmabuf_fd();
	if (ud < 0) {
		tap_skip("no /dev/udmabuf (CONFIG_UDMABUF); t_importers checks EXDEV with vgem's",
			 "import_other_exporters_dmabuf_exdev (%s)", ht_err(ud));
	} else {
		tap_errno(import_err(fd2, ud, 0), -EXDEV, "import_other_exporters_dmabuf_exdev");
		close(ud);
	}

	/* A file at max_handles (a file takes the value at open). */
	fq = -1;
	if (svod_param_read("max_handles", &old) || svod_param_write("max_handles", 1)) {
		tap_skip("max_handles not writable", "import_at_max_handles_emfile");
	} else {
		fq = ht_open();
		svod_param_write("max_handles", old);
		ret = fq < 0 ? fq : svod_alloc(fq, tier.id, 4096, 0, &b);
		tap_errno(ret ? ret : import_err(fq, d, 0), -EMFILE, "import_at_max_handles_emfile");
	}
	if (fq >= 0)
		close(fq);
	if (d >= 0)
		close(d);
	svod_free(fd, a.handle);
}

/* Import into the exporter's own file and a second one; read-only paths. */
static void test_import(void)
{
	struct svod_import i1 = {}, i2 = {}, ir = {}, iw = {}, ir2 = {};
	struct svod_resolve r = {}, r1 = {};
	struct svod_alloc a = {};
	uint64_t off = 0, msize = 0, dsize = 0, x = 0;
	uint8_t *m, *dm;
	int d = -1, dr = -1, dro = -1, ret, ret2, ok;

	ret = alloc_staged(fd, tier.id, &a);
	ret = ret ? ret : svod_resolve(fd, a.handle, &r);
	ret = ret ? ret : svod_export(fd, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	ret = ret ? ret : svod_export(fd, a.handle, 0, &dr, NULL);
	if (ret)
		tap_diag("import: setup failed (%s)", ht_err(ret));

	ret = svod_import(fd, d, &i1);
	tap_ok(!ret && i1.handle != a.handle && i1.id != a.id && i1.generation >= 1 &&
	       i1.device_addr == r.device_addr && i1.capacity == r.capacity && i1.tier == r.tier &&
	       i1.access == (SVOD_ACCESS_READ | SVOD_ACCESS_WRITE),
	       "import_into_exporters_own_file_new_read_write_handle (%s, id %u gen %u access 0x%x)",
	       ht_err(ret), i1.id, i1.generation, i1.access);
	ret2 = svod_import(fd, d, &i2);
	tap_ok(!ret && !ret2 && i2.handle != i1.handle && i2.handle != a.handle && i2.id != i1.id,
	       "each_import_new_handle (%s)", ht_err(ret2));
	ret = svod_resolve(fd, i1.handle, &r1);
	tap_ok(!ret && r1.device_addr == r.device_addr && r1.capacity == r.capacity &&
	       r1.tier == r.tier, "imported_handle_resolves_as_exporters (%s)", ht_err(ret));

	ret = svod_import(fd2, dr, &ir);
	tap_ok(!ret && ir.access == SVOD_ACCESS_READ && ir.id == 0 && ir.generation >= 1 &&
	       ir.device_addr == r.device_addr && ir.capacity == r.capacity,
	       "import_of_read_only_dmabuf_read_only_handle_id_0 (%s, access 0x%x, id %u gen %u)",
	       ht_err(ret), ir.access, ir.id, ir.generation);
	ret = svod_free(fd2, ir.handle);
	ret = ret ? ret : svod_import(fd2, dr, &ir2);
	tap_ok(!ret && ir2.id == ir.id && ir2.generation > ir.generation && ir2.handle != ir.handle,
	       "import_reuses_freed_id_next_generation (%s, gen %u then %u)", ht_err(ret),
	       ir.generation, ir2.generation);
	ir = ir2;

	/* The read-only handle. */
	tap_ok(reads(fd2, ir.handle, 0, pat, SZ), "read_only_import_reads_exporters_bytes");
	ret = svod_stage(fd2, ir.handle, 0, pat2, SZ, 0, NULL);
	tap_ok(ret == -EACCES && reads(fd, a.handle, 0, pat, SZ),
	       "read_only_import_stage_eacces_nothing_written (%s)", ht_err(ret));
	ret = xfer_async(fd2, ir.handle, 0, pat2, HALF, 1);
	tap_ok(ret == -EACCES && reads(fd, a.handle, 0, pat, SZ),
	       "read_only_import_async_stage_eacces_nothing_written (%s)", ht_err(ret));
	memset(got, 0, SZ);
	ret = xfer_async(fd2, ir.handle, 0, got, SZ, 0);
	tap_ok(!ret && !memcmp(got, pat, SZ), "read_only_import_async_read (%s)", ht_err(ret));
	ret = svod_map_offset(fd2, ir.handle, &off, &msize);
	m = ret ? MAP_FAILED : mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, (off_t)off);
	ret2 = m == MAP_FAILED ? -errno : 0;
	tap_ok(!ret && msize == SZ && ret2 == -EACCES,
	       "read_only_import_mmap_prot_write_eacces (%s, mmap %s)", ht_err(ret), ht_err(ret2));
	if (m != MAP_FAILED)
		munmap(m, SZ);
	m = ret ? MAP_FAILED : mmap(NULL, SZ, PROT_READ, MAP_SHARED, fd2, (off_t)off);
	tap_ok(m != MAP_FAILED && !memcmp(m, pat, SZ), "read_only_import_mmap_prot_read_works");
	if (m != MAP_FAILED)
		munmap(m, SZ);
	tap_errno(export_err(fd2, ir.handle, SVOD_EXPORT_WRITE), -EACCES,
		  "read_only_import_export_write_eacces");
	ret = svod_export(fd2, ir.handle, 0, &dro, &dsize);
	tap_ok(!ret && dsize == SZ && fd_is(dro, O_RDONLY),
	       "read_only_import_export_read_only_works (%s)", ht_err(ret));

	/* A read-write handle in another file. */
	ret = svod_import(fd2, d, &iw);
	ret = ret ? ret : svod_stage(fd2, iw.handle, HALF, pat2 + HALF, HALF, 0, NULL);
	tap_ok(!ret && iw.access == (SVOD_ACCESS_READ | SVOD_ACCESS_WRITE) &&
	       reads(fd, a.handle, HALF, pat2 + HALF, HALF),
	       "read_write_import_stage_seen_by_exporter (%s)", ht_err(ret));
	ret = xfer_async(fd2, iw.handle, 0, pat2, HALF, 1);
	memset(got + HALF, 0, HALF);
	ret = ret ? ret : xfer_async(fd2, iw.handle, 0, got + HALF, HALF, 0);
	tap_ok(!ret && !memcmp(got + HALF, pat2, HALF) && reads(fd, a.handle, 0, pat2, SZ),
	       "read_write_import_async_stage_and_read (%s)", ht_err(ret));
	m = MAP_FAILED;
	ret = svod_map(fd2, iw.handle, (void **)&m, &msize);
	if (!ret) {
		m[7] = 0x3c;
		__sync_synchronize();
	}
	tap_ok(!ret && svod_read(fd, a.handle, 7, &x, 1, 0, NULL) == 0 && (x & 0xff) == 0x3c,
	       "read_write_import_mmap_of_dev_svod_write_seen_by_exporter (%s)", ht_err(ret));
	if (!ret)
		svod_unmap(m, msize);
	svod_stage(fd, a.handle, 0, pat, SZ, 0, NULL);

	/* The dma-buf fd's own mapping. */
	dm = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, d, 0);
	ok = dm != MAP_FAILED && !memcmp(dm, pat, SZ);
	if (ok) {
		dm[9] = 0xc3;
		__sync_synchronize();
	}
	x = 0;
	tap_ok(ok && svod_read(fd, a.handle, 9, &x, 1, 0, NULL) == 0 && (x & 0xff) == 0xc3,
	       "dmabuf_mmap_reads_and_writes_the_allocation");
	if (dm != MAP_FAILED)
		munmap(dm, SZ);
	dm = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, dr, 0);
	ret = dm == MAP_FAILED ? -errno : 0;
	tap_errno(ret, -EACCES, "read_only_dmabuf_mmap_prot_write_eacces");
	if (dm != MAP_FAILED)
		munmap(dm, SZ);
	dm = mmap(NULL, SZ, PROT_READ, MAP_SHARED, dr, 0);
	tap_ok(dm != MAP_FAILED && dm[9] == 0xc3 && !memcmp(dm + 10, pat + 10, SZ - 10),
	       "read_only_dmabuf_mmap_prot_read_works");
	if (dm != MAP_FAILED)
		munmap(dm, SZ);
	dm = mmap(NULL, ps, PROT_READ, MAP_SHARED, d, SZ);
	ret = dm == MAP_FAILED ? -errno : 0;
	if (dm != MAP_FAILED)
		munmap(dm, ps);
	dm = mmap(NULL, 2 * ps, PROT_READ, MAP_SHARED, d, (off_t)(SZ - ps));
	ret2 = dm == MAP_FAILED ? -errno : 0;
	if (dm != MAP_FAILED)
		munmap(dm, 2 * ps);
	tap_ok(ret == -EINVAL && ret2 == -EINVAL,
	       "dmabuf_mmap_beyond_size_einval (at size %s, across the end %s)", ht_err(ret),
	       ht_err(ret2));

	svod_free(fd, i1.handle);
	svod_free(fd, i2.handle);
	svod_free(fd2, ir.handle);
	svod_free(fd2, iw.handle);
	svod_free(fd, a.handle);
	if (d >= 0)
		close(d);
	if (dr >= 0)
		close(dr);
	if (dro >= 0)
		close(dro);
}

static int send_fd(int sock, int sfd, const void *msg, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sfd, sizeof(int));
	return sendmsg(sock, &mh, 0) == (ssize_t)len ? 0 : -1;
}

static int recv_fd(int sock, void *msg, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int rfd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)len)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&rfd, CMSG_DATA(c), sizeof(int));
	return rfd;
}

struct receiver_report {
	int32_t import_ret;
	int32_t read_ok;
	int32_t stage_ret;
	int32_t closed_fd_first;
	struct svod_import im;
	uint64_t map_offset;
};

/*
 * The receiver: its own open file; imports the dma-buf it gets over @sock,
 * closes the fd, reads the owner's bytes, stages pat2 into the second half,
 * reports, and waits for a byte before it exits.
 */
static void receiver(int sock)
{
	struct receiver_report rep = { .import_ret = -EIO };
	struct svod_resolve want;
	int rfd, cfd;
	char go;

	rfd = recv_fd(sock, &want, sizeof(want));
	cfd = ht_open();
	if (rfd >= 0 && cfd >= 0)
		rep.import_ret = svod_import(cfd, rfd, &rep.im);
	rep.closed_fd_first = rfd >= 0 && close(rfd) == 0;
	if (!rep.import_ret) {
		rep.import_ret = rep.im.device_addr == want.device_addr &&
				 rep.im.capacity == want.capacity && rep.im.tier == want.tier ? 0 : -EIO;
		rep.read_ok = reads(cfd, rep.im.handle, 0, pat, HALF);
		rep.stage_ret = svod_stage(cfd, rep.im.handle, HALF, pat2 + HALF, HALF, 0, NULL);
		svod_map_offset(cfd, rep.im.handle, &rep.map_offset, NULL);
	}
	if (ht_write_all(sock, &rep, sizeof(rep)) || ht_read_all(sock, &go, 1))
		_exit(2);
	_exit(0);
}

struct third_report {
	uint32_t tried;
	uint32_t not_estale;
	int32_t mmap_errs[3];
	int32_t setup;
};

/*
 * A third process without the dma-buf fd: only its own open file. Every
 * handle value near the owner's and the receiver's (ids +-64, generations
 * +-3) is ESTALE (it holds none); their mmap offsets, on its file, map
 * nothing.
 */
static void third(int out, const uint64_t *h, const uint64_t *offs)
{
	struct third_report rep = {};
	struct svod_resolve r;
	unsigned int i;
	uint8_t b[16];
	void *m;
	int k, f;

	for (f = 3; f < 1024; f++)
		if (f != out)
			close(f);
	f = ht_open();
	rep.setup = f;
	for (i = 0; i < 2 && f >= 0; i++) {
		/* Neighbouring ids, then generations (today's layout: bit 40 up). */
		for (k = -64; k <= 64 + 6; k++) {
			int64_t gen = k - 64 <= 3 ? k - 64 : 3 - (k - 64);	/* 1..3, -1..-3 */
			uint64_t v = h[i] + (k <= 64 ? (uint64_t)(int64_t)k : (uint64_t)gen << 40);

			rep.tried += 3;
			rep.not_estale += svod_resolve(f, v, &r) != -ESTALE;
			rep.not_estale += svod_read(f, v, 0, b, sizeof(b), 0, NULL) != -ESTALE;
			rep.not_estale += export_err(f, v, 0) != -ESTALE;
		}
	}
	for (i = 0; i < 3; i++) {
		m = f < 0 ? MAP_FAILED : mmap(NULL, ps, PROT_READ, MAP_SHARED, f, (off_t)offs[i]);
		rep.mmap_errs[i] = m == MAP_FAILED ? -errno : 0;
		if (m != MAP_FAILED)
			munmap(m, ps);
	}
	_exit(ht_write_all(out, &rep, sizeof(rep)) ? 2 : 0);
}

static void test_two_processes(void)
{
	struct receiver_report rep = { .import_ret = -EIO };
	struct third_report trep = { .setup = -EIO };
	struct svod_resolve r = {};
	struct svod_alloc a = {};
	uint64_t h[2], offs[3], off = 0;
	int sv[2], tp[2], d = -1, ret, status, tstatus, i, ok;
	pid_t pid = -1, tpid = -1;

	ret = alloc_staged(fd, tier.id, &a);
	ret = ret ? ret : svod_resolve(fd, a.handle, &r);
	ret = ret ? ret : svod_map_offset(fd, a.handle, &off, NULL);
	ret = ret ? ret : svod_export(fd, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	if (!ret && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		ret = -errno;
	if (!ret) {
		pid = fork();
		if (pid == 0) {
			close(sv[0]);
			receiver(sv[1]);
		}
		close(sv[1]);
		ok = pid > 0 && !send_fd(sv[0], d, &r, sizeof(r)) &&
		     !ht_read_all(sv[0], &rep, sizeof(rep));
		if (!ok)
			rep.import_ret = -EIO;
	} else {
		tap_diag("two processes: setup failed (%s)", ht_err(ret));
	}
	tap_ok(rep.import_ret == 0 && rep.closed_fd_first &&
	       rep.im.access == (SVOD_ACCESS_READ | SVOD_ACCESS_WRITE) &&
	       rep.im.id == 0 && rep.im.generation >= 1,
	       "receiver_imports_over_scm_rights_as_exporters_resolve (%s, access 0x%x)",
	       ht_err(rep.import_ret), rep.im.access);
	tap_ok(rep.read_ok, "receiver_reads_owners_bytes_after_closing_the_fd");
	tap_ok(!rep.import_ret && !rep.stage_ret && reads(fd, a.handle, HALF, pat2 + HALF, HALF) &&
	       reads(fd, a.handle, 0, pat, HALF),
	       "owner_reads_receivers_bytes (%s)", ht_err(rep.stage_ret));

	/* The third process, while both hold the allocation. */
	h[0] = a.handle;
	h[1] = rep.im.handle;
	offs[0] = off;
	offs[1] = rep.map_offset;
	offs[2] = off + ps;
	if (!pipe(tp)) {
		tpid = fork();
		if (tpid == 0)
			third(tp[1], h, offs);
		close(tp[1]);
		if (tpid < 0 || ht_read_all(tp[0], &trep, sizeof(trep)))
			trep.setup = -EIO;
		close(tp[0]);
	}
	tstatus = tpid > 0 ? ht_wait_exit(tpid) : -1;
	tap_ok(tstatus == 0 && trep.setup >= 0 && trep.tried == 2 * 135 * 3 && !trep.not_estale,
	       "third_process_no_handle_value_reaches_it_estale (%u of %u not ESTALE)",
	       trep.not_estale, trep.tried);
	ok = tstatus == 0 && trep.setup >= 0;
	for (i = 0; i < 3; i++)
		ok &= trep.mmap_errs[i] == -EACCES || trep.mmap_errs[i] == -EINVAL;
	tap_ok(ok, "third_process_mmap_of_their_offsets_refused (%s, %s, %s)",
	       ht_err(trep.mmap_errs[0]), ht_err(trep.mmap_errs[1]), ht_err(trep.mmap_errs[2]));

	if (pid > 0) {
		if (write(sv[0], "g", 1) != 1)
			tap_diag("release write failed");
		status = ht_wait_exit(pid);
	} else {
		status = -1;
	}
	tap_ok(status == 0 && reads(fd, a.handle, 0, pat, HALF) &&
	       reads(fd, a.handle, HALF, pat2 + HALF, HALF),
	       "receivers_exit_leaves_owners_allocation (status %d)", status);
	if (!ret)
		close(sv[0]);
	if (d >= 0)
		close(d);
	svod_free(fd, a.handle);
}

static void test_free_while_shared(void)
{
	int64_t total0 = fdinfo_bytes(fd, "drm-total"), total1;
	uint64_t base = tier_free(), held;
	struct svod_resolve r;
	struct svod_import im = {};
	struct svod_alloc a = {}, b = {};
	uint64_t msize = 0;
	uint8_t *m = NULL, *dm = MAP_FAILED;
	int d = -1, ret, sig, waited, ok;

	ret = alloc_staged(fd, tier.id, &a);
	ret = ret ? ret : svod_map(fd, a.handle, (void **)&m, &msize);
	ret = ret ? ret : svod_export(fd, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	ret = ret ? ret : svod_import(fd2, d, &im);
	if (!ret) {
		dm = mmap(NULL, SZ, PROT_READ, MAP_SHARED, d, 0);
		if (dm == MAP_FAILED)
			ret = -errno;
	}
	if (ret)
		tap_diag("free while shared: setup failed (%s)", ht_err(ret));
	tap_ok(!ret && fdinfo_line(fd, "svod-exported", "64 KiB") &&
	       fdinfo_line(fd2, "svod-imported", "64 KiB") && fdinfo_bytes(fd, "svod-imported") == 0 &&
	       fdinfo_bytes(fd2, "svod-exported") == 0,
	       "fdinfo_exported_and_imported_bytes (exporter %lld/%lld, importer %lld/%lld)",
	       (long long)fdinfo_bytes(fd, "svod-exported"),
	       (long long)fdinfo_bytes(fd, "svod-imported"),
	       (long long)fdinfo_bytes(fd2, "svod-exported"),
	       (long long)fdinfo_bytes(fd2, "svod-imported"));
	held = tier_free();
	total1 = fdinfo_bytes(fd, "drm-total");
	tap_errno(ret ? ret : svod_free(fd, a.handle), 0, "free_exporters_handle_while_shared");
	tap_errno(svod_resolve(fd, a.handle, &r), -ESTALE, "freed_shared_handle_estale");
	sig = m ? ht_touch(m, 0) : 0;
	tap_ok(sig == SIGBUS, "exporters_dev_svod_mapping_revoked_sigbus (%d)", sig);
	tap_ok(!ret && reads(fd2, im.handle, 0, pat, SZ),
	       "importer_reads_same_bytes_after_exporters_free");
	tap_ok(dm != MAP_FAILED && !ht_touch(dm, 0) && !memcmp(dm, pat, SZ),
	       "dmabuf_mapping_survives_exporters_free");
	tap_ok(!ret && tier_free() == held && held == base - SZ && total1 == total0 + SZ &&
	       fdinfo_bytes(fd, "drm-total") == total1,
	       "bytes_stay_out_of_tier_and_charged_to_exporter (drm-total %lld, was %lld)",
	       (long long)fdinfo_bytes(fd, "drm-total"), (long long)total1);
	tap_diag("svod-exported of the exporter after its FREE: %lld",
		 (long long)fdinfo_bytes(fd, "svod-exported"));
	if (d >= 0)
		close(d);
	d = -1;
	ok = tier_free() == held;
	ret = svod_free(fd2, im.handle);
	tap_ok(!ret && ok && tier_free() == held && fdinfo_bytes(fd2, "svod-imported") == 0,
	       "dmabuf_mapping_alone_keeps_the_range (%s)", ht_err(ret));
	if (dm != MAP_FAILED)
		munmap(dm, SZ);
	waited = ht_wait_free(fd, tier.id, base, 2000);
	tap_ok(waited >= 0 && fdinfo_bytes(fd, "drm-total") == total0 &&
	       fdinfo_bytes(fd, "svod-exported") == 0,
	       "last_reference_gone_range_back_and_uncharged (after %d ms)", waited);
	ret = svod_alloc_flags(fd, tier.id, SZ, 0, SVOD_ALLOC_MAPPABLE, &b);
	memset(got, 0xee, SZ);
	ok = !ret && !svod_read(fd, b.handle, 0, got, SZ, 0, NULL);
	for (size_t i = 0; ok && i < SZ; i++)
		ok = !got[i];
	tap_ok(ok, "next_allocation_reads_zeros (%s, same range: %s)", ht_err(ret),
	       b.device_addr == a.device_addr ? "yes" : "no");
	if (!ret)
		svod_free(fd, b.handle);
	if (m)
		svod_unmap(m, msize);
}

/* max_bytes counts a freed allocation as long as it is shared. */
static void test_quota(void)
{
	struct svod_alloc a = {}, b = {};
	uint64_t old = 0;
	int fq, d = -1, ret;

	if (svod_param_read("max_bytes", &old) || svod_param_write("max_bytes", SZ)) {
		tap_skip("max_bytes not writable", "freed_shared_bytes_still_count_edquot");
		tap_skip("max_bytes not writable", "quota_back_with_last_reference");
		return;
	}
	fq = ht_open();
	ret = fq < 0 ? fq : svod_alloc_flags(fq, tier.id, SZ, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_export(fq, a.handle, 0, &d, NULL);
	ret = ret ? ret : svod_free(fq, a.handle);
	ret = ret ? ret : svod_alloc(fq, tier.id, 4096, 0, &b);
	tap_errno(ret, -EDQUOT, "freed_shared_bytes_still_count_edquot");
	if (!ret)
		svod_free(fq, b.handle);
	if (d >= 0)
		close(d);
	ret = fq < 0 ? fq : svod_alloc(fq, tier.id, 4096, 0, &b);
	tap_errno(ret, 0, "quota_back_with_last_reference");
	if (!ret)
		svod_free(fq, b.handle);
	svod_param_write("max_bytes", old);
	if (fq >= 0)
		close(fq);
}

/* Closing every fd and handle, in either order, gives every byte back. */
static void test_close_all(void)
{
	uint64_t base = tier_free();
	struct svod_import im = {};
	struct svod_alloc a = {};
	int fe, fi, d = -1, ret, waited;

	fe = ht_open();
	ret = fe < 0 ? fe : alloc_staged(fe, tier.id, &a);
	ret = ret ? ret : svod_export(fe, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	ret = ret ? ret : svod_import(fd2, d, &im);
	if (fe >= 0)
		close(fe);
	tap_ok(!ret && reads(fd2, im.handle, 0, pat, SZ) && tier_free() == base - SZ,
	       "importer_outlives_exporters_file (%s)", ht_err(ret));
	if (d >= 0)
		close(d);
	svod_free(fd2, im.handle);
	waited = ht_wait_free(fd, tier.id, base, 2000);
	tap_ok(!ret && waited >= 0, "last_handle_gone_bytes_back (after %d ms)", waited);

	/* Importer's file closed first, the exporter's last. */
	fe = ht_open();
	fi = ht_open();
	d = -1;
	ret = fe < 0 ? fe : fi < 0 ? fi : alloc_staged(fe, tier.id, &a);
	ret = ret ? ret : svod_export(fe, a.handle, 0, &d, NULL);
	ret = ret ? ret : svod_import(fi, d, &im);
	if (d >= 0)
		close(d);
	if (fi >= 0)
		close(fi);
	if (fe >= 0)
		close(fe);
	waited = ht_wait_free(fd, tier.id, base, 2000);
	tap_ok(!ret && waited >= 0, "closing_every_file_gives_every_byte_back (%s, after %d ms)",
	       ht_err(ret), waited);
}

#define NR_UNBIND	14

/*
 * Last: the second device, with an allocation exported, imported and
 * mapped through its dma-buf, is unbound, then bound again.
 */
static void test_unbind(void)
{
	char bdfs[4][SVOD_NAME_LEN], bdf[SVOD_NAME_LEN];
	struct svod_tier_info tb, t;
	struct svod_import im = {}, im2;
	struct svod_alloc a = {};
	struct svod_resolve r;
	volatile uint8_t *bar = NULL;
	void *bmap = NULL;
	size_t bmap_len = 0;
	uint64_t off = 0, msize = 0;
	uint8_t *dm = MAP_FAILED, *m = NULL, b[16];
	static uint8_t snap[SZ];
	int d = -1, fi, ret, n, i, s1, s2, s3, ok, zero;

	n = svod_devices(bdfs, 4);
	if (n < 2 || svod_tier_by_device(fd, bdfs[1], &tb)) {
		for (i = 0; i < NR_UNBIND; i++)
			tap_skip("no second device (the first one's BAR stays zero for the host)",
				 "unbind case %d", i);
		return;
	}
	strcpy(bdf, bdfs[1]);
	fi = ht_open();
	ret = fi < 0 ? fi : alloc_staged(fd, tb.id, &a);
	ret = ret ? ret : svod_map(fd, a.handle, (void **)&m, &msize);
	ret = ret ? ret : svod_export(fd, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	ret = ret ? ret : svod_import(fi, d, &im);
	ret = ret ? ret : svod_map_offset(fi, im.handle, &off, NULL);
	if (!ret) {
		dm = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, d, 0);
		ret = dm == MAP_FAILED ? -errno : 0;
	}
	/* The BAR through sysfs resource2, mapped while the declaration is there. */
	ret = ret ? ret : ht_bar2_map(&tb, a.device_addr, SZ, &bar, &bmap, &bmap_len);
	tap_ok(!ret && !memcmp((const void *)bar, pat, SZ) && !ht_touch(dm, 0),
	       "shared_allocation_on_second_device_staged (%s)", ht_err(ret));

	tap_errno(svod_driver_bind(bdf, 0), 0, "unbind_with_exported_imported_mapped_allocation");
	/* What the BAR holds once the unbind returned (removal zeroes live ranges). */
	if (bar)
		memcpy(snap, (const void *)bar, SZ);
	for (i = 0, zero = 1; bar && i < SZ; i++)
		zero &= !snap[i];
	tap_diag("shared range after the unbind: %s", zero ? "zeroed" : "not zeroed");
	s1 = dm != MAP_FAILED ? ht_touch(dm, 0) : 0;
	s2 = dm != MAP_FAILED ? ht_touch(dm + ps, 1) : 0;
	s3 = m ? ht_touch(m, 1) : 0;
	tap_ok(s1 == SIGBUS && s2 == SIGBUS && s3 == SIGBUS,
	       "dmabuf_and_dev_svod_mappings_sigbus_after_unbind (%d, %d, %d)", s1, s2, s3);
	ok = svod_stage(fi, im.handle, 0, pat2, SZ, 0, NULL) == -ENODEV;
	ok &= svod_read(fi, im.handle, 0, b, sizeof(b), 0, NULL) == -ENODEV;
	tap_ok(ok, "imported_handle_stage_read_enodev");
	ret = xfer_async(fi, im.handle, 0, pat2, HALF, 1);
	tap_errno(ret, -ENODEV, "imported_handle_async_stage_enodev");
	ok = svod_resolve(fi, im.handle, &r) == -ENODEV;
	ok &= svod_map_offset(fi, im.handle, &off, NULL) == -ENODEV;
	ok &= export_err(fi, im.handle, 0) == -ENODEV;
	tap_ok(ok, "imported_handle_resolve_map_offset_export_enodev");
	tap_errno(export_err(fd, a.handle, SVOD_EXPORT_WRITE), -ENODEV,
		  "exporters_handle_export_enodev");
	ret = svod_import(fd2, d, &im2);
	if (!ret)
		svod_free(fd2, im2.handle);
	tap_errno(ret, -ENODEV, "import_of_gone_devices_dmabuf_enodev");
	tap_ok(bar && !memcmp((const void *)bar, snap, SZ),
	       "no_byte_reached_the_bar_after_unbind");
	ok = svod_free(fi, im.handle) == 0 && svod_free(fd, a.handle) == 0;
	tap_ok(ok && svod_free(fi, im.handle) == -ESTALE,
	       "free_of_imported_and_exporters_handles_after_unbind");
	ok = (dm == MAP_FAILED || !munmap(dm, SZ)) && (!m || !svod_unmap(m, msize));
	ok &= d >= 0 && !close(d) && fi >= 0 && !close(fi);
	tap_ok(ok, "unmap_and_close_after_unbind");
	if (bmap)
		munmap(bmap, bmap_len);

	tap_errno(svod_driver_bind(bdf, 1), 0, "rebind");
	ret = svod_tier_by_device(fd, bdf, &t);
	tap_ok(!ret && t.free_bytes == t.capacity && t.nr_live == 0,
	       "rebound_tier_clean (%s)", ht_err(ret));
	ret = ret ? ret : alloc_staged(fd, t.id, &a);
	tap_ok(!ret && svod_free(fd, a.handle) == 0, "rebound_tier_stages (%s)", ht_err(ret));
}

int main(void)
{
	uint64_t base;
	uint32_t live = 1;
	int ret;

	tap_plan(NR_CASES);
	signal(SIGPIPE, SIG_IGN);
	ps = (size_t)sysconf(_SC_PAGESIZE);
	ht_fill_xorshift(pat, SZ, 0x5eed51);
	ht_fill_xorshift(pat2, SZ, 0x5eed52);
	fd = ht_open();
	fd2 = ht_open();
	if (fd < 0 || fd2 < 0) {
		tap_diag("open /dev/svod: %s", ht_err(fd < 0 ? fd : fd2));
		return tap_done();
	}
	ret = ht_first_tier(fd, &tier);
	if (ret) {
		tap_diag("no tier: %s", ht_err(ret));
		if (!getenv("SVOD_DEV"))
			return tap_done();
	}
	base = tier_free();
	test_export();
	test_import_errors();
	test_import();
	test_two_processes();
	test_free_while_shared();
	test_quota();
	test_close_all();
	ht_tier_usage(fd, tier.id, NULL, &live);
	tap_ok(tier_free() == base && live == 0, "tier_back_to_baseline");
	/* Unbinds and rebinds a device: the last cases. */
	test_unbind();
	svod_close(fd2);
	svod_close(fd);
	return tap_done();
}
