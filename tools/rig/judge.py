#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge one guest run of svod's rig.

Reads the kernel console (ttyS0) and the userspace log (ttyS1) of one boot and
prints one line per verdict, `ok - <what>` or `not ok - <what>`, counting:
every KUnit case, every harness case, the guest reaching its end, each module
load, and the absence of kernel splats and kmemleak reports. In `test` mode
every KUnit suite must come from svod_test.ko and none from svod.ko (the guest
marks each insmod in the kernel log). With --only (SVOD_ONLY, a developer's
boot of a few harness programs) no KUnit suite is expected and each program
named must have run. A failure quotes
the log line it comes from. Exit status: 0 if nothing failed.

In `selftest` mode the guest loaded a module with a deliberately failing KUnit
case and a deliberate WARN_ON; the verdicts are then whether the judge caught
each of them, so a judge that cannot fail fails here.
"""
import argparse
import re
import sys

TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
SPLAT = re.compile(
    r"BUG:|WARNING:|KASAN|Oops|Kernel panic|general protection fault|"
    r"Call Trace:|possible recursive locking|possible circular locking|"
    r"inconsistent lock state|INFO: lockdep|lock held when returning|"
    r"soft lockup|hard LOCKUP|rcu: INFO|self-detected stall|"
    r"blocked for more than|UBSAN:|list_(add|del) corruption|"
    r"unreferenced object"
)
# t_failnth's page-allocation sweep: between these kernel log lines an
# injected page allocation failure may be reported by its caller (SLUB that
# could not grow a cache, vmalloc or the page allocator called without
# __GFP_NOWARN). Such a report and the call trace it dumps are not splats
# there; anything else is (see allowed_alloc_reports()).
SWEEP_BEGIN = "svod-failnth: page-alloc sweep begin"
SWEEP_END = "svod-failnth: page-alloc sweep end"
ALLOC_REPORT = re.compile(
    r"page allocation failure: order:|vmalloc error: size|SLUB: Unable to allocate memory")
# The only splat pattern an allocation-failure report may show.
REPORT_SPLAT = re.compile(r"^\s*Call Trace:\s*$")
# An IOMMU fault (Intel VT-d's report) or a PCIe AER report: on this rig
# each is a DMA that went wrong, a splat unless a test asked for it between
# FAULT_BEGIN and FAULT_END marks in the kernel log (t_iommu's deliberate
# wrong mapping), and such a block must hold at least one fault.
FAULT = re.compile(r"DMAR: (DRHD: handling fault|\[(DMA|INTR)|.*fault reason)|"
                   r"AER: .*error|PCIe Bus Error")
FAULT_BEGIN = re.compile(r"svod-expect-fault: begin (.*)$")
FAULT_END = "svod-expect-fault: end"
KTAP_RESULT = re.compile(r"^(\s*)(not ok|ok) (\d+) (?:- )?(.*?)(?:\s+#\s*(SKIP.*))?$")
SUBTEST = re.compile(r"^(\s*)# Subtest: (\S+)")


class Verdicts:
    def __init__(self, prefix):
        self.prefix = prefix
        self.lines = []

    def add(self, good, what, quote=None):
        line = f"{'ok' if good else 'not ok'} - {self.prefix}: {what}"
        if quote is not None and not good:
            line += f"  <<< {quote.strip()[:200]}"
        self.lines.append((good, line))

    @property
    def failed(self):
        return sum(1 for good, _ in self.lines if not good)


def read_lines(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return [TIMESTAMP.sub("", l.rstrip("\r\n")) for l in f]
    except FileNotFoundError:
        return []


INSMOD_MARK = re.compile(r"^svod-guest: insmod (\S+)")
KTAP_LINE = re.compile(r"^\s*(K?TAP version \d+|# Subtest: |(not ok|ok) \d+ )")


def module_of(line, owner):
    """The module the kernel log is printing for: init writes a mark to
    /dev/kmsg before each insmod, so every later line until the next mark
    belongs to that load (None before the first mark: boot)."""
    m = INSMOD_MARK.match(line)
    return m.group(1).rsplit("/", 1)[-1] if m else owner


def judge_kunit(v, console, expected):
    """Count every KUnit case (indent 4 under a suite); a suite that starts
    and never reports its result, or is expected and never starts, fails.
    Returns {suite: the module whose load printed it}."""
    seen = {}
    loads = {}
    owners = {}
    owner = None
    suite = None
    for line in console:
        owner = module_of(line, owner)
        m = SUBTEST.match(line)
        if m and len(m.group(1)) == 4:
            # A suite seen before ran again on a later load of its module.
            loads[m.group(2)] = loads.get(m.group(2), 0) + 1
            suite = m.group(2) + (f"[load {loads[m.group(2)]}]" if loads[m.group(2)] > 1 else "")
            seen[suite] = None
            owners[suite] = owner
            continue
        m = KTAP_RESULT.match(line)
        if not m or suite is None:
            continue
        indent, result, _, name, skip = m.groups()
        if len(indent) == 4:
            if skip:
                v.add(True, f"kunit {suite}.{name} # {skip}")
            else:
                v.add(result == "ok", f"kunit {suite}.{name}", line)
        elif len(indent) == 0 and suite.split("[")[0] == name:
            seen[suite] = result
            suite = None
    for s, result in seen.items():
        if result is None:
            v.add(False, f"kunit suite {s} never finished (crash or hang)")
    for s in expected:
        if s not in seen:
            v.add(False, f"kunit suite {s} did not run")
    return owners


def judge_test_module(v, console, expected, owners):
    """svod.ko carries no test: no KTAP line while svod.ko's load is the
    latest, on every load of it; every expected suite ran from
    svod_test.ko's load."""
    owner = None
    svod_loads = 0
    stray = None
    for line in console:
        if INSMOD_MARK.match(line):
            owner = module_of(line, owner)
            svod_loads += owner == "svod.ko"
            continue
        if owner == "svod.ko" and stray is None and KTAP_LINE.match(line):
            stray = line
    v.add(svod_loads > 0 and stray is None,
          f"svod.ko alone printed no KTAP ({svod_loads} loads checked)",
          stray if stray is not None else "no 'svod-guest: insmod .../svod.ko' mark in the kernel log")
    wrong = [f"{s} (from {owners[s]})" for s in expected if s in owners and owners[s] != "svod_test.ko"]
    v.add(not wrong, f"every kunit suite ran from svod_test.ko ({len(expected)} expected)",
          ", ".join(wrong))


