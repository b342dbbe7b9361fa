#!/usr/bin/env python3
"""A capture for the tests that is live before it says so: an AF_PACKET
socket bound to IFACE (every frame from then on is queued for it), then
"ready" on stdout, then COUNT received frames that match into OUT.pcap.
tshark says "Capturing on" before its capture filter is in place, and a
test that sends right after it loses its first packets.

usage: capture.py IFACE OUT.pcap COUNT MATCH[,MATCH...]
  COUNT 0: until SIGTERM, each frame written as it comes.
  MATCH: icmp-echo (IPv4 echo requests), icmp-reply (their replies),
  udp:PORT (IPv4, destination) or
  port:PORT (UDP or TCP, either end; IPv4, or IPv6 after its extension
  headers); "sent" among them: the frames
  IFACE sends instead of those it receives. On lo each frame is captured
  once (the incoming copy)."""
import os
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4
SO_RCVBUFFORCE = 33
RCVBUF = 64 << 20	# a 2 MB TCP burst, each frame's truesize counted, on a
			# slow guest (TCG) that reads it late


def v6_l4(frame):
    """IPv6's upper-layer protocol and its offset, past hop-by-hop,
    routing, destination options and a first fragment's header"""
    proto, off = frame[20], 54
    while proto in (0, 43, 60, 44) and len(frame) >= off + 8:
        if proto == 44 and struct.unpack_from("!H", frame, off + 2)[0] & ~7:
            return None, off	# a later fragment: no ports
        proto, off = frame[off], off + (8 if proto == 44 else (frame[off + 1] + 1) * 8)
    return proto, off


def matches(frame, wanted):
    if len(frame) >= 54 and frame[12:14] == b"\x86\xdd":
        proto, l4 = v6_l4(frame)
        return len(frame) >= l4 + 4 and proto in (6, 17) and any(
            m.startswith("port:") and int(m[5:]) in struct.unpack_from("!HH", frame, l4)
            for m in wanted)
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return False
    ihl = (frame[14] & 15) * 4
    proto, l4 = frame[23], 14 + ihl
    for m in wanted:
        if m == "icmp-echo" and proto == 1 and len(frame) > l4 and frame[l4] == 8:
            return True
        if m == "icmp-reply" and proto == 1 and len(frame) > l4 and frame[l4] == 0:
            return True
        if len(frame) < l4 + 4 or proto not in (6, 17):
            continue
        sport, dport = struct.unpack("!HH", frame[l4:l4 + 4])
        if m.startswith("udp:") and proto == 17 and dport == int(m[4:]):
            return True
        if m.startswith("port:") and int(m[5:]) in (sport, dport):
            return True
    return False


def main():
    iface, out, count, wanted = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
    sent = "sent" in wanted
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    try:	# root: past net.core.rmem_max, which would cap SO_RCVBUF
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
    s.bind((iface, 0))
    # every frame is flushed as written: a SIGTERM ends the capture there,
    # also one that comes while the interpreter shuts down (sys.exit would
    # raise inside threading's shutdown and print a traceback)
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    print("ready", flush=True)
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        f.flush()
        n = 0
        while not count or n < count:
            frame, addr = s.recvfrom(65535)
            if (addr[2] == PACKET_OUTGOING) != sent or not matches(frame, wanted):
                continue
            t = time.time()
            f.write(struct.pack("<IIII", int(t), int(t % 1 * 1e6), len(frame), len(frame)) + frame)
            f.flush()
            n += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
