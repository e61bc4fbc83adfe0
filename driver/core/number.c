// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * svod's one number grammar (number.h): the parser the kernel's configfs
 * and libsvod share. The unit is taken from the end of the text first, so
 * the integer is checked whole, and a malformed text is -EINVAL however
 * large its digits.
 *
 * Locking: none needed; pure function of its arguments.
 */
#include "number.h"

/* Units in order: index i means 1024^(i + 1). */
static const char svod_number_units[] = "kmgtpe";

/* The shift of unit letter @c, either case; 0 if @c is no unit. */
static unsigned int svod_number_unit(char c)
{
	const char *u = memchr(svod_number_units, c | 0x20,
			       sizeof(svod_number_units) - 1);

	return u ? 10 * (unsigned int)(u - svod_number_units + 1) : 0;
}

/* The value of digit @c in @base (10 or 16), or @base if @c is none. */
static unsigned int svod_number_digit(char c, unsigned int base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return base;
}

/**
 * svod_number_parse() - parse one number of svod's grammar
 * @text: the number; need not be NUL-terminated
 * @len: bytes of @text, all of which must be the number
 * @val: out: the value, written only on success
 *
 * The grammar is in number.h. The caller strips what its interface adds
 * (configfs: one trailing newline).
 *
 * Context: any context.
 * Return: 0; -EINVAL if @text is not a number of the grammar; -ERANGE if
 * it is one but its value is beyond U64_MAX.
 */
int svod_number_parse(const char *text, size_t len, u64 *val)
{
	const char *p = text, *end = text + len;
	unsigned int shift = 0, base = 10, d;
	bool overflow = false;
	u64 v = 0;

	if (len >= 2 && p[0] == '0' && (p[1] | 0x20) == 'x') {
		base = 16;
		p += 2;
	}
	if (end - p >= 2 && end[-2] == 'i' && end[-1] == 'B') {
		end -= 2;
		shift = end > p ? svod_number_unit(end[-1]) : 0;
		if (!shift)
			return -EINVAL;
		end--;
	} else if (end > p && !(base == 16 && (end[-1] | 0x20) == 'e')) {
		shift = svod_number_unit(end[-1]);
		if (shift)
			end--;
	}
	if (p == end || (base == 10 && p[0] == '0' && end - p > 1))
		return -EINVAL;
	for (; p < end; p++) {
		d = svod_number_digit(*p, base);
		if (d == base)
			return -EINVAL;
		if (v > (U64_MAX - d) / base)
			overflow = true;
		v = v * base + d;
	}
	if (overflow || v > U64_MAX >> shift)
		return -ERANGE;
	*val = v << shift;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_number_parse);