SEED_LINE = re.compile(r"^\s+# (\S+): seed=(\d+) \(replay: insmod svod_test\.ko seed=(\d+)\)$")


def svod_test_loads(console):
    """Each load of svod_test.ko, in order: its insmod parameters, the seeds
    each case logged, and each case's diagnostic lines plus its result
    (without the case number, which depends on the filter)."""
    loads = []
    cur = suite = None
    pending = []
    for line in console:
        m = INSMOD_MARK.match(line)
        if m:
            cur = None
            if m.group(1).endswith("/svod_test.ko"):
                params = dict(p.split("=", 1) for p in line.split()[3:] if "=" in p)
                cur = {"params": params, "seeds": {}, "cases": {}}
                loads.append(cur)
            continue
        if cur is None:
            continue
        m = SUBTEST.match(line)
        if m and len(m.group(1)) == 4:
            suite, pending = m.group(2), []
            continue
        if suite is None:
            continue
        m = SEED_LINE.match(line)
        if m:
            seeds = cur["seeds"].setdefault((suite, m.group(1)), [])
            seeds.append(m.group(2) if m.group(2) == m.group(3) else "mismatch")
        m = KTAP_RESULT.match(line)
        if m and len(m.group(1)) == 4:
            _, result, _, name, skip = m.groups()
            cur["cases"][(suite, name)] = pending + [f"{result} {name} {skip or ''}".strip()]
            pending = []
        elif line.lstrip().startswith("#"):
            pending.append(line.strip())
    return loads


