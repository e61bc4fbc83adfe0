# SPDX-License-Identifier: MIT OR GPL-2.0
"""Load the reference classes from the seed files, when they are present.

``seeds/003_ca670d13f12a9aba.txt`` is the reference ``StorageAllocator`` as
published: a documentation page whose text lost its indentation (and gained
``[docs]`` markers). :func:`load_storage_reference` executes that text
unchanged except for the indentation, which comes from :data:`LAYOUT` (one
depth per line); it refuses a seed whose text is not the one the layout was
written for (:data:`SEED_SHA256`), so what runs is the reference, line for
line. The TLSF reference is Rust; its line-by-line Python port
``tools/plan/tlsf_ref.py`` stands in for it (the plan differential test
checks that port against the driver's planner).
"""
import hashlib
import importlib.util
import os
import sys
import types

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SEED_STORAGE = "003_ca670d13f12a9aba.txt"
SEED_SHA256 = "68315e1d7821a1bbfa84c996ceba74023426485f5decf784dbdebc40c0db81d8"
LAYOUT = ("00000000000000010100000111111111111101112222222123232222223434333455"
          "454532222212323343334343333343443333321222221222233444212222321222"
          "234342")


def seeds_dir():
    """The seeds directory: ``$SVOD_SEEDS``, ``/work/shared/seeds`` or
    ``../shared/seeds`` next to the repository; None if none exists."""
    for cand in (os.environ.get("SVOD_SEEDS"), "/work/shared/seeds",
                 os.path.join(TOP, "..", "shared", "seeds")):
        if cand and os.path.isfile(os.path.join(cand, SEED_STORAGE)):
            return cand
    return None


def load_storage_reference():
    """The reference module (StorageAllocator, StorageHandle, ...), or None
    when the seeds are not on this machine."""
    where = seeds_dir()
    if where is None:
        return None
    with open(os.path.join(where, SEED_STORAGE), encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if l != "[docs]"]
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    if digest != SEED_SHA256 or len(lines) != len(LAYOUT):
        raise RuntimeError(f"{SEED_STORAGE} is not the text LAYOUT was written for")
    src = "\n".join("    " * int(d) + l for d, l in zip(LAYOUT, lines)) + "\n"
    mod = types.ModuleType("svod_reference_storage")
    mod.__file__ = os.path.join(where, SEED_STORAGE)
    sys.modules[mod.__name__] = mod  # dataclasses looks the module up
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def load_tlsf_reference():
    """``tools/plan/tlsf_ref.py`` (the reference TLSF planner, ported), or
    None outside a source tree."""
    path = os.path.join(TOP, "tools", "plan", "tlsf_ref.py")
    if not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location("svod_reference_tlsf", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
