#!/usr/bin/env python3
"""A scripted debug probe for the record tests: serves OpenOCD's Tcl RPC or
the GDB remote serial protocol (non-stop mode) for a simulated ARMv6-M core
(Cortex-M0+, RP2040 memory map) that runs two loops, 3/4 of the time in
loop_a (0x10000100) and 1/4 in loop_b (0x10000200).

    probe-peer.py PORTFILE LOG tcl|gdb pcsr|zero|constant|nocount [PORT]

pcsr:     DWT_PCSR (0xe000101c) returns the PC of a recent instruction
zero:     DWT_PCSR reads as 0 (not implemented); halting works
constant: DWT_PCSR always reads 0x10000100; halting works
nocount:  as pcsr, but the XIP cache counters stay at 0 (a cache that
          does not count: disabled, or another bus master's view)

The RP2040's XIP cache counters (CTR_HIT 0x1400000c, CTR_ACC 0x14000010;
RP2040 Datasheet 2.6.3.2) count from their last write (which clears them,
like the chip's): 1 access per microsecond, 3 of 4 hits.

Every command is appended to LOG, so a test can tell whether the core was
halted. One connection; the peer exits when it closes (or when nothing connects within 15 s).
With PORT (a fixed port on 127.0.0.1), connections are served one after
the other until none comes for 120 s (the test stops it before).
"""
import re
import socket
import sys
import time

portfile, logpath, proto, mode = sys.argv[1:5]
fixed_port = int(sys.argv[5]) if len(sys.argv) > 5 else 0
ctr_zero = time.monotonic()
log = open(logpath, "w", buffering=1)
step = 0
demcr = 0
halted = False
nonstop = False  # all-stop until the client sends QNonStop:1


def next_pc():
    global step
    i = step
    step += 1
    base = 0x10000200 if i % 4 == 3 else 0x10000100
    return base + 2 * (i % 3)


def read_word(addr):
    global demcr
    if addr == 0xE000101C:
        if mode == "zero":
            return 0
        if mode == "constant":
            return 0x10000100
        return 0xFFFFFFFF if halted else next_pc()
    if addr == 0xE000EDFC:
        return demcr
    if addr in (0x1400000C, 0x14000010):
        if mode == "nocount":
            return 0
        acc = min(int((time.monotonic() - ctr_zero) * 1e6), 0xFFFFFFFF)
        return acc if addr == 0x14000010 else acc * 3 // 4
    return 0


def write_word(addr, v):
    global demcr, ctr_zero
    if addr == 0xE000EDFC:
        demcr = v
    if addr in (0x1400000C, 0x14000010):
        ctr_zero = time.monotonic()


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", fixed_port))
srv.listen(1)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.settimeout(15)
c = None


def tcl(cmd):
    global halted
    log.write(cmd.decode() + "\n")
    m = re.match(rb"read_memory (0x[0-9a-f]+) 32 (\d+)$", cmd)
    if cmd == b"version":
        return b"0 Open On-Chip Debugger 0.12.0 (scripted v6-M)"
    if m:
        a, n = int(m.group(1), 16), int(m.group(2))
        return b"0 " + b" ".join(b"0x%08x" % read_word(a + 4 * k) for k in range(n))
    m = re.match(rb"write_memory (0x[0-9a-f]+) 32 \{(0x[0-9a-f]+)\}$", cmd)
    if m:
        write_word(int(m.group(1), 16), int(m.group(2), 16))
        return b"0 "
    if cmd == b"halt":
        halted = True
        return b"0 "
    if cmd == b"resume":
        halted = False
        return b"0 "
    if cmd == b"reg pc":
        return b"0 pc (/32): 0x%08x" % next_pc()
    return b"1 invalid command name \"" + cmd.split()[0] + b"\""


def serve_tcl():
    buf = b""
    while True:
        d = c.recv(4096)
        if not d:
            return
        buf += d
        while b"\x1a" in buf:
            msg, buf = buf.split(b"\x1a", 1)
            m = re.match(rb'format "cp(\d+) %d %s" \[catch \{(.*)\} cp_r\] \$cp_r$', msg, re.S)
            if not m:
                c.sendall(b"bad\x1a")
                continue
            c.sendall(b"cp" + m.group(1) + b" " + tcl(m.group(2)) + b"\x1a")


def le32(v):
    return bytes([(v >> s) & 0xFF for s in (0, 8, 16, 24)]).hex().encode()


def gdb(pkt):
    """The reply to pkt, or None for none (all-stop 'c': the stop reply
    comes when the client interrupts)."""
    global halted, nonstop
    log.write(pkt.decode() + "\n")
    if pkt.startswith(b"qSupported"):
        return b"PacketSize=400;QStartNoAckMode+;QNonStop+"
    if pkt == b"QNonStop:1":
        nonstop = True
        return b"OK"
    if pkt == b"QStartNoAckMode":
        return b"OK"
    if pkt == b"?":
        if nonstop:
            return b"OK"  # non-stop: no thread is stopped
        halted = True  # all-stop: attaching stops the target
        return b"S05"
    if pkt == b"c" and not nonstop:
        halted = False
        return None
    m = re.match(rb"m([0-9a-f]+),([0-9a-f]+)$", pkt)
    if m:
        a, n = int(m.group(1), 16), int(m.group(2), 16)
        data = b"".join(le32(read_word(a + k)) for k in range(0, n, 4))
        return data[: 2 * n]
    m = re.match(rb"M([0-9a-f]+),4:([0-9a-f]{8})$", pkt)
    if m:
        write_word(int(m.group(1), 16), int.from_bytes(bytes.fromhex(m.group(2).decode()), "little"))
        return b"OK"
    if pkt == b"vCont;t":
        halted = True
        return b"OK"
    if pkt == b"vCont;c":
        halted = False
        return b"OK"
    if pkt == b"pf":
        return le32(next_pc())
    if pkt == b"D":
        return b"OK"
    return b""


def serve_gdb():
    global halted
    buf = b""
    noack = False
    while True:
        d = c.recv(4096)
        if not d:
            return
        buf += d
        while True:
            buf = buf.lstrip(b"+-")
            if buf[:1] == b"\x03":  # all-stop interrupt
                buf = buf[1:]
                log.write("^C\n")
                halted = True
                c.sendall(b"$S02#%02x" % (sum(b"S02") & 0xFF))
                continue
            m = re.match(rb"\$([^#]*)#[0-9a-fA-F]{2}", buf, re.S)
            if not m:
                break
            buf = buf[m.end():]
            pkt = m.group(1)
            out = gdb(pkt)
            if not noack:
                c.sendall(b"+")
            if pkt == b"QStartNoAckMode":
                noack = True
            if out is not None:
                c.sendall(b"$" + out + b"#%02x" % (sum(out) & 0xFF))


def serve_one():
    """One connection (socket.timeout when none comes)."""
    global c
    c, _ = srv.accept()
    c.settimeout(30)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        serve_tcl() if proto == "tcl" else serve_gdb()
    except (socket.timeout, ConnectionError):
        pass
    c.close()


try:
    serve_one()
except socket.timeout:
    sys.exit(1)
srv.settimeout(120)
while fixed_port:
    try:
        serve_one()
    except socket.timeout:
        break