def judge_replay(v, console, harness, random_suites):
    """Every random suite logs a seed on the first load of svod_test.ko, and
    every case that logged one, loaded again with that seed and only that
    case (the guest does this), logs the same seed and the same lines and
    result. A filter naming nothing makes the load fail."""
    refused = "svod-guest: svod_test.ko filter=svod_no_such_suite refused"
    v.add(refused in harness and any(
              "svod_test: filter: no suite or case svod_no_such_suite" in l for l in console),
          "svod_test.ko refuses a filter that names nothing",
          next((l for l in harness if "filter=svod_no_such_suite" in l), "no such load"))
    loads = svod_test_loads(console)
    first = next((l for l in loads if "filter" not in l["params"]), None)
    if first is None:
        v.add(False, "kunit replay: svod_test.ko loaded without a filter")
        return
    for suite in random_suites:
        v.add(any(s == suite for s, _ in first["seeds"]),
              f"kunit {suite} logs the seed of its random cases",
              f"no 'seed=' line from {suite}")
    for (suite, kcase), seeds in first["seeds"].items():
        what = f"kunit replay {suite}.{kcase} seed={seeds[0]}: same seed line and result"
        replay = next((l for l in loads if l["params"].get("filter") == f"{suite}.{kcase}"
                       and l["params"].get("seed") == seeds[0]), None)
        if replay is None:
            v.add(False, what, "no replay load in the guest")
            continue
        want = {(suite, kcase): first["cases"].get((suite, kcase))}
        got_seeds = replay["seeds"].get((suite, kcase), [])
        good = (len(seeds) == 1 and got_seeds == seeds and replay["cases"] == want)
        v.add(good, what, " | ".join(sum(replay["cases"].values(), [])) or "the replay ran no case")


def judge_harness(v, harness, only=(), programs=()):
    """Each t_* binary runs between begin/end markers and prints TAP. With
    @only (a developer's run of a few programs), each of them must run;
    without it, each of @programs (every one the tree has: a build that
    made only some would otherwise pass)."""
    current = None
    ran = 0
    names = set()
    for line in harness:
        m = re.match(r"^svod-harness: begin (\S+)", line)
        if m:
            current = {"name": m.group(1), "plan": None, "count": 0}
            names.add(m.group(1))
            ran += 1
            continue
        m = re.match(r"^svod-harness: end (\S+) rc=(\d+)", line)
        if m and current:
            name, rc = current["name"], int(m.group(2))
            complete = current["plan"] is not None and current["plan"] == current["count"]
            v.add(complete and rc == 0,
                  f"harness {name} ran to completion (plan {current['plan']}, "
                  f"results {current['count']}, rc {rc})", line)
            current = None
            continue
        if current is None:
            continue
        m = re.match(r"^1\.\.(\d+)", line)
        if m:
            current["plan"] = int(m.group(1))
            continue
        m = KTAP_RESULT.match(line)
        if m and len(m.group(1)) == 0:
            _, result, _, name, skip = m.groups()
            current["count"] += 1
            what = f"harness {current['name']}: {name}"
            if skip:
                v.add(True, f"{what} # {skip}")
            else:
                v.add(result == "ok", what, line)
    if current:
        v.add(False, f"harness {current['name']} never ended (guest died or timed out)")
    if not ran:
        v.add(False, "harness ran (no t_* binary ran in the guest)")
    for name in only:
        if name not in names:
            v.add(False, f"harness {name} ran (named in SVOD_ONLY)", "it never began")
    if not only and programs:
        missing = sorted(set(programs) - names)
        v.add(not missing, f"every harness program of the tree ran ({len(programs)})",
              "never began: " + ", ".join(missing))


