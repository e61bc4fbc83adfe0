#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""svod's planner against the reference Rust planner, side by side.

Builds the reference TLSF planner (seeds/000_e02b2738333224c2.txt) with
`cargo build --offline --release` into tools/plan/build/ref/ (never
committed), with its one dependency (snafu, an error derive) replaced by a
hand-written error type, and a small driver program that reads the trace
format of `svodctl plan` and prints "alloc EVENT ID OFFSET" per ALLOC and
"peak N", as svodctl does. Then, on 1M-event traces of several shapes:

  plan-only  svod_plan_run (TLSF, what SVOD_IOCTL_PLAN runs; plan_bench
             --trace) against the reference's alloc/free loop (with its
             id -> offset map), both on events already in memory; events/s
  process    `svodctl plan FILE` (tools/plan/build/plan, the same code)
             against the reference program, whole process, output to a
             file; wall time

The two programs take turns, ROUNDS times, and each figure is the best of
its turns (each plan-only turn is itself the best of 3 runs), so a busy
host slows both alike.

Both figures and their ratio are printed, and whether the alloc lines of
the two programs are byte-identical (exit status 1 if not; tools/plan's
difftest.py is the differential test proper).
Usage: refbench.py BUILD_DIR [EVENTS]
"""
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROUNDS = 3
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
SEED = os.path.normpath(os.path.join(TOP, "..", "shared", "seeds", "000_e02b2738333224c2.txt"))
if not os.path.exists(SEED):
    SEED = "/work/shared/seeds/000_e02b2738333224c2.txt"

ERROR_TYPE = """
#[derive(Debug)]
pub enum TlsfError {
    OutOfMemory { req: usize },
    UnknownOffset { offset: usize },
    DoubleFree { offset: usize },
}

impl std::fmt::Display for TlsfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsfError::OutOfMemory { req } => write!(f, "TLSF out of memory: requested {req} bytes"),
            TlsfError::UnknownOffset { offset } => write!(f, "TLSF: free of unknown offset {offset}"),
            TlsfError::DoubleFree { offset } => write!(f, "TLSF: double free at offset {offset}"),
        }
    }
}

impl std::error::Error for TlsfError {}
"""

MAIN_RS = r"""
// The reference program: trace file in, "alloc EVENT ID OFFSET" lines and
// "peak N" out, as `svodctl plan` (arena 1 TiB, block 256, lv2_cnt 32).
// `--bench FILE`: events/s of the alloc/free loop alone, best of 3.
mod tlsf;

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

enum Ev {
    Alloc { id: u32, size: usize, align: usize },
    Free { id: u32 },
}

fn num(s: &str) -> usize {
    match s.strip_prefix("0x") {
        Some(h) => usize::from_str_radix(h, 16).expect("number"),
        None => s.parse().expect("number"),
    }
}

fn parse(path: &str) -> Vec<Ev> {
    let text = std::fs::read_to_string(path).expect("trace file");
    let mut evs = Vec::new();
    for line in text.lines() {
        let mut t = line.split_whitespace();
        match t.next() {
            Some("alloc") => {
                let id = num(t.next().unwrap()) as u32;
                let size = num(t.next().unwrap());
                let align = t.next().map(num).unwrap_or(0);
                evs.push(Ev::Alloc { id, size, align });
            }
            Some("free") => evs.push(Ev::Free { id: num(t.next().unwrap()) as u32 }),
            _ => {}
        }
    }
    evs
}

