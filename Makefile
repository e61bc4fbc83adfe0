# SPDX-License-Identifier: GPL-2.0
#
# svod: `make` builds svod.ko against KDIR; `make check` runs every test;
# `make demo` boots a guest and shows svod at work. Both install what they
# need (Debian 12 packages) first.

STOCK_KDIR := $(wildcard /lib/modules/$(shell uname -r)/build)
# Default KDIR: the running kernel's build tree, else svod's test kernel
# (built once and cached by tools/rig/kernel.sh).
KDIR ?= $(if $(STOCK_KDIR),$(STOCK_KDIR),$(shell tools/rig/kernel.sh))

.PHONY: all modules tools check demo clean install deps selftest

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tools:
	$(MAKE) -C tools

deps:
	@tools/rig/deps.sh

check: deps
	@tools/rig/check.sh

selftest: deps
	@tools/rig/check.sh --selftest-only

demo: deps
	@tools/rig/demo.sh

install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	@# The release is the /lib/modules directory whose build link is KDIR
	@# (Debian's headers say 6.1.192 in kernel.release, not 6.1.0-N-amd64).
	@rel=$$(for d in /lib/modules/*/; do \
		[ "$$(realpath $$d/build 2>/dev/null)" != "$$(realpath $(KDIR))" ] || basename $$d; \
	done | head -1); rel=$${rel:-$$(cat $(KDIR)/include/config/kernel.release)}; \
	echo "depmod -a $$rel"; depmod -a $$rel
	getent group svod >/dev/null || groupadd --system svod
	install -D -m 0644 tools/udev/60-svod.rules /etc/udev/rules.d/60-svod.rules
	@udevadm control --reload-rules 2>/dev/null || echo "install: udevd not running: the rule applies from the next boot"

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C tools clean
	rm -rf build
