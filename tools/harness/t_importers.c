// SPDX-License-Identifier: GPL-2.0
/*
 * t_importers: svod's dma-bufs against kernel importers nobody here wrote.
 * vgem (Debian's stock kernel; loaded by the guest's init) imports with the
 * shmem helpers, which WARN when they vmap an imported I/O-memory buffer:
 * svod must refuse it at attach, before any of that, with EOPNOTSUPP, and
 * nothing may change. vgem's own dma-buf is another exporter's: svod's
 * IMPORT refuses it with EXDEV. The test kernel has no DRM: skipped there.
 *
 * vivid (V4L2; a module of the stock kernel, built into the test kernel)
 * imports with vb2-vmalloc, which maps the dma-buf with dma_buf_vmap() and
 * keeps it mapped while the buffer is vb2's. Its capture writes a frame of
 * one solid colour into a read-write dma-buf of svod: the BAR (read through
 * sysfs resource2) holds it, and nothing past its sizeimage changed. A
 * read-only dma-buf has no vmap: QBUF fails with vb2's EFAULT and nothing is
 * written. Unbinding the second device while vivid maps a dma-buf of it
 * waits, saying so in the kernel log, until vivid lets go (REQBUFS of 0);
 * then the range is zero, and vivid given the dma-buf again captures into a
 * sink, not the BAR. A rebind brings the tier back clean.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "drm_uapi.h"
#include "tap.h"

#define NR_VGEM		4
#define NR_VIVID	5
#define NR_UNBIND	8
#define NR_CASES	(NR_VGEM + NR_VIVID + NR_UNBIND)

static void vgem_cases(int fd, const struct svod_tier_info *t)
{
	struct svod_tier_info tier = *t;
	struct svod_export e = { .flags = SVOD_EXPORT_WRITE };
	struct drm_mode_create_dumb dumb = { .height = 16, .width = 1024, .bpp = 32 };
	struct drm_prime_handle p = { 0 };
	struct svod_import im = { 0 };
	struct svod_alloc a;
	uint8_t pat[4096], back[4096];
	uint64_t free_before, free_after;
	uint32_t live_before, live_after;
	int card, ret, i;

	card = ht_open_vgem();
	if (card < 0) {
		for (i = 0; i < NR_VGEM; i++)
			tap_skip("no vgem card (the test kernel has no DRM)", "vgem case %d", i);
		return;
	}

	ret = svod_alloc_flags(fd, tier.id, 65536, 0, SVOD_ALLOC_MAPPABLE, &a);
	ht_fill_xorshift(pat, sizeof(pat), 51);
	if (!ret)
		ret = svod_stage(fd, a.handle, 0, pat, sizeof(pat), 0, NULL);
	e.handle = a.handle;
	if (!ret)
		ret = svod_ioctl(fd, SVOD_IOCTL_EXPORT, &e);
	if (ret) {
		tap_diag("vgem setup: %s", ht_err(ret));
		for (i = 0; i < NR_VGEM; i++)
			tap_ok(0, "vgem case %d", i);
		close(card);
		return;
	}

	/* vgem's PRIME import attaches: refused before any vmap (no WARN). */
	p.fd = e.fd;
	ret = ioctl(card, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p) ? -errno : 0;
	tap_errno(ret, -EOPNOTSUPP, "vgem_import_of_svod_dmabuf_refused_at_attach");
	memset(back, 0, sizeof(back));
	ret = svod_read(fd, a.handle, 0, back, sizeof(back), 0, NULL);
	tap_ok(!ret && !memcmp(back, pat, sizeof(back)),
	       "vgem_refusal_changed_nothing_in_the_buffer (%s)", ht_err(ret));

	/* vgem's own dma-buf: another exporter's. */
	ret = ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) ? -errno : 0;
	memset(&p, 0, sizeof(p));
	p.handle = dumb.handle;
	p.flags = O_CLOEXEC | O_RDWR;
	if (!ret)
		ret = ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ? -errno : 0;
	ht_tier_usage(fd, tier.id, &free_before, &live_before);
	im.fd = p.fd;
	if (!ret)
		ret = svod_ioctl(fd, SVOD_IOCTL_IMPORT, &im);
	tap_errno(ret, -EXDEV, "import_of_vgem_dmabuf_is_exdev");
	ht_tier_usage(fd, tier.id, &free_after, &live_after);
	tap_ok(free_after == free_before && live_after == live_before,
	       "refused_import_took_nothing (free %llu -> %llu, live %u -> %u)",
	       (unsigned long long)free_before, (unsigned long long)free_after,
	       live_before, live_after);

	close(p.fd);
	close(e.fd);
	close(card);
	svod_free(fd, a.handle);
}

