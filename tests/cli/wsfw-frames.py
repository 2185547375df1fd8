#!/usr/bin/env python3
"""Frame-level checks of the whole-system echo firmware's IPv4 host.

  wsfw-frames.py MACHINE ELF

Runs the firmware in qemu-system-arm with the LAN9118 on a socket netdev
(-nic socket,udp=...,localaddr=...: QEMU carries each Ethernet frame in
one UDP datagram on 127.0.0.1), so that this script is the guest's only
peer on the wire and builds every frame itself: ARP, ICMP echo, UDP echo
with and without checksums, and frames the guest must drop (bad IP or UDP
checksum, another port, another station address, a fragment). Every answer
is decoded and its checksums recomputed here. QEMU is stopped by its PID.

Prints one line per check, "ok NAME" or "FAIL NAME: why"; exit 0 when all
passed, 1 otherwise, 2 on usage errors.
"""
import argparse
import os
import socket
import struct
import subprocess
import sys
import time

HOST_MAC = bytes.fromhex("020000000001")
OTHER_MAC = bytes.fromhex("020000000099")
GUEST_MAC = bytes.fromhex("525400123456")     # QEMU's default for NIC 0
BCAST = b"\xff" * 6
HOST_IP = bytes([10, 0, 2, 2])
GUEST_IP = bytes([10, 0, 2, 15])


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(dst, ethertype, payload, src=HOST_MAC):
    return dst + src + struct.pack("!H", ethertype) + payload


def ipv4(proto, payload, src=HOST_IP, dst=GUEST_IP, ident=1, frag=0x4000,
         bad_csum=False):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident,
                      frag, 64, proto, 0, src, dst)
    c = csum(hdr) ^ (0x5555 if bad_csum else 0)
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def udp(sport, dport, data, src=HOST_IP, dst=GUEST_IP, cks="good"):
    hdr = struct.pack("!HHHH", sport, dport, 8 + len(data), 0)
    if cks == "none":
        return hdr + data
    pseudo = src + dst + struct.pack("!BBH", 0, 17, 8 + len(data))
    c = csum(pseudo + hdr + data) or 0xFFFF
    if cks == "bad":
        c ^= 0x0101
    return hdr[:6] + struct.pack("!H", c) + data


def arp_request(target=GUEST_IP):
    return eth(BCAST, 0x0806, struct.pack(
        "!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, HOST_MAC, HOST_IP,
        b"\0" * 6, target))


