#!/usr/bin/env python3
"""gen-calltrace.py OBJDUMP_OUTPUT SEED ITERS > description

Writes a mktrace description (tests/tools/mktrace.c) of a made-up workload
over the functions of a Thumb image: each iteration calls a few functions
drawn by SEED, and each function runs from its start to its end, taking
some of its direct calls (BL / B.W to the start of another function, as
`arm-none-eabi-objdump -d` prints them) on the way, as the firmware would
fetch them. The calls are real branch sites, so a plan that moves a callee
to fast memory gets linker stubs on them."""
import random
import re
import sys

FUNC = re.compile(r"^([0-9a-f]{8}) <([^>]+)>:$")
BRANCH = re.compile(r"^ *([0-9a-f]+):\s+[0-9a-f]{4} [0-9a-f]{4}\s+(bl|b\.w)\s+([0-9a-f]+) <([^>+]+)>$")
INSN = re.compile(r"^ *([0-9a-f]+):\t([0-9a-f]{4}(?: [0-9a-f]{4})?) ")

funcs = {}   # start -> [name, end, [(site, target)]]
order = []
cur = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = FUNC.match(line)
    if m:
        a = int(m.group(1), 16)
        cur = [m.group(2), a, []] if 0x10000000 <= a < 0x11000000 else None
        if cur:
            funcs[a] = cur
            order.append(a)
        continue
    if cur is None:
        continue
    m = INSN.match(line)
    if not m:
        continue
    a = int(m.group(1), 16)
    cur[1] = max(cur[1], a + len(m.group(2).replace(" ", "")) // 2)
    b = BRANCH.match(line)
    if b:
        cur[2].append((a, int(b.group(3), 16)))

for a in order:  # only calls to the start of a known function
    funcs[a][2] = [(s, t) for s, t in funcs[a][2] if t in funcs and t != a]

rng = random.Random(int(sys.argv[2]))
roots = [a for a in order if 8 <= funcs[a][1] - a <= 1024]
rng.shuffle(roots)
roots = roots[:60]
weights = [rng.choice((1, 1, 2, 4, 8)) for _ in roots]
out = []


def run(a, end):
    if end > a:
        out.append("F 0x%08x %d %d" % (a, end - a, max(1, (end - a) // 2)))


def visit(a, depth):
    name, end, calls = funcs[a]
    pos = a
    for site, target in calls:
        if depth < 5 and rng.random() < 0.5:
            run(pos, site + 4)
            visit(target, depth + 1)
            pos = site + 4
    run(pos, end)


for it in range(int(sys.argv[3])):
    out.append("M")
    for a in rng.choices(roots, weights, k=40):
        visit(a, 0)
print("\n".join(out))
