#!/usr/bin/env python3
"""UDP echo against the whole-system echo firmware in QEMU (firmware/ws/).

  wsfw-echo.py MACHINE ELF [-n N] [--size S] [--burst B] [--timeout S]

Starts qemu-system-arm -M MACHINE with user networking whose only forward
is a free 127.0.0.1 UDP port to the guest's port 7, waits (bounded) for the
guest to answer, then sends N datagrams (sizes 1..1472 bytes, distinct
payloads) B at a time, without waiting in between, and checks that each
comes back unchanged (answers within a burst in any order). A burst
larger than the LAN9118's RX data FIFO (2,640 words, 10,560 bytes, in
QEMU's model as in the chip's default split) loses frames: keep B * (S +
46) below that. QEMU is stopped by its PID. Prints one summary line:

  MACHINE: N sent, N answered, N identical, 0 timeouts, qemu stopped

Exit 0 when every datagram came back identical, 1 otherwise, 2 on usage.
"""
import argparse
import os
import socket
import subprocess
import sys
import time


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_qemu(machine, elf, port, log):
    return subprocess.Popen(
        ["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none",
         "-kernel", elf, "-nic",
         "user,ipv6=off,model=lan9118,hostfwd=udp:127.0.0.1:%d-:7" % port],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


def stop_qemu(q):
    if q.poll() is None:
        q.kill()
    q.wait()


def payload(i, fixed=0):
    # sizes cover 1 byte, odd lengths (checksum padding) and a full
    # 1500-byte IP datagram (1472 bytes of UDP payload), unless fixed
    sizes = (1, 2, 3, 17, 64, 255, 512, 1000, 1471, 1472)
    size = fixed or (sizes[i % len(sizes)] if i < len(sizes)
                     else 1 + (i * 37) % 1472)
    return bytes((i * 7 + k * 13) & 0xFF for k in range(size))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("machine")
    ap.add_argument("elf")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--size", type=int, default=0,
                    help="every payload this many bytes (default: 1..1472)")
    ap.add_argument("--burst", type=int, default=1,
                    help="datagrams sent before waiting for their answers")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="bound on the whole run, seconds")
    ap.add_argument("--log", default=None, help="QEMU's output (serial)")
    a = ap.parse_args()
    if a.n < 1 or a.n > 10000 or a.burst < 1 or a.burst > 64 \
            or not 0 <= a.size <= 1472:
        ap.error("-n must be 1..10000, --burst 1..64, --size 0..1472")
    if not os.path.isfile(a.elf):
        print("wsfw-echo: no such file '%s'" % a.elf, file=sys.stderr)
        return 1

    log = open(a.log or os.devnull, "wb")
    deadline = time.monotonic() + a.timeout
    q = None
    for _attempt in range(3):
        port = free_udp_port()
        q = start_qemu(a.machine, a.elf, port, log)
        time.sleep(0.3)
        if q.poll() is None:
            break
        q.wait()    # the port was taken in between: try another
    if q is None or q.poll() is not None:
        print("wsfw-echo: %s: qemu-system-arm did not start" % a.machine,
              file=sys.stderr)
        return 1

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = answered = identical = timeouts = 0
    try:
        # the guest answers once its driver is up: probe until it does
        sock.settimeout(0.2)
        up = False
        while not up and time.monotonic() < deadline and q.poll() is None:
            sock.sendto(b"probe", ("127.0.0.1", port))
            try:
                up = sock.recvfrom(2048)[0] == b"probe"
            except socket.timeout:
                pass
        if not up:
            print("wsfw-echo: %s: the guest never answered on port 7"
                  % a.machine, file=sys.stderr)
            return 1
        # answers to earlier probes may still be on their way: let them in
        # and skip them below
        sock.settimeout(2.0)
        i = 0
        while i < a.n and time.monotonic() < deadline:
            # a burst of B datagrams, then their B answers in any order
            want = {}
            for _ in range(min(a.burst, a.n - i)):
                p = payload(i, a.size)
                want[p] = want.get(p, 0) + 1
                sock.sendto(p, ("127.0.0.1", port))
                sent += 1
                i += 1
            pending = sum(want.values())
            while pending > 0:
                try:
                    d = sock.recvfrom(4096)[0]
                except socket.timeout:
                    timeouts += pending
                    break
                if d == b"probe":
                    continue
                answered += 1
                pending -= 1
                if want.get(d, 0) > 0:
                    want[d] -= 1
                    identical += 1
    finally:
        sock.close()
        stop_qemu(q)
        log.close()
    alive = True
    try:
        os.kill(q.pid, 0)
    except OSError:
        alive = False
    print("%s: %d sent, %d answered, %d identical, %d timeouts, qemu %s"
          % (a.machine, sent, answered, identical, timeouts,
             "still running" if alive else "stopped"))
    return 0 if identical == a.n and not alive else 1


if __name__ == "__main__":
    sys.exit(main())