class Wire:
    def __init__(self, sock, peer):
        self.sock = sock
        self.peer = peer

    def send(self, frame):
        self.sock.sendto(frame, self.peer)

    def recv(self, timeout):
        """Next frame from the guest, or None."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recvfrom(4096)[0]
        except socket.timeout:
            return None


def check_ip_reply(f, proto):
    """Decodes an IPv4 reply to us; returns (ip header, payload) or a str."""
    if f is None:
        return "no answer"
    if f[0:6] != HOST_MAC or f[6:12] != GUEST_MAC:
        return "Ethernet addresses %s <- %s" % (f[0:6].hex(), f[6:12].hex())
    if struct.unpack("!H", f[12:14])[0] != 0x0800:
        return "not IPv4"
    ip = f[14:]
    ihl = (ip[0] & 15) * 4
    total = struct.unpack("!H", ip[2:4])[0]
    if ip[0] >> 4 != 4 or ihl != 20 or total > len(ip):
        return "bad IPv4 header"
    if csum(ip[:ihl]) != 0:
        return "IP header checksum wrong"
    if ip[9] != proto or ip[12:16] != GUEST_IP or ip[16:20] != HOST_IP:
        return "protocol or addresses wrong"
    return ip[:ihl], ip[ihl:total]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("machine")
    ap.add_argument("elf")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    if not os.path.isfile(a.elf):
        print("wsfw-frames: no such file '%s'" % a.elf, file=sys.stderr)
        return 1

    mine = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    mine.bind(("127.0.0.1", 0))
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    guest_port = probe.getsockname()[1]
    probe.close()
    qemu = subprocess.Popen(
        ["qemu-system-arm", "-M", a.machine, "-nographic", "-monitor", "none",
         "-serial", "none", "-kernel", a.elf, "-nic",
         "socket,model=lan9118,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d"
         % (mine.getsockname()[1], guest_port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    wire = Wire(mine, ("127.0.0.1", guest_port))
    results = []

    def check(name, why):
        results.append(why is None)
        print("ok %s" % name if why is None else "FAIL %s: %s" % (name, why))

    def silent(name, frame):
        wire.send(frame)
        f = wire.recv(0.5)
        check(name, None if f is None else "answered: %s" % f[:42].hex())

    def udp_echo(name, data, cks="good", sport=40000):
        wire.send(eth(GUEST_MAC, 0x0800,
                      ipv4(17, udp(sport, 7, data, cks=cks), ident=sport)))
        r = check_ip_reply(wire.recv(2.0), 17)
        if isinstance(r, str):
            return check(name, r)
        ip, u = r
        sp, dp, ln, c = struct.unpack("!HHHH", u[:8])
        if (sp, dp, ln) != (7, sport, 8 + len(data)) or u[8:ln] != data:
            return check(name, "ports, length or payload differ")
        if c == 0 or csum(ip[12:20] + struct.pack("!BBH", 0, 17, ln) + u[:ln]):
            return check(name, "UDP checksum wrong (0x%04x)" % c)
        check(name, None)

    deadline = time.monotonic() + a.timeout
    try:
        # ARP until the guest is up
        reply = None
        while reply is None and time.monotonic() < deadline \
                and qemu.poll() is None:
            wire.send(arp_request())
            reply = wire.recv(0.3)
        if reply is None:
            check("guest answers ARP", "no answer before the timeout")
            return 1
        while wire.recv(0.5) is not None:     # answers to earlier requests
            pass
        wire.send(arp_request())
        f = wire.recv(2.0)
        want = (HOST_MAC + GUEST_MAC + b"\x08\x06" +
                struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, GUEST_MAC,
                            GUEST_IP, HOST_MAC, HOST_IP))
        check("ARP request for 10.0.2.15 answered with the station address",
              None if f is not None and f[:42] == want else
              "got %s" % (f[:42].hex() if f else None))
        silent("ARP request for another address: no answer",
               arp_request(bytes([10, 0, 2, 16])))

        data = bytes(range(56))
        icmp = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 1) + data
        icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
        wire.send(eth(GUEST_MAC, 0x0800, ipv4(1, icmp)))
        r = check_ip_reply(wire.recv(2.0), 1)
        if isinstance(r, str):
            check("ICMP echo request answered", r)
        else:
            m = r[1]
            check("ICMP echo request answered",
                  None if m[0] == 0 and m[1] == 0 and m[4:] == icmp[4:]
                  and csum(m) == 0 else "reply %s" % m[:8].hex())
        bad = icmp[:2] + b"\0\0" + icmp[4:]
        silent("ICMP echo with a wrong checksum: dropped",
               eth(GUEST_MAC, 0x0800, ipv4(1, bad)))

        udp_echo("UDP echo, 1 byte", b"x")
        udp_echo("UDP echo, 17 bytes (odd length)", bytes(range(17)))
        udp_echo("UDP echo, 1472 bytes", bytes(i & 255 for i in range(1472)))
        udp_echo("UDP echo without a checksum (0) answered", b"nocheck",
                 cks="none")
        silent("UDP with a wrong checksum: dropped",
               eth(GUEST_MAC, 0x0800, ipv4(17, udp(40001, 7, b"bad", cks="bad"))))
        silent("IPv4 header with a wrong checksum: dropped",
               eth(GUEST_MAC, 0x0800, ipv4(17, udp(40002, 7, b"bad"),
                                           bad_csum=True)))
        silent("UDP to port 9: dropped",
               eth(GUEST_MAC, 0x0800, ipv4(17, udp(40003, 9, b"discard"))))
        silent("a fragment: dropped",
               eth(GUEST_MAC, 0x0800, ipv4(17, udp(40004, 7, b"frag"),
                                           frag=0x2000)))
        silent("to another station address: filtered",
               eth(OTHER_MAC, 0x0800, ipv4(17, udp(40005, 7, b"other"))))
        udp_echo("still answering after the drops", b"alive", sport=40006)
    finally:
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()
        mine.close()
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
