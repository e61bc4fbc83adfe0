// SPDX-License-Identifier: GPL-2.0
/*
 * t_importers: svod's dma-bufs against kernel importers nobody here wrote.
 * vgem (Debian's stock kernel; loaded by the guest's init) imports with the
 * shmem helpers, which WARN when they vmap an imported I/O-memory buffer:
 * svod must refuse it at attach, before any of that, with EOPNOTSUPP, and
 * nothing may change. vgem's own dma-buf is another exporter's: svod's
 * IMPORT refuses it with EXDEV. The test kernel has no DRM: skipped there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	4

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

int main(void)
{
	struct svod_tier_info tier;
	struct svod_export e = { .flags = SVOD_EXPORT_WRITE };
	struct drm_mode_create_dumb dumb = { .height = 16, .width = 1024, .bpp = 32 };
	struct drm_prime_handle p = { 0 };
	struct svod_import im = { 0 };
	struct svod_alloc a;
	uint8_t pat[4096], back[4096];
	uint64_t free_before, free_after;
	uint32_t live_before, live_after;
	int fd, card, ret, i;

	tap_plan(NR_CASES);
	fd = ht_open();
	card = open_vgem();
	if (fd < 0 || ht_first_tier(fd, &tier) || card < 0) {
		for (i = 0; i < NR_CASES; i++)
			tap_skip(card < 0 ? "no vgem card (the test kernel has no DRM)" :
				 "no svod tier", "importer case %d", i);
		return tap_done();
	}

	ret = svod_alloc_flags(fd, tier.id, 65536, 0, SVOD_ALLOC_MAPPABLE, &a);
	ht_fill_xorshift(pat, sizeof(pat), 51);
	if (!ret)
		ret = svod_stage(fd, a.handle, 0, pat, sizeof(pat), 0, NULL);
	e.handle = a.handle;
	if (!ret)
		ret = svod_ioctl(fd, SVOD_IOCTL_EXPORT, &e);
	if (ret) {
		tap_diag("setup: %s", ht_err(ret));
		for (i = 0; i < NR_CASES; i++)
			tap_ok(0, "importer case %d", i);
		return tap_done();
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
	close(fd);
	return tap_done();
}
