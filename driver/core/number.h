/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * svod's one number grammar: every size, offset, address or count a person
 * types to svod, in configfs (the kernel), libsvod and svodctl (this file
 * built in userspace) and Python (svod.parse_size(), checked against this
 * one on the same table of cases). Documentation/svod.rst, "Numbers":
 *
 *   number  = integer [unit ["iB"]]
 *   integer = "0" | [1-9][0-9]*  |  ("0x" | "0X") [0-9a-fA-F]+
 *   unit    = K k M m G g T t P p E e      powers of 1024, 2^10 .. 2^60
 *
 * So 4096, 0x1000, 4k, 4K and 4KiB are all 4096, and 0x10M is 16 MiB, as
 * memparse() reads them. Refused, with -EINVAL: an empty text, a sign, a
 * space or newline, a fraction, a leading zero ("010": octal to strtoull()
 * and memparse(), ten to a person; refusing keeps every accepted text
 * meaning the same to all three), "KB"/"MB"/... (10^3 or 2^10 depending on
 * who reads them) and anything after the number. Refused with -ERANGE: a
 * value beyond 2^64 - 1, before or after the unit. In a hex integer a final
 * E or e is a digit (0x1E is 30); 0x1EiB is 2^60.
 *
 * Pure: no locking, no allocation.
 */
#ifndef SVOD_CORE_NUMBER_H
#define SVOD_CORE_NUMBER_H

#include "compat.h"

/* What a refusal tells a person to write instead (kernel log, svodctl). */
#define SVOD_NUMBER_FORMS \
	"a decimal or 0x-hex integer without leading zeros, optionally followed by " \
	"K, M, G, T, P or E (either case, powers of 1024) or KiB, MiB, GiB, TiB, PiB " \
	"or EiB, below 2^64: 4096, 0x1000, 64k, 1MiB"

int svod_number_parse(const char *text, size_t len, u64 *val);

#endif /* SVOD_CORE_NUMBER_H */
