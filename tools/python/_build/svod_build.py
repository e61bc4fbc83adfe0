# SPDX-License-Identifier: MIT OR GPL-2.0
"""PEP 517 backend of the svod package: setuptools' own, taken from the
system (Debian's python3-setuptools and python3-wheel) so that
``pip install tools/python`` works offline.

pip builds in an isolated environment that only holds the build
requirements it downloads; with none to download (``requires = []``) that
environment has no setuptools, so this module puts the interpreter's own
dist-packages back on the path, imports setuptools from there and re-exports
its backend hooks, except that it asks for nothing more (setuptools would ask
pip for ``wheel``, which the same dist-packages holds).
"""
import os
import sys

try:
    import setuptools.build_meta as _meta
except ImportError:
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for cand in (os.path.join(sys.base_prefix, "lib", "python3", "dist-packages"),
                 os.path.join(sys.base_prefix, "lib", ver, "site-packages"),
                 os.path.join(sys.base_prefix, "local", "lib", ver, "dist-packages")):
        if os.path.isdir(os.path.join(cand, "setuptools")):
            sys.path.append(cand)
            break
    import setuptools.build_meta as _meta

build_wheel = _meta.build_wheel
build_sdist = _meta.build_sdist


def get_requires_for_build_wheel(config_settings=None):
    """Nothing to download: setuptools and wheel come from the system."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    """Nothing to download."""
    return []

prepare_metadata_for_build_wheel = _meta.prepare_metadata_for_build_wheel
