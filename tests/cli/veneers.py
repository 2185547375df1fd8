#!/usr/bin/env python3
"""Long-branch stubs GNU ld made in a relinked image, from arm-none-eabi-nm.

    veneers.py NM_OUTPUT count PREFIX   the stubs in memory PREFIX
    veneers.py NM_OUTPUT addrs PREFIX   their addresses, sorted

ld names a stub __NAME_veneer after the symbol a call refers to, so two
names of one function (libm's ldexp and scalbn) called from the other
memory get two stubs; the planner models them the same way (one stub per
address and name, docs/plan.md).
"""
import sys

nm, what, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
ven = []
for line in open(nm):
    f = line.split()
    if len(f) != 3:
        continue
    name = f[2]
    if name.startswith("__") and name.endswith("_veneer") and f[0].startswith(prefix):
        ven.append(int(f[0], 16) & ~1)
if what == "count":
    print(len(ven))
else:
    for a in sorted(ven):
        print("%08x" % a)
