#!/usr/bin/env python3
"""Per-iteration code footprint of a codeplace reference build, measured in QEMU.

Runs the ELF under qemu-system-arm with one instruction per translation
block and an exec log (-singlestep -d exec,nochain), which logs the address
of every instruction executed. Iteration K is the stretch from the K-th pass
of codeplace_mark to the next one. Prints the instructions executed and the
distinct cache lines their bytes touch (a 32-bit Thumb instruction that
straddles a line boundary touches both lines).

  firmware/footprint.py [--machine microbit] [--iteration 5] [--line 8]
                        [--functions N] build/fw/demo-microbit.elf

QEMU is stopped once iteration K has ended. Exit 0 on success, 1 when the
run ended or timed out before iteration K did, 2 on usage errors.
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
import threading


def load_segments(path):
    """PT_LOAD segments of a 32-bit little-endian ELF: (vaddr, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise ValueError("%s: not a 32-bit little-endian ELF file" % path)
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    segs = []
    for i in range(phnum):
        p_type, p_offset, p_vaddr, _pa, p_filesz = struct.unpack_from(
            "<IIIII", data, phoff + i * phentsize)
        if p_type == 1 and p_filesz:
            segs.append((p_vaddr, data[p_offset:p_offset + p_filesz]))
    return segs


def halfword(segs, addr):
    for base, blob in segs:
        if base <= addr and addr + 2 <= base + len(blob):
            return struct.unpack_from("<H", blob, addr - base)[0]
    return None


def symbols(path):
    """Function symbols from arm-none-eabi-nm: sorted (addr, size, name)."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", path],
                         check=True, capture_output=True, text=True).stdout
    funcs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "TtWw":
            funcs.append((int(f[0], 16) & ~1, int(f[1], 16), f[3]))
    return sorted(funcs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("elf")
    ap.add_argument("--machine", default="microbit")
    ap.add_argument("--iteration", type=int, default=5)
    ap.add_argument("--line", type=int, default=8, help="cache line bytes")
    ap.add_argument("--functions", type=int, default=0, metavar="N",
                    help="also list the N functions touching the most lines")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    if a.iteration < 1 or a.line < 2 or a.line & (a.line - 1):
        ap.error("--iteration must be >= 1 and --line a power of two >= 2")

    try:
        segs = load_segments(a.elf)
        funcs = symbols(a.elf)
    except (OSError, ValueError, struct.error,
            subprocess.CalledProcessError) as e:
        print("footprint: %s: cannot read: %s" % (a.elf, e), file=sys.stderr)
        return 1
    mark = [f[0] for f in funcs if f[2] == "codeplace_mark"]
    if not mark:
        print("footprint: %s has no codeplace_mark" % a.elf, file=sys.stderr)
        return 1
    mark = mark[0]

    tmp = tempfile.mkdtemp(prefix="cp-footprint.")
    fifo = os.path.join(tmp, "exec.log")
    os.mkfifo(fifo)
    qemu = subprocess.Popen(
        ["qemu-system-arm", "-M", a.machine,
         "-nographic", "-monitor", "none", "-serial", "none",
         "-semihosting-config", "enable=on,target=native",
         "-singlestep", "-d", "exec,nochain", "-D", fifo, "-kernel", a.elf],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # QEMU is our direct child: the timer and the finally clause stop it.
    timer = threading.Timer(a.timeout, qemu.kill)
    timer.start()
    marks = 0
    insns = 0
    pcs = {}
    done = False
    try:
        with open(fifo, "r", errors="replace") as log:
            for line in log:
                if not line.startswith("Trace "):
                    continue
                lb = line.find("[")
                pc = int(line[lb + 1:].split("/", 2)[1], 16)
                if pc == mark:
                    marks += 1
                    if marks == a.iteration + 1:
                        done = True
                        break
                if marks == a.iteration:
                    insns += 1
                    pcs[pc] = pcs.get(pc, 0) + 1
    finally:
        timer.cancel()
        qemu.kill()
        qemu.wait()
        os.unlink(fifo)
        os.rmdir(tmp)
    if not done:
        print("footprint: %s: the run ended before iteration %d did (%d marks)"
              % (a.elf, a.iteration, marks), file=sys.stderr)
        return 1

    lines = set()
    for pc in pcs:
        hw = halfword(segs, pc)
        size = 4 if hw is not None and (hw & 0xF800) >= 0xE800 else 2
        lines.add(pc // a.line)
        lines.add((pc + size - 1) // a.line)
    print("elf:          %s" % a.elf)
    print("machine:      %s" % a.machine)
    print("iteration:    %d (codeplace_mark pass %d to %d)"
          % (a.iteration, a.iteration, a.iteration + 1))
    print("instructions: %d executed, %d distinct addresses" % (insns, len(pcs)))
    print("footprint:    %d lines of %d bytes = %d bytes (%.1f KiB)"
          % (len(lines), a.line, len(lines) * a.line,
             len(lines) * a.line / 1024.0))
    if a.functions:
        import bisect
        starts = [f[0] for f in funcs]

        def owner(addr):
            i = bisect.bisect_right(starts, addr) - 1
            if i >= 0 and addr < funcs[i][0] + max(funcs[i][1], 1):
                return funcs[i][2]
            return "?"
        per = {}
        for ln in lines:
            name = owner(ln * a.line)
            per[name] = per.get(name, 0) + 1
        ins = {}
        for pc, n in pcs.items():
            name = owner(pc)
            ins[name] = ins.get(name, 0) + n
        print("by function (first %d by lines):  lines  instructions" % a.functions)
        for name, n in sorted(per.items(), key=lambda x: (-x[1], x[0]))[:a.functions]:
            print("  %-32s %6d %12d" % (name, n, ins.get(name, 0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
