#!/usr/bin/env python3
# Traffic for `codeplace trace --qemu ... --udp 5683 --run "python3 coap-get.py"`:
# confirmable CoAP GET /test requests (RFC 7252 3, 5.10.1), one at a time, to
# $CODEPLACE_UDP_HOST:$CODEPLACE_UDP_PORT until stopped. An answer is the
# piggybacked ACK with code 2.05 (Content) and the request's message ID.
# While the guest boots, the next request goes after 1.5 s without an answer
# (QEMU's user network holds frames until the guest answers ARP and drops one
# after 1 s: never two held), then after 1 s. "SENT ANSWERED" is rewritten
# to the file named by the first argument (default coap.count) after each.
import os
import socket
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "coap.count"
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
    try:
        while True:
            r = s.recv(2048)
            if len(r) >= 4 and struct.unpack(">H", r[2:4])[0] == mid:
                # type ACK (2), code 2.05 = 0x45
                answered += (r[0] >> 4) & 3 == 2 and r[1] == 0x45
                break
    except socket.timeout:
        pass
    with open(out + ".tmp", "w") as f:
        f.write("%d %d\n" % (sent, answered))
    os.replace(out + ".tmp", out)
