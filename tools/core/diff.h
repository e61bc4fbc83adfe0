/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differential driver: decodes a byte string into a range set-up and a
 * sequence of operations, runs them on the core and on the model, and
 * aborts (a finding for libFuzzer) on the first difference or broken
 * invariant.
 */
#ifndef SVOD_TOOLS_CORE_DIFF_H
#define SVOD_TOOLS_CORE_DIFF_H

#include <stddef.h>
#include <stdint.h>

/* Operations run by the last svod_core_diff() call (for reporting). */
extern unsigned long svod_diff_ops;

void svod_core_diff(const uint8_t *data, size_t len);

#endif /* SVOD_TOOLS_CORE_DIFF_H */