/* An open single-planar video capture node of vivid with streaming, or -1. */
static int open_vivid_capture(void)
{
	struct v4l2_capability cap;
	char path[64];
	unsigned int i;
	int vfd;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/dev/video%u", i);
		vfd = open(path, O_RDWR | O_CLOEXEC);
		if (vfd < 0)
			continue;
		memset(&cap, 0, sizeof(cap));
		if (!ioctl(vfd, VIDIOC_QUERYCAP, &cap) && !strcmp((char *)cap.driver, "vivid") &&
		    (cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) &&
		    (cap.device_caps & V4L2_CAP_STREAMING))
			return vfd;
		close(vfd);
	}
	return -1;
}

/* Sets the menu control named @ctrl to its item named @item: 0 or -errno. */
static int vivid_menu_set(int vfd, const char *ctrl, const char *item)
{
	struct v4l2_queryctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };
	struct v4l2_querymenu m;
	struct v4l2_control c;

	while (!ioctl(vfd, VIDIOC_QUERYCTRL, &q)) {
		if (q.type == V4L2_CTRL_TYPE_MENU && !strcmp((char *)q.name, ctrl)) {
			for (m.index = q.minimum; m.index <= (uint32_t)q.maximum; m.index++) {
				m.id = q.id;
				if (!ioctl(vfd, VIDIOC_QUERYMENU, &m) &&
				    !strcmp((char *)m.name, item)) {
					c.id = q.id;
					c.value = m.index;
					return ioctl(vfd, VIDIOC_S_CTRL, &c) ? -errno : 0;
				}
			}
			return -ENOENT;
		}
		q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	}
	return -ENOENT;
}

/*
 * Makes vivid's capture give a frame whose bytes are known: 320x180 YUYV,
 * one solid colour, no text. Sets *size to its sizeimage: 0 or -errno.
 */
static int vivid_setup(int vfd, uint32_t *size)
{
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	int ret;

	fmt.fmt.pix.width = 320;
	fmt.fmt.pix.height = 180;
	fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	if (ioctl(vfd, VIDIOC_S_FMT, &fmt))
		return -errno;
	if (fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV || fmt.fmt.pix.width != 320)
		return -EINVAL;
	ret = vivid_menu_set(vfd, "Test Pattern", "100% Red");
	ret = ret ? ret : vivid_menu_set(vfd, "OSD Text Mode", "None");
	*size = fmt.fmt.pix.sizeimage;
	return ret;
}

/*
 * vivid's capture starts into a dma-buf (REQBUFS of one V4L2_MEMORY_DMABUF
 * buffer, QBUF with the fd, STREAMON) and hands back one frame (DQBUF). The
 * buffer stays vb2's, so vb2 keeps the dma-buf mapped, until vivid_stop().
 * Return: 0 with the frame's bytes in *used, or the first call's -errno.
 */
