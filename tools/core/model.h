/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reference model of the svod core, written from the design (seed 003): a
 * sorted list of free spans walked linearly, and a handle table kept as
 * plain arrays. Arithmetic is done in 128 bits, as the design's unbounded
 * integers are, so the model does not share the core's overflow reasoning.
 */
#ifndef SVOD_TOOLS_CORE_MODEL_H
#define SVOD_TOOLS_CORE_MODEL_H

#include <stddef.h>
#include "range.h"
#include "handle.h"

struct model_span {
	u64 start;
	u64 end;
};

struct model_range {
	u64 base;
	u64 capacity;
	u64 align;
	struct model_span *spans;
	size_t nr_spans;
	size_t cap_spans;
	u64 live_bytes;
	u32 nr_live;
};

struct model_slot {
	void *obj;
	u32 gen;
	bool retired;
};

struct model_handles {
	u32 tag;
	u32 base;
	u32 max_live;
	u32 nr_live;
	struct model_slot *slots;
	u32 nr_slots;
	u32 *free_ids;
	u32 nr_free_ids;
};

int model_range_init(struct model_range *m, u64 base, u64 capacity, u64 align,
		    const struct svod_range_region *reserved, unsigned int nr);
void model_range_fini(struct model_range *m);
int model_range_alloc(struct model_range *m, u64 size, u64 align, u64 *start);
void model_range_free(struct model_range *m, u64 start, u64 size);

void model_handles_init(struct model_handles *m, u32 tag, u32 base, u32 max_live);
void model_handles_fini(struct model_handles *m);
int model_handle_alloc(struct model_handles *m, void *obj, u64 *handle);
void *model_handle_lookup(const struct model_handles *m, u64 handle);
int model_handle_free(struct model_handles *m, u64 handle, void **obj);
int model_handle_set_gen(struct model_handles *m, u32 slot, u32 gen);

#endif /* SVOD_TOOLS_CORE_MODEL_H */
