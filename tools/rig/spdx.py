#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""spdx.py [TOP]: every source file of the tree (git ls-files) carries an
SPDX-License-Identifier tag in its first two lines, and the tag is one of
those COPYING allows for the file's place: the kernel module GPL-2.0, the
core it shares with userspace GPL-2.0 OR MIT, the uapi header
(GPL-2.0 WITH Linux-syscall-note) OR MIT, the userspace libraries, CLI and
Python package MIT OR GPL-2.0. One verdict line (`ok - static: ...`), the
offending files as `#` lines under a `not ok`.

`spdx.py --selftest` checks that a file without a tag and files with a tag
wrong for their place are reported, and that a tree of good files is not.
"""
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

GPL = "GPL-2.0"
SHARED = "GPL-2.0 OR MIT"
USER = "MIT OR GPL-2.0"
UAPI = "(GPL-2.0 WITH Linux-syscall-note) OR MIT"

# (path prefix, allowed tags): the first prefix that matches decides; keep
# it in step with the table of COPYING.
RULES = [
    ("tools/core/rbtree.c", {"GPL-2.0-or-later"}),
    ("tools/core/include/linux/rbtree", {"GPL-2.0-or-later"}),
    ("uapi/", {UAPI}),
    ("driver/core/", {SHARED}),
    ("driver/", {GPL}),
    ("kunit/", {GPL}),
    ("tools/testing/", {GPL}),
    ("tools/lib/", {USER}),
    ("tools/plan/", {USER}),
    ("tools/svodctl/", {USER}),
    ("tools/python/", {USER}),
    ("tools/udev/", {USER}),
    ("Documentation/man/", {USER}),
    ("tools/core/", {GPL}),
    ("tools/harness/", {GPL}),
    ("tools/rig/", {GPL}),
    (".ci/", {GPL}),
    ("Documentation/", {GPL}),
    ("", {GPL}),  # Makefile, Kbuild, dkms.conf, tools/Makefile
]

# Not source: licence texts, data, generated goldens, config fragments.
SKIP_DIRS = ("LICENSES/", "Documentation/ABI/")
SKIP_NAMES = {"COPYING", "VERSION", "README", "README.md", ".gitignore",
              ".kunitconfig", "abi.golden", "kernel.config"}
SOURCE_SUFFIXES = (".c", ".h", ".py", ".sh", ".mk", ".rst", ".toml", ".rules",
                   ".pc.in", ".1", ".4", ".bash-completion")
SOURCE_NAMES = {"Makefile", "Kbuild", "dkms.conf"}

TAG = re.compile(r"SPDX-License-Identifier:\s*(.+?)\s*(\*/)?\s*$")


def is_source(top, rel):
    name = os.path.basename(rel)
    if rel.startswith(SKIP_DIRS) or name in SKIP_NAMES:
        return False
    if name in SOURCE_NAMES or name.endswith(SOURCE_SUFFIXES):
        return True
    try:
        with open(os.path.join(top, rel), "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def allowed(rel):
    for prefix, tags in RULES:
        if rel.startswith(prefix):
            return tags
    return set()


def tag_of(path):
    """The tag in the first two lines, or None."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for _ in range(2):
            m = TAG.search(f.readline())
            if m:
                return m.group(1)
    return None


def problems(top, files):
    out = []
    for rel in sorted(files):
        if not is_source(top, rel) or not os.path.isfile(os.path.join(top, rel)):
            continue
        tag = tag_of(os.path.join(top, rel))
        want = allowed(rel)
        if tag is None:
            out.append(f"{rel}: no SPDX-License-Identifier in the first two lines "
                       f"(want {' | '.join(sorted(want))})")
        elif tag not in want:
            out.append(f"{rel}: '{tag}', want {' | '.join(sorted(want))}")
    return out


def files_of(top):
    r = subprocess.run(["git", "-C", top, "ls-files"], capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout.split()
    found = []
    for d, dirs, names in os.walk(top):
        dirs[:] = [x for x in dirs if x not in (".git", "build")]
        found += [os.path.relpath(os.path.join(d, n), top) for n in names]
    return found


def check(top):
    files = files_of(top)
    bad = problems(top, files)
    n = sum(1 for f in files if is_source(top, f))
    print(f"{'not ok' if bad else 'ok'} - static: SPDX: every source file carries "
          f"the licence tag COPYING allows for its place ({n} files)")
    for line in bad[:40]:
        print(f"#   {line}")
    return 1 if bad else 0


def selftest():
    good = {
        "driver/main.c": "// SPDX-License-Identifier: GPL-2.0\n",
        "driver/core/plan.h": "/* SPDX-License-Identifier: GPL-2.0 OR MIT */\n",
        "uapi/linux/svod.h": f"/* SPDX-License-Identifier: {UAPI} */\n",
        "tools/lib/libsvod.c": "// SPDX-License-Identifier: MIT OR GPL-2.0\n",
        "tools/python/svod/x.py": "# SPDX-License-Identifier: MIT OR GPL-2.0\n",
        "tools/rig/run.sh": "#!/bin/bash\n# SPDX-License-Identifier: GPL-2.0\n",
        "tools/core/rbtree.c": "// SPDX-License-Identifier: GPL-2.0-or-later\n",
        "VERSION": "0.1\n",
    }
    bad = {
        # no tag at all
        "tools/rig/new.sh": "#!/bin/bash\necho hi\n",
        # a tag, but not in the first two lines
        "tools/harness/late.mk": "# one\n# two\n# SPDX-License-Identifier: GPL-2.0\n",
        # the library relicensed to GPL only
        "tools/lib/wrong.c": "// SPDX-License-Identifier: GPL-2.0\n",
        # the shared core without MIT: the userspace builds could not use it
        "driver/core/wrong.c": "// SPDX-License-Identifier: GPL-2.0\n",
        # the module under MIT only
        "driver/wrong.c": "// SPDX-License-Identifier: MIT\n",
        # the uapi header without the syscall note
        "uapi/linux/wrong.h": "/* SPDX-License-Identifier: GPL-2.0 */\n",
        # an executable without a source suffix
        "tools/rig/tool": "#!/bin/sh\n# SPDX-License-Identifier: MIT\n",
    }
    with tempfile.TemporaryDirectory() as d:
        for rel, text in {**good, **bad}.items():
            os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        reported = {p.split(":", 1)[0] for p in problems(d, list(good) + list(bad))}
        clean = problems(d, list(good))
    ok = reported == set(bad) and not clean
    print(f"{'ok' if ok else 'not ok'} - static: SPDX: the check reports a missing, a "
          f"misplaced and a wrong tag ({len(reported & set(bad))} of {len(bad)} bad "
          f"files, {len(reported - set(bad))} good file(s) reported)")
    return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--selftest":
        return selftest()
    if len(argv) > 2:
        sys.stderr.write(__doc__)
        return 2
    return check(os.path.abspath(argv[1]) if len(argv) == 2 else TOP)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
