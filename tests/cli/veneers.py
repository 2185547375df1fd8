#!/usr/bin/env python3
"""Long-branch stubs GNU ld made in a relinked image, from arm-none-eabi-nm.

    veneers.py NM_OUTPUT count PREFIX   distinct functions stubbed in memory PREFIX
    veneers.py NM_OUTPUT last PREFIX    per such function, its last stub's address

ld names a stub __NAME_veneer after the symbol a call refers to, so two
names of one function (libm's ldexp and scalbn) called from the other
memory get two stubs; the planner models one stub per function (docs/plan.md),
which is what this script groups by.
"""
import sys

nm, what, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
addr = {}
ven = []
for line in open(nm):
    f = line.split()
    if len(f) != 3:
        continue
    a, name = int(f[0], 16) & ~1, f[2]
    if name.startswith("__") and name.endswith("_veneer"):
        if f[0].startswith(prefix):
            ven.append((a, name[2:-7]))
    else:
        addr.setdefault(name, a)
groups = {}
for a, target in ven:
    groups.setdefault(addr.get(target, target), []).append(a)
if what == "count":
    print(len(groups))
else:
    for g in sorted(max(v) for v in groups.values()):
        print("%08x" % g)
