# SPDX-License-Identifier: GPL-2.0
# t_cli compares `svodctl --version` with the release.
t_cli_CFLAGS := -DSVOD_VERSION='"$(shell cat $(TOP)/VERSION)"'
