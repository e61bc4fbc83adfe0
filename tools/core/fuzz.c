// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: every input is a differential script (see diff.c). */
#include "diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svod_core_diff(data, size);
	return 0;
}
