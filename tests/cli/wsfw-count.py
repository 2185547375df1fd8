#!/usr/bin/env python3
"""Independent count of the whole-system echo firmware's work per echo.

  wsfw-count.py MACHINE ELF [-n N] [--size B] [--gap MS] [--line BYTES]
                [--cache SIZE,WAYS,LINE]

Runs the firmware in qemu-system-arm with one instruction per translation
block and an exec log (-singlestep -d exec,nochain; QEMU 7.2 has no
one-insn-per-tb accelerator property), user networking forwarding a free
127.0.0.1 UDP port to the guest's port 7, and sends N echo requests of B
bytes one at a time (the next one GAP ms after the answer to the previous
one, so that the guest is idle in WFI when each request arrives).

Which exec-log lines count: every "Trace" line is one translation block
that QEMU entered, here one instruction; a "Stopped execution of TB chain
before ... [PC]" line right after it means that block did not run (an
interrupt or exit request was seen at its start), and a "cpu_io_recompile:
rewound execution of TB to PC" line means it was restarted: both drop the
Trace line before them. Iteration K runs from the K-th executed instruction
at codeplace_mark's address to the next one. Each is one of:
  idle          the request came while the system idled (the idle
                thread's code ran) and no SysTick interrupt came in between
  tick          the SysTick handler ran (and the housekeeping thread)
  back-to-back  the next request was already there when the network
                thread looked (no idle), e.g. when the host was slow
                to run QEMU's vCPU thread
  after back-to-back
                an idle iteration right after a back-to-back one: the
                interrupt of that request may have left the semaphore
                given, which costs one more pass of the network loop

The report gives, for the iterations between echo requests (the probes
that wait for the guest to come up are left out): the instructions of each
and the distinct LINE-byte lines their bytes touch (a 32-bit instruction
across a line boundary touches both). Every idle iteration must agree
exactly on both figures, or the script fails and says in which functions
they differ. No part of codeplace is used.

--cache SIZE,WAYS,LINE (SIZE in bytes, or with a K suffix) also runs the
executed instructions' addresses, in the order they ran, through a small
set-associative LRU cache model of that geometry (set = line number modulo
the number of sets; every line an instruction's bytes touch is one access)
from the first mark on, and reports the misses of each idle iteration that
follows an idle one: those start from the cache state an identical
iteration left, so they must all agree, or the script fails. Instruction
fetches only: the exec log holds no data reads.

Exit 0 with the report, 1 when the run failed or the figures disagree,
2 on usage errors.
"""
import argparse
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time


