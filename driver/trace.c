// SPDX-License-Identifier: GPL-2.0
/*
 * svod tracepoints (driver/trace.h), defined here once: a leaf that every
 * file tracing an event links against, so no caller depends on a file above
 * it for them.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
