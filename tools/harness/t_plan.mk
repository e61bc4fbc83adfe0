# SPDX-License-Identifier: GPL-2.0
# t_plan links the userspace build of the planner core, the trace generator
# and the plan invariant checker (tools/plan/).
t_plan_SRCS := $(TOP)/driver/core/tlsf.c $(TOP)/driver/core/plan.c \
	$(TOP)/tools/plan/gen.c $(TOP)/tools/plan/check.c
t_plan_CFLAGS := -I$(TOP)/tools/plan
