#!/usr/bin/env python3
"""Checks a trace (as `codeplace trace --info T --records` prints it)
against binutils' disassembly of the ELF: every fetch run starts on an
instruction and holds exactly NINSN instructions in LEN bytes; every flash
read comes right after the fetch of a load instruction, and a PC-relative
literal load reads the address objdump computes for it.
usage: check-trace.py ELF RECORDS"""
import re
import subprocess
import sys

elf, recs = sys.argv[1], sys.argv[2]
dis = subprocess.run(["arm-none-eabi-objdump", "-d", elf],
                     capture_output=True, text=True, check=True).stdout
insn = {}  # addr -> (mnemonic, operands)
line_re = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f]{4}(?: [0-9a-f]{4})?) *\t(\S+)\s*(.*)$")
nxt = {}
for line in dis.splitlines():
    m = line_re.match(line)
    if m and not m.group(3).startswith("."):
        a = int(m.group(1), 16)
        insn[a] = (m.group(3), m.group(4))
        nxt[a] = a + (4 if " " in m.group(2) else 2)

bad = 0
last_insn = None
nreads = nruns = 0
for line in open(recs):
    f = line.split()
    if f[0] == "fetch":
        a, ln, n = int(f[1], 16), int(f[2]), int(f[3])
        nruns += 1
        if a not in insn:
            print("run at 0x%x does not start on an instruction" % a); bad += 1
            continue
        cur, k = a, 0
        while cur < a + ln:
            k += 1
            last_insn = cur
            cur = nxt.get(cur, a + ln + 1)
        if cur != a + ln or k != n:
            print("run 0x%x+%d: %d instructions by objdump, trace says %d"
                  % (a, ln, k, n)); bad += 1
    elif f[0] == "read":
        nreads += 1
        ra = int(f[1], 16)
        if last_insn is None:
            print("read 0x%x before any fetch" % ra); bad += 1
            continue
        mn, ops = insn[last_insn]
        if not re.match(r"(ld|pop|tb|vld|vpop)", mn):
            print("read 0x%x after %s %s at 0x%x" % (ra, mn, ops, last_insn)); bad += 1
            continue
        m = re.search(r"\[pc, #(-?\d+)\]\s*@ \(?([0-9a-f]+)", ops)
        if m and mn.startswith("ldr") and ra != int(m.group(2), 16):
            print("literal load at 0x%x reads 0x%x, objdump says 0x%s"
                  % (last_insn, ra, m.group(2))); bad += 1
    if bad > 10:
        break
print("%d runs, %d reads checked, %d problems" % (nruns, nreads, bad))
sys.exit(1 if bad or not nreads else 0)