fn run(evs: &[Ev], mut out: Option<&mut dyn Write>) -> usize {
    let mut a = tlsf::TlsfAllocator::new(1 << 40, 0, 256, 32);
    let mut live: HashMap<u32, usize> = HashMap::new();
    for (i, e) in evs.iter().enumerate() {
        match *e {
            Ev::Alloc { id, size, align } => {
                let off = a.alloc(size, align).expect("alloc");
                live.insert(id, off);
                if let Some(w) = out.as_mut() {
                    writeln!(w, "alloc {} {} {}", i, id, off).unwrap();
                }
            }
            Ev::Free { id } => a.free(live.remove(&id).expect("free of a live id")).expect("free"),
        }
    }
    a.peak_used()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--bench" {
        let evs = parse(&args[2]);
        let mut best = 0.0f64;
        for _ in 0..3 {
            let t = Instant::now();
            std::hint::black_box(run(&evs, None));
            let r = evs.len() as f64 / t.elapsed().as_secs_f64();
            if r > best {
                best = r;
            }
        }
        println!("{}", best);
        return;
    }
    let evs = parse(&args[1]);
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let peak = run(&evs, Some(&mut w));
    writeln!(w, "peak {}", peak).unwrap();
}
"""


def reference_source():
    src = open(SEED).read().split("\n", 1)[1]  # first line: the crate's name
    src = src[:src.index("#[cfg(test)]")]
    src = src.replace("use snafu::Snafu;\n", "")
    src = re.sub(r"#\[derive\(Debug, Snafu\)\]\npub enum TlsfError \{.*?\n\}\n",
                 ERROR_TYPE.strip() + "\n", src, flags=re.S)
    src = re.sub(r"(\w+)Snafu \{ (\w+)(?:: (\w+))? \}\.fail\(\)",
                 lambda m: f"Err(TlsfError::{m.group(1)} {{ {m.group(2)}"
                           f"{': ' + m.group(3) if m.group(3) else ''} }})", src)
    if "Snafu" in src or "snafu" in src:
        sys.exit("refbench: the seed's snafu use was not fully replaced")
    return src


def build_reference(out):
    d = os.path.join(out, "ref")
    os.makedirs(os.path.join(d, "src"), exist_ok=True)
    files = {
        "Cargo.toml": '[package]\nname = "tlsf-ref"\nversion = "0.1.0"\nedition = "2024"\n\n'
                      '[dependencies]\n\n[profile.release]\nopt-level = 3\n',
        "src/tlsf.rs": reference_source(),
        "src/main.rs": MAIN_RS,
    }
    for name, text in files.items():
        p = os.path.join(d, name)
        if not os.path.exists(p) or open(p).read() != text:
            with open(p, "w") as f:
                f.write(text)
    subprocess.run(["cargo", "build", "--offline", "--release", "--quiet",
                    "--manifest-path", os.path.join(d, "Cargo.toml")], check=True)
    return os.path.join(d, "target", "release", "tlsf-ref")


def gen_trace(shape, events, rng):
    """Events as text lines. Every buffer is freed before the end."""
    lines = []
    live = []
    nid = 0
    if shape == "interval":
        # Buffers live for an exponentially distributed number of events.
        heap = []
        import heapq
        t = 0
        while len(lines) < events - 2 * len(heap) - 2:
            size = int(2 ** rng.uniform(6, 22))
            lines.append(f"alloc {nid} {size}")
            heapq.heappush(heap, (t + int(rng.expovariate(1 / 600)) + 1, nid))
            nid += 1
            t += 1
            while heap and heap[0][0] <= t:
                lines.append(f"free {heapq.heappop(heap)[1]}")
        while heap:
            lines.append(f"free {heapq.heappop(heap)[1]}")
        return lines
    while len(lines) + len(live) < events:
        if live and (len(live) > 2000 or rng.random() < 0.5):
            i = rng.randrange(len(live))
            live[i], live[-1] = live[-1], live[i]
            lines.append(f"free {live.pop()}")
            continue
        if shape == "random":
            lines.append(f"alloc {nid} {rng.randrange(1, 1 << 20)}")
        else:  # aligned: sizes multiples of 256, alignments 256 .. 64 KiB
            lines.append(f"alloc {nid} {256 * rng.randrange(1, 4096)} {256 << rng.randrange(0, 9)}")
        live.append(nid)
        nid += 1
    lines.extend(f"free {i}" for i in live)
    return lines


def wall(cmd, out_path):
    with open(out_path, "w") as f:
        t = time.monotonic()
        subprocess.run(cmd, stdout=f, check=True)
        return time.monotonic() - t


def alloc_lines(path):
    with open(path) as f:
        return [l for l in f if l.startswith("alloc ")]


def main():
    out = os.path.abspath(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
    if not shutil.which("cargo"):
        print("plan-ref: cargo not found, reference comparison skipped")
        return 0
    ref = build_reference(out)
    plan = os.path.join(out, "plan")
    bench = os.path.join(out, "plan_bench")
    tdir = os.path.join(out, "traces")
    os.makedirs(tdir, exist_ok=True)
    rc = 0
    for shape in ("network", "random", "aligned", "interval"):
        trace = os.path.join(tdir, f"{shape}-{events}.txt")
        if not os.path.exists(trace):
            if shape == "network":
                with open(trace, "w") as f:
                    subprocess.run([os.path.join(out, "plan_gen"), "1", str(events)],
                                   stdout=f, check=True)
            else:
                with open(trace + ".tmp", "w") as f:
                    f.write("\n".join(gen_trace(shape, events, random.Random(shape))) + "\n")
                os.rename(trace + ".tmp", trace)
        # Alternate the two, best of ROUNDS each, so a busy host slows both alike.
        svod_rate = ref_rate = 0.0
        svod_s = ref_s = float("inf")
        svod_out, ref_out = trace + ".svod.out", trace + ".ref.out"
        for _ in range(ROUNDS):
            svod_rate = max(svod_rate, float(subprocess.run(
                [bench, "--trace", trace], check=True, capture_output=True,
                text=True).stdout.split()[0]))
            ref_rate = max(ref_rate, float(subprocess.run(
                [ref, "--bench", trace], check=True, capture_output=True, text=True).stdout))
            svod_s = min(svod_s, wall([plan, trace], svod_out))
            ref_s = min(ref_s, wall([ref, trace], ref_out))
        n = sum(1 for _ in open(trace))
        same = alloc_lines(svod_out) == alloc_lines(ref_out)
        print(f"plan-ref: {shape:8s} {n} events: svod_plan_run {svod_rate / 1e6:6.2f} Mev/s, "
              f"reference {ref_rate / 1e6:6.2f} Mev/s, ratio {svod_rate / ref_rate:5.2f}; "
              f"process svodctl plan {svod_s:.3f} s, reference {ref_s:.3f} s, "
              f"ratio {ref_s / svod_s:5.2f}; offsets identical: {'yes' if same else 'NO'}")
        rc |= not same
    return rc


if __name__ == "__main__":
    sys.exit(main())
