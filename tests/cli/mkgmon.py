#!/usr/bin/env python3
"""Writes a gmon.out the way OpenOCD's `profile` command does
(src/target/target.c, write_gmon): "gmon", version 1, 12 bytes of padding,
tag 0, then low_pc, high_pc, buckets, rate (u32 little-endian, a Cortex-M
target's byte order), "seconds" padded to 15 bytes, 's', and u16 counts.
Without --range the range is min(pc) .. max(pc)+1, as OpenOCD does.

    mkgmon.py OUT RATE PC[xCOUNT]... [--range LOW HIGH]
"""
import struct
import sys


def main():
    args = sys.argv[1:]
    rng = None
    if "--range" in args:
        i = args.index("--range")
        rng = (int(args[i + 1], 0), int(args[i + 2], 0))
        del args[i:i + 3]
    out, rate, specs = args[0], int(args[1]), args[2:]
    pcs = []
    for s in specs:
        pc, _, n = s.partition("x")
        pcs += [int(pc, 16)] * (int(n) if n else 1)
    if rng:
        lo, hi = rng
    else:
        lo, hi = min(pcs), max(pcs)
        if hi < 0xffffffff:
            hi += 1
        while hi - lo < 2:
            if hi < 0xffffffff:
                hi += 1
            else:
                lo -= 1
    space = hi - lo
    nb = min(space // 2, 128 * 1024)
    b = [0] * nb
    for pc in pcs:
        if lo <= pc < hi:
            b[(pc - lo) * nb // space] += 1
    with open(out, "wb") as f:
        f.write(b"gmon" + struct.pack("<IIII", 1, 0, 0, 0) + b"\0")
        f.write(struct.pack("<IIII", lo, hi, nb, rate))
        f.write(b"seconds".ljust(15, b"\0") + b"s")
        f.write(b"".join(struct.pack("<H", min(c, 65535)) for c in b))


main()
