// SPDX-License-Identifier: GPL-2.0
/*
 * svod's pure core, the same sources svod.ko builds (driver/core/range.c
 * and handle.c), compiled into the benchmark module. Nothing is exported
 * from here: svod.ko (and, on a KUnit kernel, its test exports) may be
 * loaded at the same time.
 */
#include "compat.h"

#undef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(sym)

#include "range.c"
#include "handle.c"
