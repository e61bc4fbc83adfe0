# SPDX-License-Identifier: GPL-2.0
#
# svod: `make` builds svod.ko against KDIR; `make install` installs it with
# the udev rule, group svod, svod-restore.service, svodctl, libsvod, libsvodplan, man pages and
# bash completion (`make uninstall` removes them); `make check` runs every test; `make demo`
# boots a guest and shows svod at work. Both install what they need (Debian
# 12 packages) first. `make help` lists every target.
#
# The developers' fast loop: `make check-guest KERNEL=test ONLY=t_fuzz,t_stage`
# boots one kernel (test: ours, stock: Debian's) with just those harness
# programs and prints their verdicts and `N passed, N failed` in minutes.

VERSION := $(shell cat $(CURDIR)/VERSION)
RUNNING_KDIR := $(wildcard /lib/modules/$(shell uname -r)/build)
# Default KDIR: the running kernel's build tree. Without one, building
# svod.ko stops with a message (never a silent test-kernel build): install
# the headers, or name a tree, e.g. KDIR=$$(tools/rig/kernel.sh).
KDIR ?= $(RUNNING_KDIR)

# Userspace install: PREFIX for svodctl, libsvod, libsvodplan, man pages and bash
# completion; DESTDIR for packagers (then no groupadd, depmod or udev reload:
# the package's maintainer scripts do those on the target).
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(PREFIX)/bin
MANDIR := $(PREFIX)/share/man
COMPLETIONDIR := $(PREFIX)/share/bash-completion/completions
# udev and systemd read a package's files under /usr/lib, an administrator's
# under /etc: PREFIX=/usr (a package) installs the udev rules and the group's
# sysusers.d file under /usr/lib, any other PREFIX under /etc.
CONFDIR := $(if $(filter /usr,$(PREFIX)),/usr/lib,/etc)
UDEVDIR := $(CONFDIR)/udev/rules.d
SYSUSERSDIR := $(CONFDIR)/sysusers.d
SYSTEMDUNITDIR := $(CONFDIR)/systemd/system
# The declarations svod-restore.service restores at boot live here whatever
# PREFIX is: they are the administrator's (svodctl declare --save).
SVODCONFDIR := /etc/svod

# check-guest: which kernel to boot and which harness programs to run
# (comma-separated; empty: all of them, with KUnit on the test kernel).
KERNEL ?= test
ONLY ?=
# With ONLY on the test kernel: these KUnit suites (or suite.case) too.
KUNIT ?=

.PHONY: all modules kdir tools check check-guest demo clean install uninstall help \
	install-modules install-tools install-config uninstall-modules uninstall-tools \
	uninstall-config deps selftest

all: modules

kdir:
	@[ -n "$(KDIR)" ] && [ -d "$(KDIR)" ] || { \
	echo "svod: no kernel build tree $(if $(KDIR),at KDIR=$(KDIR),for the running kernel $$(uname -r))" >&2; \
	echo "  install its headers:  apt install linux-headers-$$(uname -r)" >&2; \
	echo "  or build against another tree:  make KDIR=/path/to/build" >&2; \
	echo "  (svod's test kernel: make KDIR=\$$(tools/rig/kernel.sh), 15-30 min the first time)" >&2; \
	exit 2; }

modules: kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tools:
	$(MAKE) -C tools

deps:
	@tools/rig/deps.sh

check: deps
	@tools/rig/check.sh

selftest: deps
	@tools/rig/check.sh --selftest-only

# MAKEFLAGS would carry KERNEL= and ONLY= into the kernel's own make.
check-guest: deps
	@MAKEFLAGS= SVOD_ONLY=$(ONLY) SVOD_KUNIT=$(KUNIT) tools/rig/check.sh --guest $(KERNEL)

help:
	@echo "svod $(VERSION): make TARGET (as root for check, demo, install)"
	@echo "  all, modules     build svod.ko against KDIR (default: the running kernel's build tree)"
	@echo "  check            every test; the last line is 'N passed, N failed' (25-50 min on a new machine)"
	@echo "  check-guest      one boot: KERNEL=test|stock|direct (default test), ONLY=t_a,t_b harness programs"
	@echo "                   (default all; with ONLY no KUnit), e.g."
	@echo "                   make check-guest KERNEL=test ONLY=t_fuzz,t_stage"
	@echo "                   (KUNIT=svod_stage,...: those KUnit suites too, with ONLY)"
	@echo "  selftest         only the rig's self-test (the judge catches failures)"
	@echo "  demo             boot Debian's kernel, load svod, run a svodctl session"
	@echo "  tools            libsvod, libsvodplan, svodctl, the harness"
	@echo "  install, uninstall  svod.ko, udev rules, group and svod-restore.service (install-config), tools"
	@echo "                      (PREFIX, LIBDIR, DESTDIR)"
	@echo "  install-modules, install-tools, uninstall-modules, uninstall-tools"
	@echo "  deps             install the Debian 12 packages the rig needs"
	@echo "  clean            remove build products"
	@echo "Host tests alone: make -C tools check. Documentation/testing.rst has the rest."

