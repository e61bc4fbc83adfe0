#!/bin/bash
# run.sh MODE: build what the guest needs, boot it in QEMU (TCG) with two
# ivshmem-plain devices (BAR2 backed by fresh 64 MiB and 16 MiB files) and
# an edu DMA device, and judge the logs. MODE: test (our test kernel: KUnit + harness),
# stock (Debian's kernel: harness), selftest (deliberate failures),
# demo (Debian's kernel: `svodctl demo`).
# Prints judged lines (`ok - ...`/`not ok - ...`); exits non-zero on failure.
# Logs stay in build/run-MODE/ (console.log: kernel, harness.log: userspace).
set -euo pipefail
mode=${1:?usage: run.sh test|stock|selftest|demo}
top=$(cd "$(dirname "$0")/../.." && pwd)
rig=$top/tools/rig
# shellcheck source=tools/rig/lib.sh
. "$rig/lib.sh"

case $mode in
test|selftest) kind=test ;;
stock|demo) kind=stock ;;
*) echo "run.sh: unknown mode '$mode' (test|stock|selftest|demo)" >&2; exit 2 ;;
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
if [ "$kind" = test ]; then
	kernel=$kdir/arch/x86/boot/bzImage
	# vivid is built in (kernel.config): init loads the stock kernel's module
	# with these parameters.
	append="acpi=noirq vivid.node_types=0x101 vivid.no_error_inj=1"
	# An AMD Zen family: pci_p2pdma_distance() allows peer-to-peer through
	# the host bridge on such CPUs (cpu_supports_p2pdma()), and QEMU's
	# i440fx host bridge is on no list of its own.
	cpu="qemu64,family=23"
else
	kernel=/boot/vmlinuz-$(stock_release)
	# Every streaming DMA mapping bounces (swiotlb), as in a confidential
	# guest: a transfer whose pages are not synced for the CPU before it is
	# reported done shows old bytes (t_async, t_stage, t_dmashare). The test
	# kernel keeps direct mappings, so its DMA storm sees a late write land.
	append="swiotlb=force"
	cpu=qemu64
fi
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
	-machine pc -accel tcg -cpu "$cpu" -smp 2 -m 1536 -no-reboot \
	-display none -monitor none \
	-kernel "$kernel" -initrd "$out/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 kasan_multi_shot iomem=relaxed $append SVODRIG_MODE=$mode" \
	-serial "file:$out/console.log" -serial "file:$out/harness.log" \
	-object "memory-backend-file,id=shm0,mem-path=$out/ivshmem.bin,size=64M,share=on" \
	-device ivshmem-plain,memdev=shm0 \
	-device edu,dma_mask=0xffffffffffffffff \
	-object "memory-backend-file,id=shm1,mem-path=$out/ivshmem2.bin,size=16M,share=on" \
	-device ivshmem-plain,memdev=shm1 || rc=$?
echo "run: guest ran $(( $(date +%s) - start )) s, qemu rc=$rc" >&2
[ $rc = 137 ] && echo "run: QEMU killed at the ${timeout_s}s timeout" >&2

python3 "$rig/judge.py" --mode "$mode" --suites "$(kunit_suites)" \
	--random-suites "$(kunit_random_suites)" \
	--console "$out/console.log" --harness "$out/harness.log" \
	--only "${SVOD_ONLY:-}" --bench "$out/bench.txt" --qemu-rc "$rc" \
	--programs "$(cd "$top/tools/harness" && echo t_*.c t_python | sed 's/\.c//g; s/ /,/g')"