static int vivid_start(int vfd, int dmabuf, uint32_t length, uint32_t *used)
{
	struct v4l2_requestbuffers req = {
		.count = 1, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_DMABUF,
	};
	struct v4l2_buffer b = {
		.index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_DMABUF,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	*used = 0;
	if (ioctl(vfd, VIDIOC_REQBUFS, &req))
		return -errno;
	b.m.fd = dmabuf;
	b.length = length;
	if (ioctl(vfd, VIDIOC_QBUF, &b) || ioctl(vfd, VIDIOC_STREAMON, &type))
		return -errno;
	memset(&b, 0, sizeof(b));
	b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	b.memory = V4L2_MEMORY_DMABUF;
	if (ioctl(vfd, VIDIOC_DQBUF, &b))
		return -errno;
	*used = b.bytesused;
	return 0;
}

/* STREAMOFF, and REQBUFS of 0: vb2 lets go of the dma-buf (vunmap). */
static void vivid_stop(int vfd)
{
	struct v4l2_requestbuffers req = {
		.count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_DMABUF,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	ioctl(vfd, VIDIOC_STREAMOFF, &type);
	ioctl(vfd, VIDIOC_REQBUFS, &req);
}

/* Whether @p[0..len) repeats its first YUYV pair (one solid colour). */
static int solid_yuyv(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 4; i < len; i++)
		if (p[i] != p[i % 4])
			return 0;
	return len >= 4;
}

/*
 * An allocation of @size bytes (a multiple of the page size) on tier @id,
 * filled with @pat, and its dma-buf (@flags): 0 or -errno.
 */
static int exported(int fd, uint32_t id, const uint8_t *pat, uint32_t size, uint32_t flags,
		    struct svod_alloc *a, int *dmabuf)
{
	int ret = svod_alloc_flags(fd, id, size, 0, SVOD_ALLOC_MAPPABLE, a);

	ret = ret ? ret : svod_stage(fd, a->handle, 0, pat, size, 0, NULL);
	return ret ? ret : svod_export(fd, a->handle, flags, dmabuf, NULL);
}

/* vivid captures into a read-write dma-buf of svod; a read-only one is refused. */
static void vivid_cases(int fd, int vfd, const struct svod_tier_info *tier, uint32_t fsize)
{
	uint32_t size = (fsize + 4095) & ~4095u, used = 0;
	uint64_t free_before = 0, free_after = 0;
	struct svod_alloc a = {}, ro = {};
	volatile uint8_t *bar = NULL;
	uint8_t *got = malloc(size), *pat = malloc(size);
	void *bmap = NULL;
	size_t bmap_len = 0;
	int d = -1, dro = -1, ret, ok;

	ret = got && pat ? 0 : -ENOMEM;
	ret = ret ? ret : ht_tier_usage(fd, tier->id, &free_before, NULL);
	if (!ret)
		ht_fill_xorshift(pat, size, 52);
	ret = ret ? ret : exported(fd, tier->id, pat, size, SVOD_EXPORT_WRITE, &a, &d);
	ret = ret ? ret : vivid_start(vfd, d, size, &used);
	vivid_stop(vfd);
	tap_diag("vivid: 320x180 YUYV, sizeimage %u, into a read-write dma-buf: %s, %u bytes",
		 fsize, ht_err(ret), used);
	tap_ok(!ret && used == fsize, "vivid_captures_into_svod_dmabuf (%s)", ht_err(ret));
	/* The frame, through svod and through the BAR itself (sysfs resource2). */
	ret = ret ? ret : svod_read(fd, a.handle, 0, got, size, 0, NULL);
	ret = ret ? ret : ht_bar2_map(tier, a.device_addr, size, &bar, &bmap, &bmap_len);
	ok = !ret && solid_yuyv(got, fsize) && memcmp(got, pat, 4) &&
	     !memcmp(got + fsize, pat + fsize, size - fsize) &&
	     !memcmp((const void *)bar, got, size);
	tap_diag("frame's first pixels: %02x %02x %02x %02x", got ? got[0] : 0, got ? got[1] : 0,
		 got ? got[2] : 0, got ? got[3] : 0);
	tap_ok(ok, "vivid_frame_is_in_the_bar_and_nothing_past_it (%s)", ht_err(ret));
	if (bmap)
		munmap(bmap, bmap_len);

	/* A read-only dma-buf has no vmap: vb2's QBUF fails, nothing is written. */
	if (pat)
		ht_fill_xorshift(pat, size, 53);
	ret = exported(fd, tier->id, pat, size, 0, &ro, &dro);
	ret = ret ? ret : vivid_start(vfd, dro, size, &used);
	vivid_stop(vfd);
	tap_errno(ret, -EFAULT, "vivid_qbuf_of_read_only_dmabuf_refused");
	ret = svod_read(fd, ro.handle, 0, got, size, 0, NULL);
	tap_ok(!ret && !memcmp(got, pat, size), "vivid_refusal_wrote_nothing (%s)", ht_err(ret));

	/* vivid kept no reference: the fds and the handles give every byte back. */
	ok = d >= 0 && !close(d) && dro >= 0 && !close(dro);
	ok &= !svod_free(fd, a.handle) && !svod_free(fd, ro.handle);
	ht_tier_usage(fd, tier->id, &free_after, NULL);
	tap_ok(ok && free_after == free_before, "vivid_kept_no_reference (free %llu -> %llu)",
	       (unsigned long long)free_before, (unsigned long long)free_after);
	free(got);
	free(pat);
}

/*
 * The second device is unbound while vivid maps a dma-buf of it: the unbind
 * waits, saying so once in the kernel log, until vivid lets go; then the
 * range is zeroed and stays so. vivid given that dma-buf again captures
 * into a sink: nothing reaches the BAR. Then the device is bound again.
 */
static void vivid_unbind_cases(int fd, int vfd, uint32_t fsize)
{
	uint32_t size = (fsize + 4095) & ~4095u, used = 0;
	char bdfs[4][SVOD_NAME_LEN], bdf[SVOD_NAME_LEN];
	volatile uint8_t *bar = NULL;
	uint8_t *got = malloc(size), *pat = malloc(size);
	struct svod_tier_info tb, t;
	struct svod_alloc a = {};
	void *bmap = NULL;
	size_t bmap_len = 0;
	int d = -1, ret, n, i, waiting, st = -1, zero;
	pid_t pid = -1;

	n = svod_devices(bdfs, 4);
	if (n < 2 || svod_tier_by_device(fd, bdfs[1], &tb) || !got || !pat) {
		for (i = 0; i < NR_UNBIND; i++)
			tap_skip("no second device", "vivid unbind case %d", i);
		goto out;
	}
	strcpy(bdf, bdfs[1]);
	ht_fill_xorshift(pat, size, 54);
	ret = exported(fd, tb.id, pat, size, SVOD_EXPORT_WRITE, &a, &d);
	ret = ret ? ret : ht_bar2_map(&tb, a.device_addr, size, &bar, &bmap, &bmap_len);
	ret = ret ? ret : vivid_start(vfd, d, size, &used);
	tap_ok(!ret && used == fsize && solid_yuyv((const uint8_t *)bar, fsize),
	       "vivid_maps_a_dmabuf_of_the_second_device (%s)", ht_err(ret));

	waiting = !ret && ht_unbind_waits_for_importer(bdf, &pid);
	tap_ok(waiting, "unbind_waits_while_vivid_maps_the_dmabuf");

	vivid_stop(vfd);
	st = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(st == 0, "unbind_returns_once_vivid_lets_go (status %d)", st);
	for (i = 0, zero = bar != NULL; bar && i < (int)size; i++)
		zero &= !bar[i];
	tap_ok(zero, "range_zeroed_after_the_unbind");

	/* The dma-buf of the gone device, to vivid again: a sink takes the frame. */
	ret = vivid_start(vfd, d, size, &used);
	vivid_stop(vfd);
	for (i = 0, zero = bar != NULL; bar && i < (int)size; i++)
		zero &= !bar[i];
	tap_ok(!ret && used == fsize && zero,
	       "vivid_into_gone_devices_dmabuf_reaches_no_bar_byte (%s)", ht_err(ret));

	ret = svod_free(fd, a.handle);
	ret = ret ? ret : (close(d) ? -errno : 0);
	d = -1;
	tap_errno(ret, 0, "free_and_close_after_the_unbind");
	if (bmap)
		munmap(bmap, bmap_len);
	tap_errno(svod_driver_bind(bdf, 1), 0, "rebind_after_vivid");
	ret = svod_tier_by_device(fd, bdf, &t);
	tap_ok(!ret && t.free_bytes == t.capacity && t.nr_live == 0,
	       "rebound_tier_clean (%s)", ht_err(ret));
out:
	if (d >= 0)
		close(d);
	free(got);
	free(pat);
}

static void vivid_all(int fd, const struct svod_tier_info *tier)
{
	uint32_t fsize = 0;
	int vfd, ret, i;

	vfd = open_vivid_capture();
	ret = vfd < 0 ? -ENODEV : vivid_setup(vfd, &fsize);
	if (ret) {
		tap_diag("vivid: %s", ht_err(ret));
		for (i = 0; i < NR_VIVID + NR_UNBIND; i++)
			tap_ok(0, "vivid case %d", i);
	} else {
		vivid_cases(fd, vfd, tier, fsize);
		vivid_unbind_cases(fd, vfd, fsize);
	}
	if (vfd >= 0)
		close(vfd);
}

int main(void)
{
	struct svod_tier_info tier;
	int fd, i;

	tap_plan(NR_CASES);
	fd = ht_open();
	if (fd < 0 || ht_first_tier(fd, &tier)) {
		for (i = 0; i < NR_CASES; i++)
			tap_ok(0, "importer case %d: no svod tier", i);
		return tap_done();
	}
	vgem_cases(fd, &tier);
	vivid_all(fd, &tier);
	close(fd);
	return tap_done();
}
