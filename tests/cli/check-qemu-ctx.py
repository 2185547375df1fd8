#!/usr/bin/env python3
"""Checks the exception contexts of a codeplace-qemu.so trace against an
independent count: QEMU's -d exec,nochain -singlestep log of the same run,
each executed instruction given the context of the function it is in (the
irq fixture keeps every context's code in functions of its own).

  check-qemu-ctx.py EXEC.LOG RECORDS.TXT NM.TXT

RECORDS.TXT is `codeplace trace --info T --records`; NM.TXT is
`arm-none-eabi-nm -n ELF`. Log lines followed by "Stopped execution of TB
chain before" their block did not run and are dropped."""
import re
import sys

CTX = {"svc": 11, "pendsv": 14, "systick": 15, "irq3": 19}


def ctx_of(name):
    for k, v in CTX.items():
        if name in (k + "_handler", "work_" + k):
            return v
    return 0


def main():
    log, recs, nm = sys.argv[1:4]
    syms = []
    for line in open(nm):
        p = line.split()
        if len(p) == 3 and p[1] in "tT":
            syms.append((int(p[0], 16) & ~1, p[2]))
    syms.sort()

    def fn(pc):
        lo, hi = 0, len(syms) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if syms[mid][0] <= pc:
                lo = mid
            else:
                hi = mid - 1
        return syms[lo][1]

    want = {}
    pend = None
    mark = [a for a, n in syms if n == "codeplace_mark"][0]
    marks = 0
    for line in open(log):
        if line.startswith("Stopped execution of TB chain before"):
            pend = None
            continue
        m = re.match(r"Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/", line)
        if not m:
            continue
        if pend is not None:
            if pend == mark:
                marks += 1
            if marks >= 40:
                break
            if marks:
                c = ctx_of(fn(pend))
                want[c] = want.get(c, 0) + 1
        pend = int(m.group(1), 16) & ~1
    got = {}
    cur = 0
    started = False
    switches = 0
    for line in open(recs):
        p = line.split()
        if p[0] == "ctx":
            cur = int(p[1])
            switches += started
        elif p[0] == "mark":
            started = True
        elif p[0] == "fetch" and started:
            got[cur] = got.get(cur, 0) + int(p[3])
    print("log:    " + " ".join("%d:%d" % kv for kv in sorted(want.items())))
    print("plugin: " + " ".join("%d:%d" % kv for kv in sorted(got.items())))
    if got != want:
        print("check-qemu-ctx: the contexts disagree", file=sys.stderr)
        return 1
    if set(got) != {0, 11, 14, 15, 19}:
        print("check-qemu-ctx: not every context was seen", file=sys.stderr)
        return 1
    print("switches: %d" % switches)
    return 0


sys.exit(main())
