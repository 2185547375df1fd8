# udp-wait.py PORT [INTERVAL] [LIMIT]: waits for a UDP echo service on
# 127.0.0.1:PORT without flooding it: one datagram, then INTERVAL seconds
# (0.5) for its echo, at most LIMIT datagrams (120). A Zephyr guest that
# boots while datagrams queue up runs out of RX packets (t7301), so this
# stays at 2 datagrams a second. Prints "answered after N probes" and
# exits 0, or exits 1.
import socket, sys

port = int(sys.argv[1])
interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 120
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(interval)
for n in range(1, limit + 1):
    s.sendto(b"udp-wait %d" % n, ("127.0.0.1", port))
    try:
        if s.recv(2048).startswith(b"udp-wait "):
            print("answered after %d probes" % n)
            sys.exit(0)
    except socket.timeout:
        pass
print("no answer to %d probes" % limit)
sys.exit(1)
