#!/bin/bash
# SPDX-License-Identifier: MIT OR GPL-2.0
# install_check.sh: `make -C tools install` into a DESTDIR with PREFIX=/opt/svod,
# then build a C and a C++ program against the installed libsvod with
# `pkg-config --cflags --libs libsvod` only (PKG_CONFIG_SYSROOT_DIR maps the
# .pc's paths into the DESTDIR) and run them, the same for libsvodplan
# (shared and static); `make -C tools uninstall` must leave no file behind.
# Then an install with a multiarch LIBDIR (the .pc files follow it), and the
# top Makefile's install-config (udev rules, sysusers.d, svod-restore.service,
# which systemd-analyze verify checks when it is there) for PREFIX=/usr and
# /usr/local. TAP-style lines, exit status 1 on a failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=/opt/svod
dest=$tmp/root
fail=0
ok() { echo "ok - install: $1"; }
nok() { echo "not ok - install: $1"; [ -z "${2:-}" ] || sed 's/^/# /' "$2" | tail -20; fail=1; }

if make -s -C "$top/tools" install DESTDIR="$dest" PREFIX="$prefix" >"$tmp/log" 2>&1; then
	ok "make -C tools install DESTDIR PREFIX=$prefix"
else
	nok "make -C tools install DESTDIR PREFIX=$prefix" "$tmp/log"
	exit 1
