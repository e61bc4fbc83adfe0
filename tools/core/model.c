// SPDX-License-Identifier: GPL-2.0
/*
 * Reference model of the svod core (see model.h). Deliberately simple and
 * slow: linear first fit, re-sort and merge on every free, as the design's
 * StorageAllocator does.
 */
#include <stdlib.h>
#include <string.h>
#include "model.h"

static void model_push(struct model_range *m, u64 start, u64 end)
{
	if (m->nr_spans == m->cap_spans) {
		m->cap_spans = m->cap_spans ? 2 * m->cap_spans : 16;
		m->spans = realloc(m->spans, m->cap_spans * sizeof(*m->spans));
		if (!m->spans)
			abort();
	}
	m->spans[m->nr_spans].start = start;
	m->spans[m->nr_spans].end = end;
	m->nr_spans++;
}

int model_range_init(struct model_range *m, u64 base, u64 capacity, u64 align,
		    const struct svod_range_region *reserved, unsigned int nr)
{
	unsigned __int128 end = (unsigned __int128)base + capacity;
	struct model_span *old;
	size_t nr_old, j;
	unsigned int i;

	memset(m, 0, sizeof(*m));
	if (capacity == 0)
		return -EINVAL;
	if (align == 0 || (align & (align - 1)))
		return -EINVAL;
	if (end > U64_MAX)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (reserved[i].size == 0)
			return -EINVAL;
		if (reserved[i].base < base ||
		    (unsigned __int128)reserved[i].base + reserved[i].size > end)
			return -EINVAL;
	}
	m->base = base;
	m->capacity = capacity;
	m->align = align;
	model_push(m, base, (u64)end);
	/* The design sorts the regions first; the result does not depend on it. */
	for (i = 0; i < nr; i++) {
		u64 rs = reserved[i].base, re = rs + reserved[i].size;

		old = m->spans;
		nr_old = m->nr_spans;
		m->spans = NULL;
		m->nr_spans = 0;
		m->cap_spans = 0;
		for (j = 0; j < nr_old; j++) {
			if (re <= old[j].start || rs >= old[j].end) {
				model_push(m, old[j].start, old[j].end);
				continue;
			}
			if (old[j].start < rs)
				model_push(m, old[j].start, rs);
			if (re < old[j].end)
				model_push(m, re, old[j].end);
		}
		free(old);
	}
	return 0;
}

void model_range_fini(struct model_range *m)
{
	free(m->spans);
	memset(m, 0, sizeof(*m));
}

static int model_span_cmp(const void *a, const void *b)
{
	const struct model_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int model_range_alloc(struct model_range *m, u64 size, u64 align, u64 *start)
{
	struct model_span span;
	size_t i;
	unsigned __int128 aligned;

	if (size == 0)
		return -EINVAL;
	if (align & (align - 1))
		return -EINVAL;
	if (align < m->align)
		align = m->align;
	for (i = 0; i < m->nr_spans; i++) {
		span = m->spans[i];
		aligned = (unsigned __int128)span.start + align - 1;
		aligned &= ~(unsigned __int128)(align - 1);
		if (aligned + size > span.end)
			continue;
		/* split the span around the allocation */
		memmove(&m->spans[i], &m->spans[i + 1],
			(m->nr_spans - i - 1) * sizeof(*m->spans));
		m->nr_spans--;
		if (aligned + size < span.end)
			model_push(m, (u64)aligned + size, span.end);
		if (aligned > span.start)
			model_push(m, span.start, (u64)aligned);
		/* restore address order (pushes went to the end) */
		qsort(m->spans, m->nr_spans, sizeof(*m->spans), model_span_cmp);
		*start = (u64)aligned;
		m->live_bytes += size;
		m->nr_live++;
		return 0;
	}
	return -ENOSPC;
}

void model_range_free(struct model_range *m, u64 start, u64 size)
{
	size_t i, n = 0;

	model_push(m, start, start + size);
	qsort(m->spans, m->nr_spans, sizeof(*m->spans), model_span_cmp);
	for (i = 0; i < m->nr_spans; i++) {
		if (n && m->spans[i].start <= m->spans[n - 1].end) {
			if (m->spans[i].end > m->spans[n - 1].end)
				m->spans[n - 1].end = m->spans[i].end;
		} else {
			m->spans[n++] = m->spans[i];
		}
	}
	m->nr_spans = n;
	m->live_bytes -= size;
	m->nr_live--;
}

void model_handles_init(struct model_handles *m, u32 tag, u32 base, u32 max_live)
{
	memset(m, 0, sizeof(*m));
	m->tag = tag;
	m->base = base;
	m->max_live = max_live;
}

void model_handles_fini(struct model_handles *m)
{
	free(m->slots);
	free(m->free_ids);
	memset(m, 0, sizeof(*m));
}

int model_handle_alloc(struct model_handles *m, void *obj, u64 *handle)
{
	u32 id;

	if (m->nr_live >= m->max_live)
		return -EMFILE;
	if (m->nr_free_ids) {
		id = m->free_ids[--m->nr_free_ids];
	} else {
		id = m->nr_slots++;
		m->slots = realloc(m->slots, m->nr_slots * sizeof(*m->slots));
		m->free_ids = realloc(m->free_ids, m->nr_slots * sizeof(*m->free_ids));
		if (!m->slots || !m->free_ids)
			abort();
		memset(&m->slots[id], 0, sizeof(m->slots[id]));
		m->slots[id].gen = m->base;
	}
	m->slots[id].gen++;
	m->slots[id].obj = obj;
	m->nr_live++;
	*handle = (u64)m->slots[id].gen << 40 | (u64)m->tag << 20 | id;
	return 0;
}

void *model_handle_lookup(const struct model_handles *m, u64 handle)
{
	u32 id = handle & 0xfffff;

	if (((handle >> 20) & 0xfffff) != m->tag || id >= m->nr_slots)
		return NULL;
	if (!m->slots[id].obj || m->slots[id].gen != handle >> 40)
		return NULL;
	return m->slots[id].obj;
}

int model_handle_free(struct model_handles *m, u64 handle, void **obj)
{
	u32 id = handle & 0xfffff;

	*obj = model_handle_lookup(m, handle);
	if (!*obj)
		return -ESTALE;
	m->slots[id].obj = NULL;
	m->nr_live--;
	if (m->slots[id].gen == 0xffffff)
		m->slots[id].retired = true;
	else
		m->free_ids[m->nr_free_ids++] = id;
	return 0;
}

int model_handle_set_gen(struct model_handles *m, u32 slot, u32 gen)
{
	if (slot >= m->nr_slots || m->slots[slot].obj || m->slots[slot].retired)
		return -EINVAL;
	if (gen < m->slots[slot].gen || gen >= 0xffffff)
		return -EINVAL;
	m->slots[slot].gen = gen;
	return 0;
}