def load_segments(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise ValueError("not a 32-bit little-endian ELF file")
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    segs = []
    for i in range(phnum):
        p_type, p_offset, p_vaddr, _pa, p_filesz = struct.unpack_from(
            "<IIIII", data, phoff + i * phentsize)
        if p_type == 1 and p_filesz:
            segs.append((p_vaddr, data[p_offset:p_offset + p_filesz]))
    return segs


def symbols(path):
    """{name: (address, size)} from arm-none-eabi-nm."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", path],
                         check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4:
            syms[f[3]] = (int(f[0], 16) & ~1, int(f[1], 16))
        elif len(f) == 3:
            syms[f[2]] = (int(f[0], 16) & ~1, 0)
    return syms


class Counter:
    """Reads the exec log; splits it into iterations at the marker."""

    def __init__(self, mark, systick, idle, segs, line, cache=None):
        self.mark = mark
        self.cache = cache       # LRU model, or None
        self.systick = systick
        self.idle = idle         # (start, end) of the idle thread's code
        self.segs = segs
        self.line = line
        self.sizes = {}
        self.trace_lines = 0
        self.stopped = 0
        self.rewound = 0
        self.unmatched = 0
        self.marks = 0
        self.iters = []          # (marks index, insns, lines, kind, pcs, misses)
        self._insns = 0
        self._pcs = {}
        self._tick = False
        self._idle = False
        self._misses0 = 0

    def size(self, pc):
        s = self.sizes.get(pc)
        if s is None:
            s = 2
            for base, blob in self.segs:
                if base <= pc and pc + 2 <= base + len(blob):
                    hw, = struct.unpack_from("<H", blob, pc - base)
                    s = 4 if (hw & 0xF800) >= 0xE800 else 2
                    break
            self.sizes[pc] = s
        return s

    def executed(self, pc):
        if pc == self.mark:
            if self.marks > 0:
                lines = set()
                for p in self._pcs:
                    lines.add(p // self.line)
                    lines.add((p + self.size(p) - 1) // self.line)
                kind = "tick" if self._tick else \
                    "idle" if self._idle else "back-to-back"
                if kind == "idle" and self.iters and \
                        self.iters[-1][3] == "back-to-back":
                    kind = "after back-to-back"
                misses = None
                if self.cache is not None:
                    misses = self.cache.misses - self._misses0
                self.iters.append((self.marks, self._insns,
                                   frozenset(lines), kind, self._pcs, misses))
            self.marks += 1
            self._insns = 0
            self._pcs = {}
            self._tick = False
            self._idle = False
            if self.cache is not None:
                self._misses0 = self.cache.misses
        if self.marks == 0:
            return
        if self.cache is not None:
            first = pc // self.cache.line
            self.cache.access(first)
            last = (pc + self.size(pc) - 1) // self.cache.line
            if last != first:
                self.cache.access(last)
        self._insns += 1
        self._pcs[pc] = self._pcs.get(pc, 0) + 1
        if pc == self.systick:
            self._tick = True
        elif self.idle[0] <= pc < self.idle[1]:
            self._idle = True

    def run(self, log):
        pending = None
        for text in log:
            if text.startswith("Trace "):
                if pending is not None:
                    self.executed(pending)
                lb = text.find("[")
                pending = int(text[lb + 1:].split("/", 2)[1], 16)
                self.trace_lines += 1
            elif text.startswith("Stopped execution of TB chain before"):
                lb = text.find("[")
                pc = int(text[lb + 1:text.find("]", lb)], 16)
                if pending == pc:
                    pending = None
                    self.stopped += 1
                else:
                    self.unmatched += 1
            elif text.startswith("cpu_io_recompile: rewound execution of TB"):
                pc = int(text.rsplit(None, 1)[-1], 16)
                if pending == pc:
                    pending = None
                    self.rewound += 1
                else:
                    self.unmatched += 1
        # the last Trace line may have been cut short: not counted


class LRUCache:
    """Set-associative, LRU replacement, allocate on every miss."""

    def __init__(self, size, ways, line):
        self.line = line
        self.ways = ways
        self.nsets = size // (ways * line)
        self.sets = [[] for _ in range(self.nsets)]   # MRU last
        self.misses = 0

    def access(self, lineno):
        ways = self.sets[lineno % self.nsets]
        if lineno in ways:
            ways.remove(lineno)
        else:
            self.misses += 1
            if len(ways) == self.ways:
                del ways[0]
        ways.append(lineno)


def parse_cache(spec):
    """SIZE,WAYS,LINE -> (size, ways, line) or None when malformed."""
    f = spec.split(",")
    if len(f) != 3:
        return None
    try:
        size = int(f[0][:-1]) * 1024 if f[0][-1:] in ("K", "k") else int(f[0])
        ways, line = int(f[1]), int(f[2])
    except ValueError:
        return None
    if size <= 0 or ways <= 0 or line < 2 or line & (line - 1) or \
            size % (ways * line):
        return None
    nsets = size // (ways * line)
    if nsets & (nsets - 1):
        return None
    return size, ways, line


def by_function(syms, pcs):
    """Instructions per function (the nearest symbol at or below)."""
    import bisect
    funcs = sorted((v[0], k) for k, v in syms.items())
    starts = [f[0] for f in funcs]
    out = {}
    for pc, n in pcs.items():
        i = bisect.bisect_right(starts, pc) - 1
        name = funcs[i][1] if i >= 0 else "?"
        out[name] = out.get(name, 0) + n
    return out


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def traffic(port, n, size, gap, deadline):
    """Returns (probes answered, echoes sent, echoes identical)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.settimeout(0.5)
        probes = 0
        while time.monotonic() < deadline:
            sock.sendto(b"probe", ("127.0.0.1", port))
            try:
                if sock.recvfrom(2048)[0] == b"probe":
                    probes += 1
                    break
            except socket.timeout:
                pass
        if probes == 0:
            return 0, 0, 0
        # late answers to earlier probes: each was one more echo handled
        sock.settimeout(1.0)
        try:
            while True:
                if sock.recvfrom(2048)[0] == b"probe":
                    probes += 1
        except socket.timeout:
            pass
        sent = identical = 0
        sock.settimeout(5.0)
        for i in range(n):
            if time.monotonic() >= deadline:
                break
            p = bytes((i + k) & 0xFF for k in range(size))
            sock.sendto(p, ("127.0.0.1", port))
            sent += 1
            try:
                identical += sock.recvfrom(4096)[0] == p
            except socket.timeout:
                pass
            time.sleep(gap / 1000.0)
        return probes, sent, identical
    finally:
        sock.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("machine")
    ap.add_argument("elf")
    ap.add_argument("-n", type=int, default=50, help="echo requests")
    ap.add_argument("--size", type=int, default=64, help="UDP payload bytes")
    ap.add_argument("--gap", type=float, default=10.0,
                    help="ms between an answer and the next request")
    ap.add_argument("--line", type=int, default=8, help="line bytes")
    ap.add_argument("--cache", metavar="SIZE,WAYS,LINE",
                    help="also count misses per echo in an LRU cache model")
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args()
    geometry = None
    if a.cache is not None:
        geometry = parse_cache(a.cache)
        if geometry is None:
            ap.error("--cache SIZE,WAYS,LINE: SIZE bytes (or K) = WAYS x LINE "
                     "x a power-of-two number of sets, LINE a power of two")
    if a.n < 3 or a.n > 10000 or not 1 <= a.size <= 1472 or a.gap < 0 \
            or a.line < 2 or a.line & (a.line - 1):
        ap.error("-n 3..10000, --size 1..1472, --gap >= 0, "
                 "--line a power of two >= 2")
    try:
        segs = load_segments(a.elf)
        syms = symbols(a.elf)
    except (OSError, ValueError, struct.error,
            subprocess.CalledProcessError) as e:
        print("wsfw-count: %s: cannot read: %s" % (a.elf, e), file=sys.stderr)
        return 1
    for s in ("codeplace_mark", "k_systick_handler", "idle_entry"):
        if s not in syms:
            print("wsfw-count: %s has no %s" % (a.elf, s), file=sys.stderr)
            return 1
    idle = (syms["idle_entry"][0], syms["idle_entry"][0] + syms["idle_entry"][1])
    counter = Counter(syms["codeplace_mark"][0], syms["k_systick_handler"][0],
                      idle, segs, a.line,
                      LRUCache(*geometry) if geometry else None)

    tmp = tempfile.mkdtemp(prefix="cp-wsfw-count.")
    fifo = os.path.join(tmp, "exec.log")
    os.mkfifo(fifo)
    port = free_udp_port()
    qemu = subprocess.Popen(
        ["qemu-system-arm", "-M", a.machine, "-nographic", "-monitor", "none",
         "-serial", "none", "-kernel", a.elf, "-nic",
         "user,ipv6=off,model=lan9118,hostfwd=udp:127.0.0.1:%d-:7" % port,
         "-singlestep", "-d", "exec,nochain", "-D", fifo],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + a.timeout
    killer = threading.Timer(a.timeout + 10.0, qemu.kill)
    killer.start()
    reader_error = []

    def read():
        try:
            with open(fifo, "r", errors="replace") as log:
                counter.run(log)
        except Exception as e:     # reported below, never lost
            reader_error.append(e)
    reader = threading.Thread(target=read)
    reader.start()
    try:
        t0 = time.monotonic()
        probes, sent, identical = traffic(port, a.n, a.size, a.gap, deadline)
        elapsed = time.monotonic() - t0
        time.sleep(0.2)
    finally:
        killer.cancel()
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()
        reader.join(30.0)
        os.unlink(fifo)
        os.rmdir(tmp)
    if reader_error or reader.is_alive():
        print("wsfw-count: reading the exec log failed: %s" % reader_error,
              file=sys.stderr)
        return 1
    if sent != a.n or identical != a.n:
        print("wsfw-count: %s: %d of %d echoes sent, %d came back identical"
              % (a.machine, sent, a.n, identical), file=sys.stderr)
        return 1

    # marks 1..probes are the probes; probes+1 .. probes+n the echoes
    first, last = probes + 1, probes + a.n
    its = [it for it in counter.iters if first <= it[0] < last]
    if counter.marks < last or len(its) != a.n - 1:
        print("wsfw-count: %s: %d marks in the exec log, expected at least %d"
              % (a.machine, counter.marks, last), file=sys.stderr)
        return 1
    quiet = [it for it in its if it[3] == "idle"]
    ticked = [it for it in its if it[3] == "tick"]
    busy = [it for it in its if it[3] == "back-to-back"]
    after = [it for it in its if it[3] == "after back-to-back"]
    print("machine:        %s" % a.machine)
    print("elf:            %s" % a.elf)
    print("exec log:       %d Trace lines, %d dropped (Stopped execution), "
          "%d dropped (rewound), %d unmatched"
          % (counter.trace_lines, counter.stopped, counter.rewound,
             counter.unmatched))
    print("traffic:        %d probes, %d echoes of %d bytes, all identical, "
          "%.1f s" % (probes, a.n, a.size, elapsed))
    print("iterations:     %d (marks %d..%d): %d idle, %d tick, "
          "%d back-to-back, %d after back-to-back"
          % (len(its), first, last, len(quiet), len(ticked), len(busy),
             len(after)))
    if counter.unmatched:
        print("wsfw-count: %d drop lines matched no Trace line"
              % counter.unmatched, file=sys.stderr)
        return 1
    if len(quiet) < 3:
        print("wsfw-count: fewer than 3 idle iterations", file=sys.stderr)
        return 1
    counts = sorted(set(it[1] for it in quiet))
    lines = set(it[2] for it in quiet)
    sizes = sorted(set(len(ls) for ls in lines))
    if len(counts) != 1 or len(lines) != 1:
        print("idle:           instructions %s, lines %s: they disagree"
              % (counts, sizes))
        # say where they differ: instructions per function against the
        # most common count
        common = max(counts, key=lambda k: sum(1 for it in quiet if it[1] == k))
        base = by_function(syms, next(it[4] for it in quiet if it[1] == common))
        for k in counts:
            if k == common:
                continue
            other = by_function(syms, next(it[4] for it in quiet if it[1] == k))
            diff = ["%s %+d" % (f, other.get(f, 0) - base.get(f, 0))
                    for f in sorted(set(base) | set(other))
                    if other.get(f, 0) != base.get(f, 0)]
            print("  %d vs %d: %s" % (k, common, ", ".join(diff)))
        print("wsfw-count: %s: the idle iterations disagree"
              % a.machine, file=sys.stderr)
        return 1
    n_lines = sizes[0]
    print("per echo:       %d instructions, %d lines of %d bytes (%d bytes), "
          "in all %d idle iterations"
          % (counts[0], n_lines, a.line, n_lines * a.line, len(quiet)))
    for name, group in (("tick", ticked), ("back-to-back", busy),
                        ("after b-t-b", after)):
        if group:
            extra = {}
            for it in group:
                extra[it[1] - counts[0]] = extra.get(it[1] - counts[0], 0) + 1
            print("%-15s %d iterations, instructions against idle: %s"
                  % (name + ":", len(group),
                     " ".join("%+d (x%d)" % (k, v)
                              for k, v in sorted(extra.items()))))
    if geometry:
        # idle iterations right after an idle one: same start state
        steady = [it for i, it in enumerate(its)
                  if it[3] == "idle" and i > 0 and its[i - 1][3] == "idle"]
        misses = sorted(set(it[5] for it in steady))
        spec = "%d,%d,%d" % geometry
        if len(steady) < 2:
            print("wsfw-count: fewer than 2 idle iterations after an idle "
                  "one: no miss figure", file=sys.stderr)
            return 1
        if len(misses) != 1:
            print("cache:          %s lru: misses per idle echo %s: they "
                  "disagree" % (spec, misses))
            print("wsfw-count: %s: the idle iterations' misses disagree"
                  % a.machine, file=sys.stderr)
            return 1
        print("cache:          %s lru, instruction fetches only: %d misses "
              "per idle echo, in all %d idle iterations after an idle one "
              "(marks %s)" % (spec, misses[0], len(steady),
                              ",".join(str(it[0]) for it in steady)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
