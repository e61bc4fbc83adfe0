/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod tracepoints: one event per ALLOC, FREE, STAGE and READ, with the
 * tier's name, the handle, the size, the engine asked for and the time the
 * call took in the driver. `trace-cmd record -e svod` or
 * `perf trace -e 'svod:*'` show them; Documentation/svod.rst lists the
 * fields. Defined (CREATE_TRACE_POINTS) in driver/trace.c.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM svod

#if !defined(SVOD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SVOD_TRACE_H

#include <linux/tracepoint.h>

#include "tier.h"

TRACE_EVENT(svod_alloc,
	    TP_PROTO(const struct svod_dev_tier *tier, u64 handle, u64 size,
		     u64 align, int ret, u64 latency_ns),
	    TP_ARGS(tier, handle, size, align, ret, latency_ns),
	    TP_STRUCT__entry(__string(name, tier->spec.name)
			     __field(u32, tier)
			     __field(u64, handle)
			     __field(u64, size)
			     __field(u64, align)
			     __field(int, ret)
			     __field(u64, latency_ns)),
	    TP_fast_assign(__assign_str(name, tier->spec.name);
			   __entry->tier = tier->id;
			   __entry->handle = handle;
			   __entry->size = size;
			   __entry->align = align;
			   __entry->ret = ret;
			   __entry->latency_ns = latency_ns;),
	    TP_printk("tier=%u name=%s handle=0x%llx size=%llu align=%llu ret=%d latency_ns=%llu",
		      __entry->tier, __get_str(name), __entry->handle,
		      __entry->size, __entry->align, __entry->ret,
		      __entry->latency_ns)
);

TRACE_EVENT(svod_free,
	    TP_PROTO(const struct svod_dev_tier *tier, u64 handle, u64 size,
		     u64 latency_ns),
	    TP_ARGS(tier, handle, size, latency_ns),
	    TP_STRUCT__entry(__string(name, tier->spec.name)
			     __field(u32, tier)
			     __field(u64, handle)
			     __field(u64, size)
			     __field(u64, latency_ns)),
	    TP_fast_assign(__assign_str(name, tier->spec.name);
			   __entry->tier = tier->id;
			   __entry->handle = handle;
			   __entry->size = size;
			   __entry->latency_ns = latency_ns;),
	    TP_printk("tier=%u name=%s handle=0x%llx size=%llu latency_ns=%llu",
		      __entry->tier, __get_str(name), __entry->handle,
		      __entry->size, __entry->latency_ns)
);

DECLARE_EVENT_CLASS(svod_xfer_class,
		    TP_PROTO(const struct svod_dev_tier *tier, u64 handle, u64 offset,
			     u64 length, u64 done, u32 flags, int ret, u64 latency_ns),
		    TP_ARGS(tier, handle, offset, length, done, flags, ret, latency_ns),
		    TP_STRUCT__entry(__string(name, tier->spec.name)
				     __field(u32, tier)
				     __field(u64, handle)
				     __field(u64, offset)
				     __field(u64, length)
				     __field(u64, done)
				     __field(u32, flags)
				     __field(int, ret)
				     __field(u64, latency_ns)),
		    TP_fast_assign(__assign_str(name, tier->spec.name);
				   __entry->tier = tier->id;
				   __entry->handle = handle;
				   __entry->offset = offset;
				   __entry->length = length;
				   __entry->done = done;
				   __entry->flags = flags;
				   __entry->ret = ret;
				   __entry->latency_ns = latency_ns;),
		    TP_printk("tier=%u name=%s handle=0x%llx offset=%llu size=%llu done=%llu engine=%s ret=%d latency_ns=%llu",
			      __entry->tier, __get_str(name), __entry->handle,
			      __entry->offset, __entry->length, __entry->done,
			      __print_symbolic(__entry->flags,
					       { 0, "auto" },
					       { SVOD_XFER_CPU, "cpu" },
					       { SVOD_XFER_DMA, "dma" }),
			      __entry->ret, __entry->latency_ns)
);

DEFINE_EVENT(svod_xfer_class, svod_stage,
	     TP_PROTO(const struct svod_dev_tier *tier, u64 handle, u64 offset,
		      u64 length, u64 done, u32 flags, int ret, u64 latency_ns),
	     TP_ARGS(tier, handle, offset, length, done, flags, ret, latency_ns)
);

DEFINE_EVENT(svod_xfer_class, svod_read,
	     TP_PROTO(const struct svod_dev_tier *tier, u64 handle, u64 offset,
		      u64 length, u64 done, u32 flags, int ret, u64 latency_ns),
	     TP_ARGS(tier, handle, offset, length, done, flags, ret, latency_ns)
);

#endif /* SVOD_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src)/driver. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
