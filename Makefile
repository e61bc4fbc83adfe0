# SPDX-License-Identifier: GPL-2.0
#
# svod: `make` builds svod.ko against KDIR; `make check` runs every test;
# `make demo` boots a guest and shows svod at work. Both install what they
# need (Debian 12 packages) first.

RUNNING_KDIR := $(wildcard /lib/modules/$(shell uname -r)/build)
# Default KDIR: the running kernel's build tree, else svod's test kernel
# (built once and cached by tools/rig/kernel.sh). Only targets that build
# svod.ko expand it.
KDIR ?= $(if $(RUNNING_KDIR),$(RUNNING_KDIR),$(shell tools/rig/kernel.sh))

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

# Without Kbuild: cleaning must never make kernel.sh build a test kernel.
clean:
	find driver kunit \( -name '*.o' -o -name '*.ko' -o -name '*.mod' \
		-o -name '*.mod.c' -o -name '.*.cmd' \) -delete
	rm -f svod.ko svod.mod svod.mod.c svod.mod.o svod.o .*.cmd modules.order Module.symvers
	rm -f svod_test.ko svod_test.mod svod_test.mod.c svod_test.mod.o svod_test.o
	-$(MAKE) -C tools clean
	rm -rf build
