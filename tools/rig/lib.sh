# SPDX-License-Identifier: GPL-2.0
# Shared by the rig's scripts. Sourced, not run.

# The Debian stock kernel release that linux-image-amd64 installed.
stock_release() {
	local v
	v=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -1)
	[ -n "$v" ] || { echo "rig: no Debian kernel in /boot (linux-image-amd64)" >&2; return 1; }
	echo "$v"
}

# kdir_for KIND: kernel build tree for test (ours, cached) or stock (Debian headers).
kdir_for() {
	if [ "$1" = test ]; then
		"$top/tools/rig/kernel.sh" | tail -1
	else
		echo "/usr/src/linux-headers-$(stock_release)"
	fi
}

# build_modules KIND KDIR [MAKEFLAGS...]: build svod.ko (and the test-only
# modules) for one kernel in build/KIND, so two kernels never share objects.
# Prints the directory holding the .ko files.
build_modules() {
	local kind=$1 kdir=$2 b=$top/build/$1
	shift 2
	mkdir -p "$b/src" "$b/modules"
	# Excluded (built) files survive --delete: rebuilds stay incremental.
	# No -t: a changed file gets a new mtime, so make never keeps a stale object.
	rsync -rlc --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod*' --exclude='modules.order' --exclude='Module.symvers' \
		"$top/Kbuild" "$top/VERSION" "$top/driver" "$top/uapi" "$top/kunit" "$b/src/"
	make -s -j"$(nproc)" -C "$kdir" M="$b/src" "$@" modules >&2
	rm -f "$b/modules/"*.ko
	cp "$b/src/svod.ko" "$b/modules/"
	# KUnit suites: built only for a kernel with CONFIG_KUNIT.
	if grep -q '^CONFIG_KUNIT=[ym]' "$kdir/.config" 2>/dev/null; then
		cp "$b/src/svod_test.ko" "$b/modules/"
	fi
	# Debian builds configfs (svod's tier declarations) as a module.
	if [ "$kind" = stock ]; then
		cp "/lib/modules/$(stock_release)/kernel/fs/configfs/configfs.ko" "$b/modules/"
		# drm_mm for tools/testing/mm_bench (drm.ko needs no other module);
		# vgem (a dma-buf importer for t_importers, a waiter on svod's
		# fences for t_vgem) needs drm_shmem_helper.
		cp "/lib/modules/$(stock_release)/kernel/drivers/gpu/drm/drm.ko" \
			"/lib/modules/$(stock_release)/kernel/drivers/gpu/drm/drm_shmem_helper.ko" \
			"/lib/modules/$(stock_release)/kernel/drivers/gpu/drm/vgem/vgem.ko" \
			"$b/modules/"
		# aer_inject (built into the test kernel): t_unbind_load's PCIe error.
		cp "/lib/modules/$(stock_release)/kernel/drivers/pci/pcie/aer_inject.ko" "$b/modules/"
		# vivid, a V4L2 importer (vb2-vmalloc vmaps a dma-buf), and what
		# it needs, in load order (tools/rig/init).
		local m
		for m in rc/rc-core cec/core/cec mc/mc v4l2-core/videodev \
			common/videobuf2/videobuf2-common common/videobuf2/videobuf2-v4l2 \
			common/videobuf2/videobuf2-memops common/videobuf2/videobuf2-vmalloc \
			common/videobuf2/videobuf2-dma-contig v4l2-core/v4l2-dv-timings \
			common/v4l2-tpg/v4l2-tpg test-drivers/vivid/vivid; do
			cp "/lib/modules/$(stock_release)/kernel/drivers/media/$m.ko" "$b/modules/"
		done
	fi
	local t
	for t in "$top"/tools/testing/*/Kbuild; do
		[ -f "$t" ] || continue
		t=$(dirname "$t")
		[ "$kind" = test ] || [ "$(basename "$t")" != selftest ] || continue
		rsync -rlc "$t/" "$b/$(basename "$t")/"
		make -s -j"$(nproc)" -C "$kdir" M="$b/$(basename "$t")" modules >&2
		cp "$b/$(basename "$t")"/*.ko "$b/modules/"
	done
	echo "$b/modules"
}

# Every KUnit suite name declared under kunit/ (what the test guest must run).
kunit_suites() {
	grep -ho '\.name *= *"svod_[a-z_0-9]*"' "$top"/kunit/*.c 2>/dev/null |
		sed 's/.*"\(.*\)"/\1/' | sort -u | tr '\n' ' '
}

# The KUnit suites with random cases: their files call svod_test_seed().
kunit_random_suites() {
	grep -l 'svod_test_seed(' "$top"/kunit/*_test.c 2>/dev/null |
		xargs -r grep -ho '\.name *= *"svod_[a-z_0-9]*"' |
		sed 's/.*"\(.*\)"/\1/' | sort -u | tr '\n' ' '
}
