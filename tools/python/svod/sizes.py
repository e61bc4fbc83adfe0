# SPDX-License-Identifier: MIT OR GPL-2.0
"""svod's one number grammar in Python: :func:`parse_size`.

The grammar every svod interface reads (``Documentation/svod.rst``,
"Numbers"): configfs in the kernel and libsvod's ``svod_parse_size()`` both
build ``driver/core/number.c``; this is its one Python port, and
``tests/test_sizes.py`` checks it against that C function (through
``libsvod.so``) and the shared table ``kunit/number_cases.h``.

A decimal integer without leading zeros or a ``0x`` hex one, optionally
followed by ``K``, ``M``, ``G``, ``T``, ``P`` or ``E`` (either case) or
``KiB``, ``MiB``, ``GiB``, ``TiB``, ``PiB`` or ``EiB``: powers of 1024. In a
hex integer a final ``E``/``e`` is a digit (``0x1E`` is 30). Refused:
leading zeros (``010``: octal to C), ``KB``/``MB``/... (10^3 or 2^10
depending on the reader), signs, spaces, anything after the number, and
values beyond 2^64 - 1.
"""
import errno
import re

FORMS = ("a decimal or 0x-hex integer without leading zeros, optionally followed by "
         "K, M, G, T, P or E (either case, powers of 1024) or KiB, MiB, GiB, TiB, PiB "
         "or EiB, below 2^64: 4096, 0x1000, 64k, 1MiB")

_UNITS = {c: 10 * (i + 1) for i, u in enumerate("KMGTPE") for c in (u, u.lower())}
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_HEX = re.compile(r"0[xX][0-9a-fA-F]+")


class SizeError(ValueError):
    """A text :func:`parse_size` refuses; ``errno`` is ``EINVAL`` (not a
    number of the grammar) or ``ERANGE`` (beyond 2^64 - 1), as the C
    parser returns."""

    def __init__(self, code, text):
        why = "beyond 2^64 - 1" if code == errno.ERANGE else "not a number"
        super().__init__(f"{text!r} is {why}: write {FORMS}")
        self.errno = code
        self.text = text


def parse_size(text):
    """The value of ``text``, a size, offset, address or count as every svod
    interface reads it: ``parse_size("1MiB") == parse_size("1M") ==
    1048576``. Raises :class:`SizeError` (a ``ValueError``) naming the
    accepted forms, ``TypeError`` for anything but a ``str``."""
    if not isinstance(text, str):
        raise TypeError(f"parse_size() takes a str, not {type(text).__name__}")
    num, shift = text, 0
    is_hex = num[:2] in ("0x", "0X")
    if num.endswith("iB") and len(num) > (4 if is_hex else 2):
        shift = _UNITS.get(num[-3], 0)
        if not shift:
            raise SizeError(errno.EINVAL, text)
        num = num[:-3]
    elif num.endswith("iB"):
        raise SizeError(errno.EINVAL, text)
    elif num and num[-1] in _UNITS and not (is_hex and num[-1] in "eE"):
        shift, num = _UNITS[num[-1]], num[:-1]
    if _HEX.fullmatch(num):
        value = int(num[2:], 16)
    elif _DECIMAL.fullmatch(num):
        value = int(num)
    else:
        raise SizeError(errno.EINVAL, text)
    if value << shift >= 1 << 64:
        raise SizeError(errno.ERANGE, text)
    return value << shift
