# SPDX-License-Identifier: MIT OR GPL-2.0
"""svod.parse_size() is svod's one number grammar: the same answers as the
C parser the kernel and libsvod build (driver/core/number.c, reached here
through libsvod.so's svod_parse_size()) on the shared table
kunit/number_cases.h and on every short text over the grammar's alphabet;
and the examples in uapi.rst, svod.rst, python.rst and the man pages are
what both parsers say. Host-side: the guest has neither the table nor
libsvod.so (t_declare checks the kernel's answers there)."""
import ctypes
import errno
import itertools
import os
import random
import re

import pytest

import svod
from svod.sizes import FORMS

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TABLE = os.path.join(TOP, "kunit", "number_cases.h")
LIBSVOD = os.path.join(TOP, "tools", "lib", "libsvod.so")
DOCS = ["Documentation/uapi.rst", "Documentation/svod.rst", "Documentation/python.rst",
        "Documentation/man/svodctl.1", "Documentation/man/svod.4"]

host_only = pytest.mark.skipif(not os.path.exists(TABLE) or not os.path.exists(LIBSVOD),
                               reason="the source tree and libsvod.so are not here")

_CASE = re.compile(r'SVOD_NUMBER_CASE\("((?:[^"\\]|\\.)*)", (\w+), (\w+)\)')
# "  1MiB  -> 1048576" or "  1MB  -> refused (EINVAL)", in every document.
_EXAMPLE = re.compile(r"^\s*(\S+)\s+->\s+(?:(\d+)|refused \((EINVAL|ERANGE)\))\s*$")


def table():
    """(text, value, errno) of every case of kunit/number_cases.h."""
    with open(TABLE) as f:
        cases = [m.groups() for m in map(_CASE.match, f) if m]
    return [(t.encode().decode("unicode_escape"), int(v, 0), getattr(errno, e) if e != "0" else 0)
            for t, v, e in cases]


def python_answer(text):
    """(value, errno) from svod.parse_size()."""
    try:
        return svod.parse_size(text), 0
    except svod.SizeError as e:
        return 0, e.errno


_lib = None


def c_answer(text):
    """(value, errno) from libsvod's svod_parse_size()."""
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(LIBSVOD)
        _lib.svod_parse_size.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64)]
        _lib.svod_size_forms.restype = ctypes.c_char_p
    v = ctypes.c_uint64(0)
    ret = _lib.svod_parse_size(text.encode(), ctypes.byref(v))
    return (v.value, 0) if ret == 0 else (0, -ret)


@host_only
def test_table_python_and_c():
    cases = table()
    assert len(cases) > 50
    for text, value, err in cases:
        assert python_answer(text) == (value, err), text
        assert c_answer(text) == (value, err), text


@host_only
def test_every_short_text_python_agrees_with_c():
    alphabet = "019aAeEfgiBbKkMmxX +-.\n"
    n = 0
    for length in range(5):
        for chars in itertools.product(alphabet, repeat=length):
            text = "".join(chars)
            assert python_answer(text) == c_answer(text), repr(text)
            n += 1
    assert n > 250000


@host_only
def test_random_long_texts_python_agrees_with_c():
    seed = int(os.environ.get("SVOD_SEED", "0")) or random.randrange(1, 1 << 32)
    print(f"# seed {seed}")
    rng = random.Random(seed)
    pieces = ["0x", "0X", "0", "1", "9", "f", "F", "e", "E", "18446744073709551615",
              "ffffffffffffffff", "KiB", "EiB", "iB", "k", "T", "B", "00", " "]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 6)))
        assert python_answer(text) == c_answer(text), (seed, text)


@host_only
def test_forms_are_the_c_forms():
    c_answer("0")
    assert _lib.svod_size_forms().decode() == FORMS


@host_only
@pytest.mark.parametrize("doc", DOCS, ids=[os.path.basename(d) for d in DOCS])
def test_documented_examples(doc):
    with open(os.path.join(TOP, doc)) as f:
        lines = [ln.replace("\\-", "-").replace("\\(em", "-") for ln in f]
    examples = [m.groups() for m in map(_EXAMPLE.match, lines) if m]
    assert len(examples) >= 4 and any(e[2] for e in examples), doc
    for text, value, err in examples:
        want = (int(value), 0) if value else (0, getattr(errno, err))
        assert python_answer(text) == want, (doc, text)
        assert c_answer(text) == want, (doc, text)


def test_refusal_is_a_valueerror_naming_the_forms():
    with pytest.raises(svod.SizeError) as e:
        svod.parse_size("1MB")
    assert isinstance(e.value, ValueError) and e.value.errno == errno.EINVAL
    assert FORMS in str(e.value) and "'1MB'" in str(e.value)
    with pytest.raises(svod.SizeError) as e:
        svod.parse_size("16E")
    assert e.value.errno == errno.ERANGE
    with pytest.raises(TypeError):
        svod.parse_size(b"1M")
    assert svod.parse_size("1MiB") == svod.parse_size("1M") == 1 << 20
