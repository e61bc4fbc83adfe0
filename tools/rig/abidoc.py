#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Static check of svod's ABI documents, Documentation/ABI/testing/*-svod.

Each file must be in the kernel's format (Documentation/ABI/README): entries
of one or more What: lines, then Date:, KernelVersion:, Contact: and
Description: in that order, each once and not empty, and an optional Users:;
no other tag. Date is "Month YYYY", KernelVersion a release such as 6.1, no
What is documented twice, and each file documents only its own tree
(sysfs-driver-svod: the PCI device's svod/ and svod_state, /sys/class/svod
and /sys/module/svod/parameters/;
configfs-svod: /sys/kernel/config/svod).

Then the documents against the source: the attribute names the driver
declares (driver/sysfs.c's tier attributes, driver/pci.c's PCI device
attributes, driver/configfs.c's
CONFIGFS_ATTR()s, every module parameter) and the one driver core file svod
documents (a tier's uevent, where its keys are read) are exactly the leaves
documented.
The guest's t_abidoc compares the trees the driver really makes.

`abidoc.py --selftest` checks that a broken entry is reported.
Prints one verdict line per check; exits 1 if any fails.
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ABI = os.path.join(TOP, "Documentation/ABI/testing")
FILES = {
    "sysfs-driver-svod": ("/sys/bus/pci/devices/<bdf>/svod", "/sys/class/svod",
                          "/sys/module/svod/parameters/", "/sys/bus/pci/devices/<bdf>/svod_state"),
    "configfs-svod": ("/sys/kernel/config/svod",),
}
FIELDS = ["Date", "KernelVersion", "Contact", "Description"]
MONTHS = ("January February March April May June July August September October "
          "November December").split()
TIER_DIR = "/sys/bus/pci/devices/<bdf>/svod/tier<id>/"
# svod's own attributes of the PCI device it is bound to (driver/pci.c).
PCI_DIR = "/sys/bus/pci/devices/<bdf>/"
# A tier is a struct device: of the files the driver core gives every device,
# svod documents uevent (its SVOD_* keys); the others (subsystem, device,
# power/) are the kernel's ABI, and the guest's t_abidoc skips them by name.
DRIVER_CORE_FILES = ("uevent",)
TAG = re.compile(r"^([A-Za-z]+):(.*)$")


def parse(text):
    """Returns (entries, errors); an entry is {"what": [...], "line": n, tag: text}."""
    entries, errors, cur, tag = [], [], None, None
    for n, line in enumerate(text.splitlines(), 1):
        m = TAG.match(line)
        if m:
            name, value = m.group(1), m.group(2).strip()
            if name == "What":
                if cur is None or tag != "What":
                    cur = {"what": [], "line": n, "order": []}
                    entries.append(cur)
                cur["what"].append(value)
            elif cur is None:
                errors.append(f"line {n}: {name}: before any What:")
                continue
            elif name in FIELDS or name == "Users":
                if name in cur:
                    errors.append(f"line {n}: {name}: twice in one entry")
                cur[name] = value
                cur["order"].append(name)
            else:
                errors.append(f"line {n}: unknown tag {name}:")
            tag = name
        elif line.strip() and (cur is None or not line[0].isspace()):
            errors.append(f"line {n}: text outside an entry or not indented: {line!r}")
        elif cur is not None and tag in cur and line.strip():
            cur[tag] += "\n" + line.strip()
    for e in entries:
        where = f"line {e['line']} ({e['what'][0]})"
        missing = [f for f in FIELDS if not e.get(f)]
        if missing:
            errors.append(f"{where}: missing or empty: {', '.join(missing)}")
        got = [f for f in e["order"] if f in FIELDS]
        if not missing and got != FIELDS:
            errors.append(f"{where}: fields out of order: {', '.join(got)}")
        if "Users" in e and e["order"][-1] != "Users":
            errors.append(f"{where}: Users: must come last")
        date = e.get("Date", "").split()
        if e.get("Date") and not (len(date) == 2 and date[0] in MONTHS and
                                  re.fullmatch(r"20\d\d", date[1])):
            errors.append(f"{where}: Date is not 'Month YYYY': {e['Date']!r}")
        if e.get("KernelVersion") and not re.fullmatch(r"\d+\.\d+(\.\d+)?", e["KernelVersion"]):
            errors.append(f"{where}: KernelVersion is not a release: {e['KernelVersion']!r}")
        for w in e["what"]:
            if not w.startswith("/") or " " in w or w.endswith("/"):
                errors.append(f"{where}: What is not a path: {w!r}")
    return entries, errors


def source_leaves():
    """The documented leaf each attribute the source declares should have."""
    sysfs = open(os.path.join(TOP, "driver/sysfs.c")).read()
    attrs = re.search(r"svod_tier_attrs\[\] = \{(.*?)\};", sysfs, re.S).group(1)
    leaves = {TIER_DIR + a for a in re.findall(r"&dev_attr_(\w+)\.attr", attrs)}
    leaves |= {TIER_DIR + a for a in DRIVER_CORE_FILES}
    pci = open(os.path.join(TOP, "driver/pci.c")).read()
    attrs = re.search(r"svod_pci_attrs\[\] = \{(.*?)\};", pci, re.S).group(1)
    leaves |= {PCI_DIR + a for a in re.findall(r"&dev_attr_(\w+)\.attr", attrs)}
    cfs = open(os.path.join(TOP, "driver/configfs.c")).read()
    where = {"dev": "/sys/kernel/config/svod/<bdf>/",
             "tier": "/sys/kernel/config/svod/<bdf>/tiers/<tier>/",
             "region": "/sys/kernel/config/svod/<bdf>/tiers/<tier>/reserved/<region>/"}
    for kind, name in re.findall(r"CONFIGFS_ATTR(?:_RO|_WO)?\(svod_cfs_(\w+)_, (\w+)\)", cfs):
        leaves.add(where[kind] + name)
    for f in sorted(os.listdir(os.path.join(TOP, "driver"))):
        if f.endswith(".c"):
            text = open(os.path.join(TOP, "driver", f)).read()
            for name in re.findall(r"^module_param(?:_named|_cb)?\((\w+),", text, re.M):
                leaves.add("/sys/module/svod/parameters/" + name)
    return leaves


class Verdicts:
    def __init__(self):
        self.rc = 0

    def add(self, good, what, details=()):
        print(f"{'ok' if good else 'not ok'} - static: {what}")
        if not good:
            self.rc = 1
            for d in list(details)[:30]:
                print(f"#   {d}")


def check():
    v = Verdicts()
    documented = {}
    for name, roots in FILES.items():
        path = os.path.join(ABI, name)
        if not os.path.exists(path):
            v.add(False, f"ABI document {name} exists", [path])
            continue
        entries, errors = parse(open(path).read())
        v.add(entries and not errors,
              f"Documentation/ABI/testing/{name}: {len(entries)} entries in the kernel's format",
              errors or ["no entry"])
        wrong = []
        for e in entries:
            for w in e["what"]:
                if w in documented:
                    wrong.append(f"{w}: documented twice ({documented[w]} and {name})")
                documented[w] = name
                if not any(w == r.rstrip("/") or w.startswith(r.rstrip("/") + "/") for r in roots):
                    wrong.append(f"{w}: not under {' or '.join(roots)}")
        v.add(not wrong, f"{name}: every What is under its tree, once", wrong)
    leaves = source_leaves()
    # Directories are documented too; only files have a leaf in the source.
    files = {w for w in documented
             if any(w.startswith(p) for p in ("/sys/module/svod/parameters/",
                                              TIER_DIR, PCI_DIR + "svod_"))
             or re.search(r"/(commit|bar|offset|size|base|align)$", w)}
    diff = [f"declared in driver/, not documented: {x}" for x in sorted(leaves - documented.keys())]
    diff += [f"documented file the source does not declare: {x}" for x in sorted(files - leaves)]
    v.add(not diff, f"ABI documents name every attribute and parameter of driver/ "
          f"({len(leaves)}), and no other", diff)
    return v.rc


def selftest():
    good = ("What:\t\t/sys/kernel/config/svod\nDate:\t\tNovember 2026\nKernelVersion:\t6.1\n"
            "Contact:\tsomeone\nDescription:\n\t\ttext\n")
    bad = {
        "missing Contact": good.replace("Contact:\tsomeone\n", ""),
        "empty Description": good.replace("\t\ttext\n", ""),
        "bad Date": good.replace("November 2026", "2026-11-30"),
        "order": good.replace("Date:\t\tNovember 2026\nKernelVersion:\t6.1\n",
                              "KernelVersion:\t6.1\nDate:\t\tNovember 2026\n"),
        "unknown tag": good + "Whatever:\tx\n",
        "unindented text": good + "stray line\n",
    }
    v = Verdicts()
    v.add(not parse(good)[1], "abidoc selftest: a well-formed entry passes", parse(good)[1])
    for what, text in bad.items():
        v.add(bool(parse(text)[1]), f"abidoc selftest: {what} is reported")
    return v.rc


if __name__ == "__main__":
    sys.exit(selftest() if sys.argv[1:] == ["--selftest"] else check())