fi
missing=
for f in bin/svodctl lib/libsvod.a lib/libsvod.so lib/libsvod.so.2 include/libsvod.h \
	include/linux/svod.h lib/pkgconfig/libsvod.pc \
	lib/libsvodplan.a lib/libsvodplan.so lib/libsvodplan.so.1 include/libsvodplan.h \
	lib/pkgconfig/libsvodplan.pc \
	share/man/man1/svodctl.1 share/man/man4/svod.4 \
	share/bash-completion/completions/svodctl share/doc/svod/COPYING \
	share/doc/svod/LICENSES/preferred/MIT share/doc/svod/LICENSES/preferred/GPL-2.0 \
	share/doc/svod/LICENSES/exceptions/Linux-syscall-note; do
	[ -e "$dest$prefix/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "every file under DESTDIR$prefix" || { echo "# missing:$missing"; nok "every file under DESTDIR$prefix"; }
# One .pc per library: no svod.pc beside libsvod.pc.
if [ ! -e "$dest$prefix/lib/pkgconfig/svod.pc" ]; then
	ok "one .pc per library (libsvod.pc, libsvodplan.pc; no svod.pc)"
else
	nok "one .pc per library (libsvod.pc, libsvodplan.pc; no svod.pc)"
fi

export PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=
pc=$dest$prefix/lib/pkgconfig/libsvod.pc
if grep -qx "prefix=$prefix" "$pc" && [ "$(pkg-config --modversion libsvod)" = "$(cat "$top/VERSION")" ]; then
	ok "libsvod.pc says prefix=$prefix, Version $(cat "$top/VERSION")"
else
	cat "$pc" >"$tmp/pc"; nok "libsvod.pc says prefix=$prefix, Version $(cat "$top/VERSION")" "$tmp/pc"
fi

# A program that needs no device: errno names and the declaration parser.
cat >"$tmp/prog.c" <<'PROG'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libsvod.h>

int main(void)
{
	struct svod_tier_decl d;

	if (strcmp(svod_errno_name(-ESTALE), "ESTALE") ||
	    svod_decl_parse("hbm bar=2 offset=0 size=1M", &d) || d.size != 1 << 20)
		return 1;
	printf("%s %s\n", svod_errno_name(-ENOSPC), d.name);
	return 0;
}
PROG
cp "$tmp/prog.c" "$tmp/prog.cc"
flags=$(pkg-config --cflags --libs libsvod)
echo "# pkg-config --cflags --libs libsvod: $flags"
for lang in c c++; do
	if [ $lang = c ]; then cc=${CC:-gcc}; src=$tmp/prog.c; else cc=${CXX:-g++}; src=$tmp/prog.cc; fi
	# shellcheck disable=SC2086
	if $cc -o "$tmp/prog-$lang" "$src" $flags >"$tmp/log" 2>&1 &&
	   [ "$(LD_LIBRARY_PATH=$dest$prefix/lib "$tmp/prog-$lang")" = "ENOSPC hbm" ]; then
		ok "a $lang program builds with pkg-config --cflags --libs libsvod and runs"
	else
		nok "a $lang program builds with pkg-config --cflags --libs libsvod and runs" "$tmp/log"
	fi
done
# shellcheck disable=SC2046
if ${CXX:-g++} -static -o "$tmp/prog-static" "$tmp/prog.cc" $(pkg-config --static --cflags --libs libsvod) \
	>"$tmp/log" 2>&1 && [ "$("$tmp/prog-static")" = "ENOSPC hbm" ]; then
	ok "a static c++ program links libsvod.a"
else
	nok "a static c++ program links libsvod.a" "$tmp/log"
fi
# libsvodplan alone: its header needs only linux/svod.h, the program no
# device (two buffers live together, a third after them: peak 3 blocks).
cat >"$tmp/plan.c" <<'PROG'
#include <stdio.h>
#include <libsvodplan.h>

int main(void)
{
	const struct svod_plan_event ev[] = {
		{ .op = SVOD_PLAN_ALLOC, .id = 1, .size = 256 },
		{ .op = SVOD_PLAN_ALLOC, .id = 2, .size = 512 },
		{ .op = SVOD_PLAN_FREE, .id = 1 },
		{ .op = SVOD_PLAN_ALLOC, .id = 3, .size = 256 },
		{ .op = SVOD_PLAN_FREE, .id = 2 },
		{ .op = SVOD_PLAN_FREE, .id = 3 },
	};
	const struct svod_solve_params p = { .block_size = 256, .arena_size = 1 << 20,
					     .seconds = 0.5 };
	struct svod_solve_result r;
	uint64_t off[6];

	if (svod_plan_solve(ev, 6, &p, NULL, off, &r))
		return 1;
	printf("peak %llu optimal %u\n", (unsigned long long)r.peak, r.optimal);
	return 0;
}
PROG
cp "$tmp/plan.c" "$tmp/plan.cc"
pflags=$(pkg-config --cflags --libs libsvodplan)
echo "# pkg-config --cflags --libs libsvodplan: $pflags"
for lang in c c++; do
	if [ $lang = c ]; then cc=${CC:-gcc}; src=$tmp/plan.c; else cc=${CXX:-g++}; src=$tmp/plan.cc; fi
	# shellcheck disable=SC2086
	if $cc -o "$tmp/plan-$lang" "$src" $pflags >"$tmp/log" 2>&1 &&
	   [ "$(LD_LIBRARY_PATH=$dest$prefix/lib "$tmp/plan-$lang")" = "peak 768 optimal 1" ]; then
		ok "a $lang program builds with pkg-config --cflags --libs libsvodplan and runs"
	else
		nok "a $lang program builds with pkg-config --cflags --libs libsvodplan and runs" "$tmp/log"
	fi
done
# shellcheck disable=SC2046
if ${CC:-gcc} -static -o "$tmp/plan-static" "$tmp/plan.c" \
	$(pkg-config --static --cflags --libs libsvodplan) >"$tmp/log" 2>&1 &&
   [ "$("$tmp/plan-static")" = "peak 768 optimal 1" ]; then
	ok "a static c program links libsvodplan.a"
else
	nok "a static c program links libsvodplan.a" "$tmp/log"
fi
if nm -D "$dest$prefix/lib/libsvod.so" | grep -qE ' (pthread_create|svod_plan_solve)($|@)' ||
   ! nm -D "$dest$prefix/lib/libsvodplan.so" | grep -q ' T svod_plan_solve$'; then
	nm -D "$dest$prefix/lib/libsvod.so" >"$tmp/log"
	nok "the search is in libsvodplan.so, not libsvod.so (no pthread_create there)" "$tmp/log"
else
	ok "the search is in libsvodplan.so, not libsvod.so (no pthread_create there)"
fi

if "$dest$prefix/bin/svodctl" --version >"$tmp/log" 2>&1 &&
   grep -qx "svodctl $(cat "$top/VERSION")" "$tmp/log"; then
	ok "installed svodctl --version"
else
	nok "installed svodctl --version" "$tmp/log"
fi

# The man pages render without groff warnings; the completion loads.
mw=$(for m in "$top"/Documentation/man/*.[14]; do
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null; done)
if command -v man >/dev/null && [ -z "$mw" ]; then
	ok "man pages svodctl.1 and svod.4 render without warnings"
else
	echo "${mw:-man not found}" >"$tmp/log"; nok "man pages svodctl.1 and svod.4 render without warnings" "$tmp/log"
fi
# bash-completion's _init_completion, reduced to what _svodctl reads; the
# column names come from the installed svodctl's --help.
cat >"$tmp/comp.sh" <<'COMP'
_init_completion() {
	words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
	cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
}
compopt() { :; }
. "$1"
COMP_WORDS=(svodctl tiers -o ID,N); COMP_CWORD=3; _svodctl; echo "${COMPREPLY[*]}"
COMP_WORDS=(svodctl to); COMP_CWORD=1; _svodctl; echo "${COMPREPLY[*]}"
COMP
if [ "$(PATH=$dest$prefix/bin:$PATH bash "$tmp/comp.sh" "$top/tools/svodctl/svodctl.bash-completion" 2>&1 |
	tr '\n' '|')" = "ID,NAME|top|" ]; then
	ok "bash completion: tiers -o ID,N<tab> and to<tab>"
else
	PATH=$dest$prefix/bin:$PATH bash "$tmp/comp.sh" "$top/tools/svodctl/svodctl.bash-completion" >"$tmp/log" 2>&1
	nok "bash completion: tiers -o ID,N<tab> and to<tab>" "$tmp/log"
fi

ver=$(cat "$top/VERSION")
if grep -qx "PACKAGE_VERSION=\"$ver\"" "$top/dkms.conf" &&
   grep -q '^BUILD_EXCLUSIVE_KERNEL=' "$top/dkms.conf"; then
	ok "dkms.conf: PACKAGE_VERSION $ver and BUILD_EXCLUSIVE_KERNEL"
else
	nok "dkms.conf: PACKAGE_VERSION $ver and BUILD_EXCLUSIVE_KERNEL" "$top/dkms.conf"
fi
# One version (README, "Versions"): the Python package's is VERSION's, and
# pyproject.toml takes it from the package rather than saying its own.
pyver=$(PYTHONPATH=$top/tools/python python3 -c 'import svod; print(svod.__version__)' 2>&1)
if [ "$pyver" = "$ver" ] && grep -qx 'dynamic = \["version"\]' "$top/tools/python/pyproject.toml" &&
   ! grep -qE '^version *= *"' "$top/tools/python/pyproject.toml" &&
   grep -q "^\.TH .* \"svod $ver\" " "$top/Documentation/man/svod.4" &&
   grep -q "^\.TH .* \"svod $ver\" " "$top/Documentation/man/svodctl.1"; then
	ok "one version: svod.__version__ $pyver, pyproject.toml's dynamic, the man pages'"
else
	echo "svod.__version__: $pyver" >"$tmp/log"
	nok "one version: svod.__version__ $pyver (VERSION $ver), pyproject.toml's dynamic" "$tmp/log"
fi

make -s -C "$top/tools" uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/log" 2>&1
left=$(find "$dest" -type f -o -type l)
if [ -z "$left" ]; then
	ok "make -C tools uninstall removes every file"
else
	echo "$left" >"$tmp/log"; nok "make -C tools uninstall removes every file" "$tmp/log"
fi
# A multiarch LIBDIR: the libraries and both .pc files go there, and the
# .pc files say so (a program links from there).
libdir=$prefix/lib/x86_64-linux-gnu
dest2=$tmp/root2
if make -s -C "$top/tools" install DESTDIR="$dest2" PREFIX="$prefix" LIBDIR="$libdir" >"$tmp/log" 2>&1 &&
   PKG_CONFIG_PATH=$dest2$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest2 pkg-config --libs libsvod libsvodplan \
	>"$tmp/libs" 2>>"$tmp/log" &&
   [ "$(echo $(cat "$tmp/libs"))" = "-L$dest2$libdir -lsvod -lsvodplan" ] &&
   grep -qx 'libdir=${prefix}/lib/x86_64-linux-gnu' "$dest2$libdir/pkgconfig/libsvodplan.pc" &&
   [ -e "$dest2$libdir/libsvod.so.2" ] && [ -e "$dest2$libdir/libsvodplan.so.1" ] &&
   [ ! -e "$dest2$prefix/lib/libsvod.so" ] &&
   ${CC:-gcc} -o "$tmp/prog-ma" "$tmp/prog.c" $(PKG_CONFIG_PATH=$dest2$libdir/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$dest2 pkg-config --cflags --libs libsvod) >>"$tmp/log" 2>&1 &&
   [ "$(LD_LIBRARY_PATH=$dest2$libdir "$tmp/prog-ma")" = "ENOSPC hbm" ]; then
	ok "LIBDIR=$libdir: libraries and .pc files there, the .pc files say it"
else
	cat "$tmp/libs" >>"$tmp/log" 2>/dev/null; nok "LIBDIR=$libdir: libraries and .pc files there, the .pc files say it" "$tmp/log"
fi
make -s -C "$top/tools" uninstall DESTDIR="$dest2" PREFIX="$prefix" LIBDIR="$libdir" >"$tmp/log" 2>&1
left=$(find "$dest2" -type f -o -type l)
[ -z "$left" ] && ok "LIBDIR=$libdir: uninstall removes every file" ||
	{ echo "$left" >"$tmp/log"; nok "LIBDIR=$libdir: uninstall removes every file" "$tmp/log"; }

# The configuration files of the top Makefile's install: udev rules, the
# group's sysusers.d file and svod-restore.service, where udev and systemd
# read them for each PREFIX (the unit runs PREFIX's svodctl), and
# /etc/svod for the saved declarations.
for p in /usr:/usr/lib /usr/local:/etc; do
	pre=${p%%:*} base=${p#*:} dest3=$tmp/root3
	rm -rf "$dest3"
	unit=$dest3$base/systemd/system/svod-restore.service
	if make -s -C "$top" install-config DESTDIR="$dest3" PREFIX="$pre" >"$tmp/log" 2>&1 &&
	   [ "$(cd "$dest3" && find . -type f | sort | tr '\n' ' ')" = \
	     "./${base#/}/systemd/system/svod-restore.service ./${base#/}/sysusers.d/svod.conf ./${base#/}/udev/rules.d/60-svod.rules ./${base#/}/udev/rules.d/61-svod-tier.rules " ] &&
	   grep -qE '^g svod -' "$dest3$base/sysusers.d/svod.conf" &&
	   grep -qx "ExecStart=$pre/bin/svodctl restore /etc/svod/declarations" "$unit" &&
	   grep -qx 'ConditionPathExists=/etc/svod/declarations' "$unit" &&
	   grep -qx 'After=modprobe@svod.service systemd-modules-load.service sys-kernel-config.mount' "$unit" &&
	   grep -qx 'Type=oneshot' "$unit" && grep -qx 'RemainAfterExit=yes' "$unit" &&
	   [ "$(stat -c %a "$unit")" = 644 ] && [ -d "$dest3/etc/svod" ] &&
	   make -s -C "$top" uninstall-config DESTDIR="$dest3" PREFIX="$pre" >>"$tmp/log" 2>&1 &&
	   [ -z "$(find "$dest3" -type f)" ] && [ ! -e "$dest3/etc/svod" ]; then
		ok "install-config PREFIX=$pre: udev rules, sysusers.d and svod-restore.service under $base, uninstalled"
	else
		(cd "$dest3" 2>/dev/null && find . -type f) >>"$tmp/log"
		cat "$unit" >>"$tmp/log" 2>/dev/null
		nok "install-config PREFIX=$pre: udev rules, sysusers.d and svod-restore.service under $base, uninstalled" "$tmp/log"
	fi
done
# The unit as systemd reads it: systemd-analyze verify, its ExecStart the
# svodctl just built (verify wants an executable there).
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/unit"
	sed "s|@BINDIR@|$top/tools/svodctl|g" "$top/tools/udev/svod-restore.service.in" \
		>"$tmp/unit/svod-restore.service"
	if systemd-analyze verify --man=no "$tmp/unit/svod-restore.service" >"$tmp/log" 2>&1 &&
	   [ ! -s "$tmp/log" ]; then
		ok "systemd-analyze verify svod-restore.service"
	else
		nok "systemd-analyze verify svod-restore.service" "$tmp/log"
	fi
else
	echo "ok - install: systemd-analyze verify svod-restore.service # SKIP systemd-analyze not found"
fi
exit $fail
