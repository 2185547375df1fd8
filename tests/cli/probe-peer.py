#!/usr/bin/env python3
"""A scripted debug probe for the record tests: serves OpenOCD's Tcl RPC or
the GDB remote serial protocol (non-stop mode) for a simulated ARMv6-M core
(Cortex-M0+, RP2040 memory map) that runs two loops, 3/4 of the time in
loop_a (0x10000100) and 1/4 in loop_b (0x10000200).

    probe-peer.py PORTFILE LOG tcl|gdb pcsr|zero|constant

pcsr:     DWT_PCSR (0xe000101c) returns the PC of a recent instruction
zero:     DWT_PCSR reads as 0 (not implemented); halting works
constant: DWT_PCSR always reads 0x10000100; halting works

Every command is appended to LOG, so a test can tell whether the core was
halted. One connection; the peer exits when it closes (or when nothing connects within 15 s).
"""
import re
import socket
import sys

portfile, logpath, proto, mode = sys.argv[1:5]
log = open(logpath, "w", buffering=1)
step = 0
demcr = 0
halted = False


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
    return 0


def write_word(addr, v):
    global demcr
    if addr == 0xE000EDFC:
        demcr = v


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.settimeout(15)
try:
    c, _ = srv.accept()
except socket.timeout:
    sys.exit(1)
c.settimeout(30)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


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
    global halted
    log.write(pkt.decode() + "\n")
    if pkt.startswith(b"qSupported"):
        return b"PacketSize=400;QStartNoAckMode+;QNonStop+"
    if pkt in (b"QStartNoAckMode", b"QNonStop:1"):
        return b"OK"
    if pkt == b"?":
        return b"OK"  # non-stop: no thread is stopped
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
    buf = b""
    noack = False
    while True:
        d = c.recv(4096)
        if not d:
            return
        buf += d
        while True:
            buf = buf.lstrip(b"+-")
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
            c.sendall(b"$" + out + b"#%02x" % (sum(out) & 0xFF))


try:
    serve_tcl() if proto == "tcl" else serve_gdb()
except (socket.timeout, ConnectionError):
    pass
