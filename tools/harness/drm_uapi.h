/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few DRM ioctls the harness drives vgem with, as in Linux 6.1's
 * include/uapi/drm/drm.h, drm_mode.h and vgem_drm.h: Debian keeps those headers in
 * libdrm-dev, which the rig does not install (the programs are static; the
 * guest has no libdrm).
 */
#ifndef SVOD_HARNESS_DRM_UAPI_H
#define SVOD_HARNESS_DRM_UAPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

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

/* vgem_drm.h: a fence on a buffer, signalled on request (or after 10 s). */
struct drm_vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct drm_vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE		0x1

#define DRM_IOCTL_VERSION		_IOWR('d', 0x00, struct drm_version)
#define DRM_IOCTL_PRIME_HANDLE_TO_FD	_IOWR('d', 0x2d, struct drm_prime_handle)
#define DRM_IOCTL_PRIME_FD_TO_HANDLE	_IOWR('d', 0x2e, struct drm_prime_handle)
#define DRM_IOCTL_MODE_CREATE_DUMB	_IOWR('d', 0xB2, struct drm_mode_create_dumb)
#define DRM_IOCTL_VGEM_FENCE_ATTACH	_IOWR('d', 0x41, struct drm_vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL	_IOW('d', 0x42, struct drm_vgem_fence_signal)

#endif /* SVOD_HARNESS_DRM_UAPI_H */
