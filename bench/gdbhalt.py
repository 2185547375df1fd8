#!/usr/bin/env python3
"""A halting PC sampler over the GDB remote protocol, written apart from
codeplace for bench/gdbstub.sh: the same exchange per sample as
`codeplace record --halt` (interrupt, stop reply, read the PC with 'p f',
continue with 'c'), the same gap after each stop, in the same ack mode.

  gdbhalt.py PORT SECONDS RATE ELF [--unbatched]

RATE 0: let the core run on average as long as each stop; else half to one
and a half periods from the start of the last stop. By default it reads the
target description first (QEMU then answers 'p') and sends each '+'
together with the next packet: per sample "\x03", "+$pf#d6", "+$c#63",
each waited for, as codeplace does. --unbatched sends each '+' alone,
skips the target description and so reads the PC with 'g' (what codeplace
did before).
Prints one JSON object: samples, seconds, rate_hz, stop_per_sample_us
and its parts (halt, read_pc, resume), waits for the stub per sample, the
samples in fw_loop_a and fw_loop_b."""
import json
import random
import socket
import subprocess
import sys
import time


def checksum(s):
    return "%02x" % (sum(s.encode()) & 0xff)


def frame(s):
    return ("$%s#%s" % (s, checksum(s))).encode()


class Stub:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.waits = 0

    def _more(self):
        self.waits += 1
        d = self.s.recv(8192)
        if not d:
            raise EOFError("the stub closed the connection")
        self.buf += d

    def ack(self):
        """Waits for the stub's '+'."""
        while True:
            while not self.buf:
                self._more()
            c, self.buf = self.buf[:1], self.buf[1:]
            if c == b"+":
                return
            if c == b"-":
                raise IOError("the stub refused a packet")

    def packet(self):
        """The next packet's payload (acks before it are skipped)."""
        while True:
            i = self.buf.find(b"$")
            j = self.buf.find(b"#", i) if i >= 0 else -1
            if i >= 0 and j >= 0 and len(self.buf) >= j + 3:
                body = self.buf[i + 1:j].decode()
                if checksum(body) != self.buf[j + 1:j + 3].decode():
                    raise IOError("bad checksum")
                self.buf = self.buf[j + 3:]
                return body
            self._more()


def functions(elf):
    out = subprocess.run(["arm-none-eabi-nm", "-S", elf], capture_output=True,
                         text=True, check=True).stdout
    f = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[3] in ("fw_loop_a", "fw_loop_b"):
            f[p[3]] = (int(p[0], 16) & ~1, int(p[1], 16))
    return f


def main():
    port, secs, rate, elf = int(sys.argv[1]), float(sys.argv[2]), \
        float(sys.argv[3]), sys.argv[4]
    unbatched = "--unbatched" in sys.argv[5:]
    fn = functions(elf)
    g = Stub(port)
    g.s.sendall(b"+" + frame("qSupported:swbreak+;hwbreak+"))
    g.ack()
    g.packet()
    if not unbatched:
        g.s.sendall(b"+" + frame("qXfer:features:read:target.xml:0,ff8"))
        g.ack()
        g.packet()
    g.s.sendall(b"+" + frame("?"))
    g.ack()
    g.packet()
    g.s.sendall(b"+" + frame("c"))
    g.ack()
    period = 1.0 / rate if rate > 0 else 0.0
    rnd = random.Random(1)
    counts = {"fw_loop_a": 0, "fw_loop_b": 0}
    n, stopped, waits0 = 0, 0.0, g.waits
    parts = [0.0, 0.0, 0.0]
    late = 0.0
    t0 = time.monotonic()
    last_start = last_end = t0
    while True:
        if n:
            u = rnd.random()
            due = (last_start + period * (0.5 + u) if period
                   else last_end + 2.0 * u * stopped / n)
            if due - t0 >= secs:
                break
            d = due - time.monotonic()
            if d > 0:  # an oversleep counts, not a stop that ran late
                time.sleep(d)
                late += max(0.0, time.monotonic() - due)
        elif time.monotonic() - t0 >= secs:
            break
        h0 = time.monotonic()
        g.s.sendall(b"\x03")
        stop = g.packet()                 # T05thread:...
        if stop[0] not in "ST":
            raise IOError("not a stop reply: " + stop)
        h1 = time.monotonic()
        if unbatched:
            g.s.sendall(b"+")
            g.s.sendall(frame("g"))
            g.ack()
            pc = int.from_bytes(bytes.fromhex(g.packet()[120:128]), "little")
            g.s.sendall(b"+")
        else:
            g.s.sendall(b"+" + frame("pf"))   # ack the stop, read the PC
            g.ack()
            pc = int.from_bytes(bytes.fromhex(g.packet()[:8]), "little")
        h2 = time.monotonic()
        if unbatched:
            g.s.sendall(frame("c"))
            g.ack()
        else:
            g.s.sendall(b"+" + frame("c"))    # ack the PC, continue
            g.ack()
        last_end = time.monotonic()
        last_start = h0
        stopped += last_end - h0
        parts[0] += h1 - h0
        parts[1] += h2 - h1
        parts[2] += last_end - h2
        n += 1
        for name, (a, size) in fn.items():
            if a <= pc < a + size:
                counts[name] += 1
    el = time.monotonic() - t0
    # stop and detach as GDB does
    g.s.sendall(b"\x03")
    g.packet()
    g.s.sendall(b"+" + frame("D"))
    g.s.close()
    k = 1e6 / n if n else 0
    print(json.dumps({
        "client": "python" + (" unbatched" if unbatched else ""),
        "samples": n, "seconds": el, "rate_hz": n / el if el else 0,
        "stop_per_sample_us": stopped * k,
        "stop_us": {"halt": parts[0] * k, "read_pc": parts[1] * k,
                    "resume": parts[2] * k},
        "late_us": late * k,
        "waits_per_sample": (g.waits - waits0) / n if n else 0,
        "fw_loop_a": counts["fw_loop_a"], "fw_loop_b": counts["fw_loop_b"]}))


if __name__ == "__main__":
    main()