def allowed_alloc_reports(console):
    """Indexes of console lines that belong to an allocation-failure report
    between the page-alloc sweep markers, and whose SPLAT match is only the
    report's own "Call Trace:" line.

    A report starts at its ALLOC_REPORT line and ends with the call trace's
    "</TASK>" line (SLUB's report has no trace: it is its header and the
    indented lines after it). A report whose trace shows a frame of svod.ko
    ("[svod]") is not let through: svod's own allocations that can fail on
    the user's behalf must pass __GFP_NOWARN. Any other splat pattern inside
    a report (WARNING, BUG, KASAN, lockdep, Oops, ...) stays a splat and
    makes the whole report one, as does a report outside the markers.
    """
    allowed = set()
    inside = False
    i = 0
    while i < len(console):
        line = console[i]
        if SWEEP_BEGIN in line:
            inside = True
        elif SWEEP_END in line:
            inside = False
        elif inside and ALLOC_REPORT.search(line):
            block = [i]
            j = i + 1
            if "SLUB: Unable" in line:
                while j < len(console) and console[j].startswith("  "):
                    block.append(j)
                    j += 1
            else:
                while j < len(console) and SWEEP_END not in console[j]:
                    block.append(j)
                    j += 1
                    if console[j - 1].strip() == "</TASK>":
                        break
            other = any(SPLAT.search(console[k]) and not REPORT_SPLAT.match(console[k])
                        for k in block)
            if not other and not any("[svod]" in console[k] for k in block):
                allowed.update(k for k in block if REPORT_SPLAT.match(console[k]))
            i = j
            continue
        i += 1
    return allowed


def judge_faults(v, console):
    """IOMMU faults and AER reports: each outside an expected block is a
    failure; each expected block must have caught one. Returns the number
    of faults seen."""
    what = None
    caught = 0
    seen = 0
    for line in console:
        m = FAULT_BEGIN.search(line)
        if m:
            what, caught = m.group(1), 0
        elif FAULT_END in line and what is not None:
            v.add(caught > 0, f"expected IOMMU fault seen ({what})",
                  "no DMAR fault between the marks: is the IOMMU translating?")
            what = None
        elif FAULT.search(line):
            seen += 1
            if what is None:
                v.add(False, "IOMMU fault or AER report no test asked for", line)
            else:
                caught += 1
    if what is not None:
        v.add(False, f"expected IOMMU fault block ({what}) never ended")
    return seen


def find_splats(console, harness):
    allowed = allowed_alloc_reports(console)
    hits = [l for k, l in enumerate(console) if SPLAT.search(l) and k not in allowed]
    inside = False
    for line in harness:
        if line.startswith("svod-kmemleak: begin"):
            inside = True
        elif line.startswith("svod-kmemleak: end"):
            inside = False
        elif inside and line.strip():
            hits.append("kmemleak: " + line)
    return hits


