# SPDX-License-Identifier: GPL-2.0
# t_abidoc carries the ABI documents it checks (the guest has no source
# tree): t_abidoc.c assembles them in with .incbin from SVOD_ABI_DIR.
t_abidoc_CFLAGS := -DSVOD_ABI_DIR='"$(TOP)/Documentation/ABI/testing"'
$(BIN)/t_abidoc: $(TOP)/Documentation/ABI/testing/sysfs-driver-svod \
	$(TOP)/Documentation/ABI/testing/configfs-svod
