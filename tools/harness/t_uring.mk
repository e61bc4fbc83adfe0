# SPDX-License-Identifier: GPL-2.0
# t_uring waits on svod's fences with io_uring: liburing (liburing-dev,
# tools/rig/deps.sh), linked statically like every harness program.
t_uring_LDLIBS := -luring
