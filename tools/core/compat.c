// SPDX-License-Identifier: GPL-2.0
/* Userspace side of driver/core/compat.h (built with -DSVOD_COMPAT_FAULTS). */
#include "compat.h"

long svod_compat_fail_countdown = -1;
