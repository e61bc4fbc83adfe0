// SPDX-License-Identifier: GPL-2.0
/*
 * TAP output for svod's guest harness. See tap.h.
 *
 * stdout is made unbuffered by tap_plan() so that a fork() never duplicates
 * pending output and a crash never loses a printed result.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsvod.h"
#include "tap.h"

static unsigned int tap_planned, tap_count, tap_failed;
static struct timespec tap_start, tap_last;

/* Seconds from @a to @b. */
static double tap_secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

/**
 * tap_plan() - print the plan line
 * @n: the number of results this program prints
 *
 * Context: main thread, before any result.
 */
void tap_plan(unsigned int n)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &tap_start);
	tap_last = tap_start;
	tap_planned = n;
	printf("1..%u\n", n);
}

static void tap_vresult(int cond, const char *directive, const char *fmt,
			va_list ap)
{
	tap_count++;
	if (!cond)
		tap_failed++;
	struct timespec now;

	printf("%sok %u - ", cond ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	printf("%s\n", directive);
	/* Where a program's time goes (a figure, never a verdict). */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (tap_secs(&tap_last, &now) >= 2.0)
		printf("# took %.1f s (since the previous result)\n", tap_secs(&tap_last, &now));
	tap_last = now;
}

/**
 * tap_ok() - print one result
 * @cond: nonzero for "ok"
 * @fmt: printf format of the case name
 *
 * Context: main thread.
 * Return: @cond normalised to 0 or 1.
 */
int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(cond, "", fmt, ap);
	va_end(ap);
	return !!cond;
}

/**
 * tap_errno() - print one result comparing two (negative) errno values
 * @got: what the call returned: 0 or -errno
 * @want: the expected 0 or -errno
 * @fmt: printf format of the case name
 *
 * On a mismatch a diagnostic names both values.
 *
 * Context: main thread.
 * Return: 1 if @got == @want, else 0.
 */
int tap_errno(int got, int want, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(got == want, "", fmt, ap);
	va_end(ap);
	if (got != want)
		printf("# got %d (%s), want %d (%s)\n", got,
		       got ? svod_errno_name(got) : "success", want,
		       want ? svod_errno_name(want) : "success");
	return got == want;
}

/**
 * tap_eq_u64() - print one result comparing two numbers
 * @got: the value seen
 * @want: the expected value
 * @fmt: printf format of the case name
 *
 * Context: main thread.
 * Return: 1 if equal, else 0.
 */
int tap_eq_u64(uint64_t got, uint64_t want, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(got == want, "", fmt, ap);
	va_end(ap);
	if (got != want)
		printf("# got 0x%llx, want 0x%llx\n", (unsigned long long)got,
		       (unsigned long long)want);
	return got == want;
}

/**
 * tap_skip() - print one skipped result ("ok K - name # SKIP reason")
 * @reason: why the case cannot run here
 * @fmt: printf format of the case name
 *
 * Context: main thread.
 */
void tap_skip(const char *reason, const char *fmt, ...)
{
	char directive[256];
	va_list ap;

	snprintf(directive, sizeof(directive), " # SKIP %s", reason);
	va_start(ap, fmt);
	tap_vresult(1, directive, fmt, ap);
	va_end(ap);
}

/**
 * tap_diag() - print a diagnostic line ("# ...")
 * @fmt: printf format
 *
 * Context: main thread.
 */
void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/**
 * tap_done() - finish: fail every planned case that was not reached
 *
 * A program that gives up early still prints exactly its plan, the missing
 * cases as "not ok ... # not reached"; one that printed more fails too. The
 * wall time since tap_plan() is printed as a diagnostic.
 *
 * Context: main thread, last call.
 * Return: the exit status for main(): 0 if every case passed, else 1.
 */
int tap_done(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	tap_diag("%.2f s", (double)(now.tv_sec - tap_start.tv_sec) +
		 (double)(now.tv_nsec - tap_start.tv_nsec) / 1e9);
	if (tap_count > tap_planned) {
		tap_diag("printed %u results for a plan of %u", tap_count, tap_planned);
		return 1;
	}
	if (tap_count < tap_planned)
		tap_diag("%u of %u cases not reached", tap_planned - tap_count,
			 tap_planned);
	while (tap_count < tap_planned)
		tap_ok(0, "not reached");
	if (tap_failed)
		tap_diag("%u of %u failed", tap_failed, tap_planned);
	return tap_failed ? 1 : 0;
}
