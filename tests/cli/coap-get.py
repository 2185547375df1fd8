#!/usr/bin/env python3
# Traffic for `codeplace trace --qemu ... --udp 5683 --run "python3 coap-get.py"`:
# confirmable CoAP GET /test requests (RFC 7252 3, 5.10.1), one at a time, to
# $CODEPLACE_UDP_HOST:$CODEPLACE_UDP_PORT until stopped. An answer is the
# piggybacked ACK with code 2.05 (Content) and the request's message ID.
# While the guest boots, the next request goes after 1.5 s without an answer
# (QEMU's user network holds frames until the guest answers ARP and drops one
# after 1 s: never two held), then after 1 s. After an answer the next
# request waits --gap seconds (default 0.05): the server is back in recvfrom
# when it arrives, so no request lands while the last answer is still being
# sent (the contention on the stack's locks it would meet then differs from
# run to run). "SENT ANSWERED" is rewritten to the file named by the first
# argument (default coap.count) after each.
import argparse
import os
import socket
import struct
import time

ap = argparse.ArgumentParser()
ap.add_argument("count", nargs="?", default="coap.count")
ap.add_argument("--gap", type=float, default=0.05)
a = ap.parse_args()
out = a.count
addr = (os.environ["CODEPLACE_UDP_HOST"], int(os.environ["CODEPLACE_UDP_PORT"]))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
mid, sent, answered = 0, 0, 0
while True:
    mid = (mid + 1) & 0xffff
    # version 1, type CON, token length 0; code 0.01 GET; message ID;
    # option Uri-Path (delta 11, length 4) "test"
    req = struct.pack(">BBH", 0x40, 0x01, mid) + bytes([0xB4]) + b"test"
    s.sendto(req, addr)
    sent += 1
    s.settimeout(1.0 if answered else 1.5)
    got = False
    try:
        while True:
            r = s.recv(2048)
            if len(r) >= 4 and struct.unpack(">H", r[2:4])[0] == mid:
                # type ACK (2), code 2.05 = 0x45
                got = (r[0] >> 4) & 3 == 2 and r[1] == 0x45
                break
    except socket.timeout:
        pass
    answered += got
    with open(out + ".tmp", "w") as f:
        f.write("%d %d\n" % (sent, answered))
    os.replace(out + ".tmp", out)
    if got:
        time.sleep(a.gap)