def judge_sweep_selftest(s, console, splats):
    """The page-alloc sweep's allowance, on the selftest module's real
    reports (svod_selftest.c) and on made-up logs: only an allocation-failure
    report between the markers is let through, and nothing else."""
    begin = next((k for k, l in enumerate(console) if SWEEP_BEGIN in l), None)
    end = next((k for k, l in enumerate(console) if SWEEP_END in l), None)
    allowed = allowed_alloc_reports(console)
    if begin is None or end is None:
        s.add(False, "selftest module wrote the page-alloc sweep markers")
        return
    inside = [k for k in range(begin, end) if ALLOC_REPORT.search(console[k])]
    s.add(bool(inside) and bool(allowed) and all(begin < k < end for k in allowed),
          "judge lets through the allocation-failure report inside the page-alloc markers",
          f"{len(inside)} reports inside, {len(allowed)} trace lines let through")
    s.add(any("WARNING:" in l and "svod_selftest_warn_in_sweep" in l for l in splats),
          "judge reports the WARN inside the page-alloc markers")
    after = [k for k in range(end, len(console)) if ALLOC_REPORT.search(console[k])]
    traces = [k for k in range(end, len(console)) if REPORT_SPLAT.match(console[k])]
    s.add(bool(after) and bool(traces) and not any(k in allowed for k in traces),
          "judge reports the allocation-failure report after the page-alloc markers",
          f"{len(after)} reports after the end marker")

    def splat_count(lines):
        allow = allowed_alloc_reports(lines)
        return sum(1 for k, l in enumerate(lines) if SPLAT.search(l) and k not in allow)

    report = ["insmod: vmalloc error: size 1, exceeds total pages, mode:0xcc0(GFP_KERNEL)",
              "CPU: 0 PID: 1 Comm: insmod Not tainted 6.1.0 #1", "Call Trace:", " <TASK>",
              " dump_stack_lvl+0x45/0x5e", " warn_alloc+0x16a/0x1f0", " </TASK>"]
    cases = [
        ([SWEEP_BEGIN] + report + [SWEEP_END], 0, "a report inside the markers"),
        (report, 1, "a report without the markers"),
        ([SWEEP_BEGIN, SWEEP_END] + report, 1, "a report after the markers"),
        ([SWEEP_BEGIN] + report[:5] + [" svod_plan_ioctl+0x2a/0x90 [svod]"] + report[5:]
         + [SWEEP_END], 1, "a report inside the markers with a svod.ko frame"),
        ([SWEEP_BEGIN] + report[:4] + ["BUG: KASAN: slab-out-of-bounds in x"] + report[4:]
         + [SWEEP_END], 2, "a KASAN report inside an allocation report"),
        ([SWEEP_BEGIN, "WARNING: CPU: 0 PID: 1 at x.c:1 f+0x1/0x2", "Call Trace:",
          SWEEP_END], 2, "a WARNING inside the markers"),
        ([SWEEP_BEGIN, "SLUB: Unable to allocate memory on node -1, gfp=0xcc0(GFP_KERNEL)",
          "  cache: kmalloc-64, object size: 64, buffer size: 64, default order: 0",
          "  node 0: slabs: 1, objs: 64, free: 0", "INFO: lockdep is turned off.",
          SWEEP_END], 1, "lockdep INFO right after SLUB's report"),
    ]
    for lines, want, what in cases:
        got = splat_count(lines)
        s.add(got == want, f"judge counts {want} splat(s) in {what} (made-up log)",
              f"counted {got}")