demo: deps
	@tools/rig/demo.sh

install: install-modules install-config install-tools

uninstall: uninstall-modules uninstall-config uninstall-tools

# The release is the /lib/modules directory whose build link is KDIR
# (Debian's headers say 6.1.192 in kernel.release, not 6.1.0-N-amd64).
KREL = $$(for d in /lib/modules/*/; do \
	[ "$$(realpath $$d/build 2>/dev/null)" != "$$(realpath $(KDIR))" ] || basename $$d; \
	done | head -1)

install-modules: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
ifeq ($(DESTDIR),)
	@rel=$(KREL); rel=$${rel:-$$(cat $(KDIR)/include/config/kernel.release)}; \
	echo "depmod -a $$rel"; depmod -a $$rel
endif

# The udev rules, the group (sysusers.d): systemd-sysusers makes the
# group from the file where systemd runs, groupadd where it does not; and
# svod-restore.service (its ExecStart is BINDIR's svodctl), not enabled:
# it restores what `svodctl declare --save /etc/svod/declarations` saved.
install-config:
	install -D -m 0644 tools/udev/60-svod.rules $(DESTDIR)$(UDEVDIR)/60-svod.rules
	install -D -m 0644 tools/udev/61-svod-tier.rules $(DESTDIR)$(UDEVDIR)/61-svod-tier.rules
	install -D -m 0644 tools/udev/svod.sysusers $(DESTDIR)$(SYSUSERSDIR)/svod.conf
	install -d -m 0755 $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SVODCONFDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' tools/udev/svod-restore.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/svod-restore.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/svod-restore.service
ifeq ($(DESTDIR),)
	@getent group svod >/dev/null || systemd-sysusers $(SYSUSERSDIR)/svod.conf 2>/dev/null || \
		groupadd --system svod
	@udevadm control --reload-rules 2>/dev/null || echo "install: udevd not running: the rule applies from the next boot"
	@systemctl daemon-reload 2>/dev/null || true
	@echo "install: add users to group svod: usermod -aG svod USER (then log in again)"
	@echo "install: to declare tiers again at boot: svodctl declare --save $(SVODCONFDIR)/declarations;" \
		"systemctl enable svod-restore.service"
endif

install-tools:
	$(MAKE) -C tools install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

uninstall-modules:
	@for d in $(DESTDIR)/lib/modules/*/; do \
		for f in $$d/updates/svod.ko $$d/extra/svod.ko $$d/extra/svod_test.ko \
			 $$d/updates/svod_test.ko; do \
			[ ! -f $$f ] || { echo "rm $$f"; rm -f $$f; \
			[ -n "$(DESTDIR)" ] || depmod -a $$(basename $$d); }; \
		done; \
	done

uninstall-config:
	rm -f $(DESTDIR)$(UDEVDIR)/60-svod.rules $(DESTDIR)$(UDEVDIR)/61-svod-tier.rules \
		$(DESTDIR)$(SYSUSERSDIR)/svod.conf $(DESTDIR)$(SYSTEMDUNITDIR)/svod-restore.service
	@rmdir $(DESTDIR)$(SVODCONFDIR) 2>/dev/null || true
	@echo "uninstall: group svod kept (groupdel svod removes it)"

uninstall-tools:
	$(MAKE) -C tools uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# Without Kbuild: cleaning must never make kernel.sh build a test kernel.
clean:
	find driver kunit \( -name '*.o' -o -name '*.ko' -o -name '*.mod' \
		-o -name '*.mod.c' -o -name '.*.cmd' \) -delete
	rm -f svod.ko svod.mod svod.mod.c svod.mod.o svod.o .*.cmd modules.order Module.symvers
	rm -f svod_test.ko svod_test.mod svod_test.mod.c svod_test.mod.o svod_test.o
	-$(MAKE) -C tools clean
	rm -rf build
