#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# python-files.sh STAGE: add what the guest needs to run tools/python's pytest
# suite (t_python) to the initramfs tree STAGE: Debian's python3 (same paths
# as on the host, so it finds its prefix), the shared libraries of it and of
# its extension modules, the standard library without what no test imports
# (test suites, GUI, static lib), the packages pytest imports from
# dist-packages (found by importing them), svod's package and tests
# (byte-compiled here: compiling in TCG costs seconds), libsvodplan.so.1
# and /svod/bin/t_python. Why copying and not a 9p share: Documentation/python.rst.
set -euo pipefail
stage=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
py=/usr/bin/python3
ver=$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
lib=/usr/lib/python$ver
"$py" -c 'import pytest' 2>/dev/null || {
	echo "python-files: $py has no pytest (tools/rig/deps.sh installs python3-pytest)" >&2
	exit 1
}

# copy PATH...: each file at the same path under $stage, symlinks kept
put() { (cd / && cp -a --parents "$@" "$stage/"); }

real=$(readlink -f "$py")
put "$real"
ln -sf "${real##*/}" "$stage/usr/bin/python3"
# Shared libraries of the interpreter and of every extension module
# (regular files at the paths ldd names; the loader at its own path).
for so in $(find "$lib/lib-dynload" -name '*.so'; echo "$real"); do
	ldd "$so" | awk '/=> \//{print $3} /^\t\/[^ ]*ld-linux/{print $1}'
done | sort -u | while read -r f; do
	# dereferenced: /lib and /lib64 are symlinks into /usr on the host
	(cd / && cp -L --parents "$f" "$stage/")
done

# The standard library: sources and their plain .pyc.
(cd / && find "${lib#/}" \
	\( -path "${lib#/}/test" -o -path "${lib#/}/idlelib" -o -path "${lib#/}/tkinter" \
	-o -path "${lib#/}/turtledemo" -o -path "${lib#/}/ensurepip" -o -path "${lib#/}/lib2to3" \
	-o -path "${lib#/}/pydoc_data" -o -path "${lib#/}/distutils" -o -name 'config-*' \
	-o -name 'site-packages' -o -name 'dist-packages' \) -prune \
	-o \( -type f ! -name '*.opt-?.pyc' -print \) -o \( -type l -print \) |
	cpio -pdm --quiet "$stage")

# pytest and what it imports from dist-packages (no .pth files).
"$py" - "$top/tools/python" <<'PYEOF' | while read -r p; do put "$p"; done
import os, sys
sys.path.insert(0, sys.argv[1])
import pytest, _pytest.main, _pytest.config, _pytest.python, _pytest.runner, _pytest.fixtures  # noqa
import _pytest.assertion.rewrite, _pytest.skipping, _pytest.mark, _pytest.monkeypatch  # noqa
roots = set()
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None) or ""
    if "/dist-packages/" in f:
        rel = f.split("/dist-packages/", 1)[1]
        roots.add(f.split("/dist-packages/", 1)[0] + "/dist-packages/" + rel.split("/")[0])
for r in sorted(roots):
    if r.endswith("/dist-packages/__pycache__"):
        continue
    print(r.lstrip("/"))
PYEOF

# svod's package, its tests and make demo's session, compiled.
mkdir -p "$stage/svod/python" "$stage/svod/bin"
cp -r "$top/tools/python/svod" "$top/tools/python/tests" "$top/tools/python/demo.py" \
	"$top/tools/python/keeper.py" \
	"$stage/svod/python/"
find "$stage/svod/python" -name __pycache__ -prune -exec rm -rf {} +
# libsvodplan for svod.plan(strategy="search"), next to the package
# (tests/conftest.py finds it there; it needs only the libc copied above).
make -s -C "$top/tools/plan" lib
cp "$top/tools/plan/libsvodplan.so.1" "$stage/svod/python/"
# The reference class, when this machine has the seeds: test_differential.py
# runs it side by side with the driver in the guest.
for seeds in "${SVOD_SEEDS:-}" /work/shared/seeds "$top/../shared/seeds"; do
	if [ -n "$seeds" ] && [ -f "$seeds/003_ca670d13f12a9aba.txt" ]; then
		mkdir -p "$stage/svod/python/seeds"
		cp "$seeds/003_ca670d13f12a9aba.txt" "$stage/svod/python/seeds/"
		break
	fi
done
"$py" -m compileall -q "$stage/svod/python" >/dev/null
install -m 755 "$top/tools/harness/t_python" "$stage/svod/bin/t_python"