def judge_fault_selftest(s):
    """judge_faults() on made-up logs: a fault no test asked for fails, one
    inside an expected block passes, and an expected block without a fault
    fails (so an IOMMU that is silently off cannot pass)."""
    fault = ["DMAR: DRHD: handling fault status reg 2",
             "DMAR: [DMA Write NO_PASID] Request device [04:00.0] fault addr 0x1000 "
             "[fault reason 0x05] PTE Write access is not set"]
    aer = ["pcieport 0000:00:03.0: AER: Corrected error received: 0000:03:00.0"]
    begin, end = "svod-expect-fault: begin edu wrong mapping", "svod-expect-fault: end"
    boot = ["DMAR: IOMMU enabled", "DMAR: Host address width 39",
            "DMAR-IR: Enabled IRQ remapping in x2apic mode"]
    cases = [
        (boot, 0, "boot's DMAR lines"),
        (boot + fault, 2, "a fault no test asked for"),
        (aer, 1, "an AER report"),
        ([begin] + fault + [end], 0, "a fault inside an expected block"),
        ([begin, end], 1, "an expected block without a fault"),
        ([begin] + fault + [end] + fault[1:], 1, "a fault after the expected block"),
        ([begin] + fault, 1, "an expected block that never ends"),
    ]
    for lines, want, what in cases:
        t = Verdicts("x")
        judge_faults(t, lines)
        s.add(t.failed == want, f"judge counts {want} fault failure(s) in {what} (made-up log)",
              f"counted {t.failed}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True)
    ap.add_argument("--console", required=True)
    ap.add_argument("--harness", required=True)
    ap.add_argument("--suites", default="")
    ap.add_argument("--random-suites", default="",
                    help="suites with random cases (they call svod_test_seed())")
    ap.add_argument("--only", default="",
                    help="SVOD_ONLY: the harness programs this boot ran alone "
                         "(no KUnit, no replays: those are not expected)")
    ap.add_argument("--programs", default="",
                    help="every harness program of the tree, comma-separated: a "
                         "full run must run each")
    ap.add_argument("--bench")
    ap.add_argument("--qemu-rc", type=int, default=0,
                    help="QEMU's exit status; 137: killed at the hard timeout")
    a = ap.parse_args()

    console = read_lines(a.console)
    harness = read_lines(a.harness)
    only = [n for n in a.only.split(",") if n]
    expected = a.suites.split() if a.mode == "test" and not only else []

    v = Verdicts(a.mode)
    if a.mode != "selftest":
        for line in harness:
            if line.startswith("svod-guest: insmod ") and " failed" in line:
                v.add(False, f"module load: {line[len('svod-guest: insmod '):]}", line)
            elif line.startswith("svod-guest: rmmod ") and " failed" in line:
                v.add(False, f"{line.split()[2]}.ko unloads", line)
    owners = judge_kunit(v, console, expected)
    if a.mode == "test" and not only:
        judge_test_module(v, console, expected, owners)
        judge_replay(v, console, harness, a.random_suites.split())
    if a.mode not in ("selftest", "demo"):
        judge_harness(v, harness, only, [n for n in a.programs.split(",") if n])
    if a.mode == "demo":
        rcs = [l for l in harness if l.startswith("svod-guest: demo rc=")]
        v.add(rcs == ["svod-guest: demo rc=0"], "svodctl demo: every step as expected",
              rcs[0] if rcs else "svodctl demo did not finish")
    splats = find_splats(console, harness)

    if a.mode == "selftest":
        # The verdicts above are the judge's own output on a run that must fail.
        caught_kunit = any(not good and "svod_rig_selftest.rig_fails_on_purpose" in line
                           for good, line in v.lines)
        caught_warn = any("WARNING:" in l and "svod_selftest" in l for l in splats)
        s = Verdicts("selftest")
        s.add(caught_kunit, "judge reports the deliberately failing KUnit case")
        s.add(caught_warn, "judge reports the deliberate WARN_ON")
        s.add(any(good for good, _ in v.lines), "judge counts the passing KUnit case")
        judge_sweep_selftest(s, console, splats)
        judge_fault_selftest(s)
        v = s
    else:
        for hit in splats:
            v.add(False, "kernel splat", hit)
        if not splats:
            v.add(True, "no kernel splat (BUG, WARNING, KASAN, lockdep, Oops, kmemleak)")
        n = judge_faults(v, console)
        if not any("IOMMU fault" in line for good, line in v.lines if not good):
            v.add(True, f"no IOMMU fault or AER report but those asked for ({n} asked for)")

    done = any(l.startswith("svod-guest: done") for l in harness)
    if a.qemu_rc == 137:
        why = "QEMU killed at the hard timeout"
    elif a.qemu_rc:
        why = f"QEMU exit status {a.qemu_rc}"
    else:
        why = harness[-1] if harness else "no output"
    v.add(done and a.qemu_rc == 0, "guest ran to its end and powered off", why)

    if a.bench:
        with open(a.bench, "w") as f:
            for line in harness:
                if line.startswith("# bench:"):
                    f.write(line + "\n")
    for _, line in v.lines:
        print(line)
    return 1 if v.failed else 0


if __name__ == "__main__":
    sys.exit(main())
