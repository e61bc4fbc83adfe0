#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (or reuse) svod's test kernel from Debian's linux-source-6.1.
#
# The build lives outside the work tree, under $SVOD_CACHE (default
# /var/cache/svod), in a directory keyed by the config fragment, the source
# package version and the compiler, so an unchanged setup is built once.
# Prints the kernel build directory (usable as KDIR) as its last line;
# with --source-dir, only unpacks the source and prints its directory.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
frag=$here/kernel.config
cache=${SVOD_CACHE:-/var/cache/svod}
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( (cat "$frag"; echo "$srcver"; gcc --version | head -1; echo v1) |
	sha256sum | cut -c1-16)
src=$cache/linux-source-$srcver
out=$cache/kernel-$key

if [ "${1:-}" != --source-dir ] && [ -f "$out/.svod-built" ]; then
	echo "$out"
	exit 0
fi

if [ "${1:-}" = --source-dir ] && [ -f "$src/.svod-unpacked" ]; then
	echo "$src"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

if [ ! -f "$src/.svod-unpacked" ]; then
	echo "kernel: unpacking linux-source $srcver" >&2
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xf /usr/src/linux-source-6.1.tar.xz
	touch "$src.tmp/.svod-unpacked"
	mv "$src.tmp" "$src"
fi
if [ "${1:-}" = --source-dir ]; then
	echo "$src"
	exit 0
fi

if [ ! -f "$out/.svod-built" ]; then
	echo "kernel: building test kernel $key (11-26 minutes on 2 cores, measured; once per config)" >&2
	rm -rf "$out"
	mkdir -p "$out"
	make -s -C "$src" O="$out" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >/dev/null
	make -s -C "$src" O="$out" olddefconfig >/dev/null
	bad=0
	while read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qx "$line" "$out/.config" || { echo "kernel: config did not stick: $line" >&2; bad=1; } ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			! grep -q "^$opt=" "$out/.config" || { echo "kernel: config did not stick: $line" >&2; bad=1; } ;;
		esac
	done <"$frag"
	[ $bad = 0 ] || exit 1
	start=$(date +%s)
	# Progress: one line a minute, objects built of the last build's total
	# (1202 for kernel.config when none was recorded).
	total=$(cat "$cache/kernel-objects" 2>/dev/null || echo 1202)
	( while sleep 60; do
		n=$(find "$out" -name '*.o' 2>/dev/null | wc -l)
		echo "kernel: $(( ($(date +%s) - start) / 60 )) min, $n of about $total objects built" >&2
	  done ) &
	ticker=$!
	# The trap's status would become the script's: it must not fail.
	trap 'kill $ticker 2>/dev/null || true' EXIT
	if ! make -C "$src" O="$out" -j"$(nproc)" bzImage modules >"$out/build.log" 2>&1; then
		tail -40 "$out/build.log" >&2
		echo "kernel: build failed, log in $out/build.log" >&2
		exit 1
	fi
	kill $ticker 2>/dev/null || true
	trap - EXIT
	echo "kernel: built in $(( $(date +%s) - start )) s" >&2
	find "$out" -name '*.o' | wc -l >"$cache/kernel-objects"
	touch "$out/.svod-built"
fi
echo "$out"
exit 0
