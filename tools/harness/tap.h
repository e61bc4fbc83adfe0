/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small TAP producer for svod's guest harness. One process prints TAP:
 * "1..N", then one "ok K - name" / "not ok K - name" per case, diagnostics
 * as "# ...". Call the tap_* functions from the main thread only; children
 * and worker threads report back to it (pipe, exit status, shared memory).
 */
#ifndef SVOD_TAP_H
#define SVOD_TAP_H

#include <stdint.h>

#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))

void tap_plan(unsigned int n);
int tap_ok(int cond, const char *fmt, ...) TAP_PRINTF(2, 3);
int tap_errno(int got, int want, const char *fmt, ...) TAP_PRINTF(3, 4);
int tap_eq_u64(uint64_t got, uint64_t want, const char *fmt, ...) TAP_PRINTF(3, 4);
void tap_skip(const char *reason, const char *fmt, ...) TAP_PRINTF(2, 3);
void tap_diag(const char *fmt, ...) TAP_PRINTF(1, 2);
int tap_done(void);

#endif /* SVOD_TAP_H */
