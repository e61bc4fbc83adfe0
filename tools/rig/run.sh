#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh MODE: build what the guest needs, boot it in QEMU (TCG) and judge
# the logs. The machine (Documentation/testing.rst, "The machine") is q35:
# two ivshmem-plain devices (BAR2 backed by fresh 64 MiB and 16 MiB files)
# and the edu DMA device on PCIe, the first ivshmem and edu behind one switch,
# the second behind a root port of its own, and an Intel IOMMU (VT-d) that
# translates every DMA in strict mode. MODE: test (our test kernel: KUnit +
# harness), stock (Debian's kernel: harness), direct (the test kernel with
# the IOMMU off and every streaming mapping bounced: the programs that need
# that), selftest (deliberate failures), demo (Debian's kernel: `svodctl demo`).
# Prints judged lines (`ok - ...`/`not ok - ...`); exits non-zero on failure.
# Logs stay in build/run-MODE/ (console.log: kernel, harness.log: userspace).
set -euo pipefail
mode=${1:?usage: run.sh test|stock|direct|selftest|demo}
top=$(cd "$(dirname "$0")/../.." && pwd)
rig=$top/tools/rig
# shellcheck source=tools/rig/lib.sh
. "$rig/lib.sh"

case $mode in
test|direct|selftest) kind=test ;;
stock|demo) kind=stock ;;
*) echo "run.sh: unknown mode '$mode' (test|stock|direct|selftest|demo)" >&2; exit 2 ;;
esac

# One guest at a time per work tree: runs share build/<kernel>/.
mkdir -p "$top/build"
exec 8>"$top/build/.rig-lock"
flock 8
out=$top/build/run-$mode
rm -rf "$out"
mkdir -p "$out"

kdir=$(kdir_for "$kind")
moddir=$(build_modules "$kind" "$kdir")
# The IOMMU translates every DMA, each unmap flushed at once (strict).
iommu="intel_iommu=on iommu.strict=1 iommu.passthrough=0"
SVOD_IOMMU=strict
# An Intel-like CPU for pci_p2pdma_distance(): a path through the host
# bridge is refused (q35's is on no list), one through a switch is not.
cpu=qemu64
if [ "$kind" = test ]; then
	kernel=$kdir/arch/x86/boot/bzImage
	# vivid is built in (kernel.config): init loads the stock kernel's module
	# with these parameters.
	append="acpi=noirq vivid.node_types=0x101 vivid.no_error_inj=1"
	# An AMD Zen family, whose host bridge routes peer-to-peer
	# (cpu_supports_p2pdma()): t_p2p's second device, behind its own root
	# port, gets an IOVA through the IOMMU.
	[ "$mode" = test ] && cpu="qemu64,family=23"
else
	kernel=/boot/vmlinuz-$(stock_release)
	append=""
fi
if [ "$mode" = direct ]; then
	# The same machine with the guest's IOMMU off, so DMA reaches memory
	# as a switch routes it: QEMU sends every DMA of a device to its IOMMU
	# when one translates (no peer-to-peer inside a switch), so edu's write
	# through a bus-address table lands only here. Every streaming mapping
	# bounces (swiotlb), as in a confidential guest: a transfer whose pages
	# are not synced for the CPU before it is reported done shows old bytes.
	iommu="intel_iommu=off swiotlb=force"
	SVOD_IOMMU=off
	SVOD_ONLY=${SVOD_ONLY:-t_p2p,t_iommu,t_async,t_stage}
fi
append="$append $iommu SVOD_IOMMU=$SVOD_IOMMU"
# Longer fuzzing and replays: these reach the guest's /init as environment.
for v in SVOD_FUZZ_SECONDS SVOD_FUZZ_SEED SVOD_DMA_STORM_SECONDS SVOD_SEED SVODRIG_TEST_TIMEOUT SVOD_ONLY SVOD_KUNIT; do
	if [ -n "${!v:-}" ]; then append="$append $v=${!v}"; fi
done
make -s -C "$top/tools" harness >&2
# SVOD_ONLY names harness programs: a typo would boot a guest that runs none.
for t in $(echo "${SVOD_ONLY:-}" | tr , ' '); do
	[ -x "$top/tools/harness/bin/$t" ] || [ "$t" = t_python ] || {
		echo "run.sh: SVOD_ONLY: no harness program '$t' (one of:" \
			"$(cd "$top/tools/harness/bin" && echo t_* t_python | tr ' ' ,))" >&2
		exit 2
	}
done

"$rig/mkinitramfs.sh" "$kind" "$moddir" "$out/initramfs.cpio.gz"
truncate -s 64M "$out/ivshmem.bin"
truncate -s 16M "$out/ivshmem2.bin"

timeout_s=${SVODRIG_TIMEOUT:-900}
echo "run: booting $kind kernel ($mode), hard timeout ${timeout_s}s" >&2
start=$(date +%s)
rc=0
timeout -s KILL "$timeout_s" qemu-system-x86_64 \
	-machine q35,kernel-irqchip=split -accel tcg -cpu "$cpu" -smp 2 -m 1536 -no-reboot \
	-display none -monitor none \
	-kernel "$kernel" -initrd "$out/initramfs.cpio.gz" \
	-append "console=ttyS0 printk.time=1 panic=-1 kasan_multi_shot iomem=relaxed $append SVODRIG_MODE=$mode" \
	-serial "file:$out/console.log" -serial "file:$out/harness.log" \
	-device intel-iommu,intremap=on \
	-device pcie-root-port,id=rp0,bus=pcie.0,addr=0x3,chassis=1,slot=1 \
	-device x3130-upstream,id=sw0,bus=rp0 \
	-device xio3130-downstream,id=sw0p0,bus=sw0,chassis=1,slot=2 \
	-device xio3130-downstream,id=sw0p1,bus=sw0,chassis=1,slot=3 \
	-device pcie-root-port,id=rp1,bus=pcie.0,addr=0x4,chassis=1,slot=4 \
	-object "memory-backend-file,id=shm0,mem-path=$out/ivshmem.bin,size=64M,share=on" \
	-device ivshmem-plain,memdev=shm0,bus=sw0p0 \
	-device edu,dma_mask=0xffffffffffffffff,bus=sw0p1 \
	-object "memory-backend-file,id=shm1,mem-path=$out/ivshmem2.bin,size=16M,share=on" \
	-device ivshmem-plain,memdev=shm1,bus=rp1 || rc=$?
echo "run: guest ran $(( $(date +%s) - start )) s, qemu rc=$rc" >&2
# Each harness program's wall time in the guest, longest first (figures only).
sed -n 's/^svod-harness: end \(t_[a-z_0-9]*\) rc=[0-9]* (\([0-9]*\) s)/\2 \1/p' "$out/harness.log" |
	sort -rn | awk '{ printf "run: %s %d s\n", $2, $1 }' >&2
[ $rc = 137 ] && echo "run: QEMU killed at the ${timeout_s}s timeout" >&2

python3 "$rig/judge.py" --mode "$mode" --suites "$(kunit_suites)" \
	--random-suites "$(kunit_random_suites)" \
	--console "$out/console.log" --harness "$out/harness.log" \
	--only "${SVOD_ONLY:-}" --bench "$out/bench.txt" --qemu-rc "$rc" \
	--programs "$(cd "$top/tools/harness" && echo t_*.c t_python | sed 's/\.c//g; s/ /,/g')"
