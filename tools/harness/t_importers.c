// SPDX-License-Identifier: GPL-2.0
/*
 * t_importers: svod's dma-bufs against kernel importers nobody here wrote.
 * vgem (Debian's stock kernel; loaded by the guest's init) imports with the
 * shmem helpers, which WARN when they vmap an imported I/O-memory buffer:
 * svod must refuse it at attach, before any of that, with EOPNOTSUPP, and
 * nothing may change. vgem's own dma-buf is another exporter's: svod's
 * IMPORT refuses it with EXDEV. vivid (V4L2, stock kernel) imports with
 * vb2-vmalloc, which needs dma_buf_vmap(): svod offers no vmap (an
 * I/O-memory mapping would crash 6.1's vb2-vmalloc, see
 * Documentation/svod.rst, "Sharing"), so QBUF fails with vb2's EFAULT,
 * cleanly, and nothing is written; the same buffer still works through
 * svod. The test kernel has neither DRM nor V4L2: skipped there.
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
#include "tap.h"

#define NR_VGEM		4
#define NR_VIVID	3
#define NR_CASES	(NR_VGEM + NR_VIVID)

/* include/uapi/drm/drm.h and drm_mode.h (no libdrm headers in the guest). */
struct drm_prime_handle {
	uint32_t handle;
	uint32_t flags;
	int32_t fd;
};

struct drm_mode_create_dumb {
	uint32_t height;
	uint32_t width;
	uint32_t bpp;
	uint32_t flags;
	uint32_t handle;
	uint32_t pitch;
	uint64_t size;
};

struct drm_version {
	int version_major;
	int version_minor;
	int version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

#define DRM_IOCTL_VERSION		_IOWR('d', 0x00, struct drm_version)
#define DRM_IOCTL_PRIME_HANDLE_TO_FD	_IOWR('d', 0x2d, struct drm_prime_handle)
#define DRM_IOCTL_PRIME_FD_TO_HANDLE	_IOWR('d', 0x2e, struct drm_prime_handle)
#define DRM_IOCTL_MODE_CREATE_DUMB	_IOWR('d', 0xB2, struct drm_mode_create_dumb)

/* An open card of the vgem driver, or -1. */
static int open_vgem(void)
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

	card = open_vgem();
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

/*
 * One frame captured by vivid into a dma-buf of svod (REQBUFS with
 * V4L2_MEMORY_DMABUF, QBUF with the fd, STREAMON, DQBUF): 0 and the bytes
 * it used, or a negative errno of the first call that failed.
 */
static int vivid_capture(int vfd, int dmabuf, uint32_t length, uint32_t *used)
{
	struct v4l2_requestbuffers req = {
		.count = 1, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_DMABUF,
	};
	struct v4l2_buffer b = {
		.index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_DMABUF,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, ret;

	if (ioctl(vfd, VIDIOC_REQBUFS, &req))
		return -errno;
	b.m.fd = dmabuf;
	b.length = length;
	ret = ioctl(vfd, VIDIOC_QBUF, &b) ? -errno : 0;
	if (!ret)
		ret = ioctl(vfd, VIDIOC_STREAMON, &type) ? -errno : 0;
	if (!ret) {
		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = V4L2_MEMORY_DMABUF;
		ret = ioctl(vfd, VIDIOC_DQBUF, &b) ? -errno : 0;
		*used = b.bytesused;
		ioctl(vfd, VIDIOC_STREAMOFF, &type);
	}
	/* count 0: vb2 lets go of the dma-buf (vunmap, detach). */
	req.count = 0;
	ioctl(vfd, VIDIOC_REQBUFS, &req);
	return ret;
}

static void vivid_cases(int fd, const struct svod_tier_info *tier)
{
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct svod_export e = { .flags = SVOD_EXPORT_WRITE };
	uint8_t *got = NULL, *pat = NULL;
	struct svod_alloc a = { 0 };
	uint64_t free_before = 0, free_after = 0;
	uint32_t used = 0, size;
	int vfd, ret, i;

	vfd = open_vivid_capture();
	if (vfd < 0) {
		for (i = 0; i < NR_VIVID; i++)
			tap_skip("no vivid capture node (the test kernel has no V4L2)",
				 "vivid case %d", i);
		return;
	}
	ret = ioctl(vfd, VIDIOC_G_FMT, &fmt) ? -errno : 0;
	size = (fmt.fmt.pix.sizeimage + 4095) & ~4095u;
	got = malloc(size);
	pat = malloc(size);
	if (!ret && (!got || !pat))
		ret = -ENOMEM;
	if (!ret)
		ret = ht_tier_usage(fd, tier->id, &free_before, NULL);
	if (!ret)
		ret = svod_alloc_flags(fd, tier->id, size, 0, SVOD_ALLOC_MAPPABLE, &a);
	if (!ret) {
		ht_fill_xorshift(pat, size, 52);
		ret = svod_stage(fd, a.handle, 0, pat, size, 0, NULL);
	}
	e.handle = a.handle;
	if (!ret)
		ret = svod_ioctl(fd, SVOD_IOCTL_EXPORT, &e);
	if (ret) {
		tap_diag("vivid setup: %s", ht_err(ret));
		for (i = 0; i < NR_VIVID; i++)
			tap_ok(0, "vivid case %d", i);
		goto out;
	}

	ret = vivid_capture(vfd, e.fd, size, &used);
	tap_diag("vivid: %ux%u, sizeimage %u: QBUF of svod's dma-buf %s",
		 fmt.fmt.pix.width, fmt.fmt.pix.height, fmt.fmt.pix.sizeimage, ht_err(ret));
	tap_errno(ret, -EFAULT, "vivid_qbuf_of_svod_dmabuf_refused_no_vmap");
	ret = svod_read(fd, a.handle, 0, got, size, 0, NULL);
	tap_ok(!ret && !memcmp(got, pat, size), "vivid_refusal_wrote_nothing (%s)", ht_err(ret));
	/* vivid kept no reference: the fd and the handle give every byte back. */
	close(e.fd);
	ret = svod_free(fd, a.handle);
	ht_tier_usage(fd, tier->id, &free_after, NULL);
	tap_ok(!ret && free_after == free_before, "vivid_kept_no_reference (free %llu -> %llu)",
	       (unsigned long long)free_before, (unsigned long long)free_after);
out:
	free(got);
	free(pat);
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
	vivid_cases(fd, &tier);
	close(fd);
	return tap_done();
}
