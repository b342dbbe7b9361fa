#!/usr/bin/env python3
"""Frames for tests/live/ipfix.sh, sent raw on an interface (AF_PACKET), so that
IPv6 flows need no IPv6 stack in the namespaces: bloomtap counts them at
XDP, before the stack. Heavy flows of known sizes, IPv4 and IPv6, among
one-packet flows.

usage: ipfix_traffic.py IFACE DST_MAC N ROUND
  addresses 198.18.N.1 -> 198.18.N.2 and 2001:db8:N::1 -> 2001:db8:N::2;
  ROUND changes the source ports, so each round's flows are new ones."""
import socket
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(dst_mac, v6, n, sport, dport, payload):
    udp_len = 8 + len(payload)
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
    if v6:
        src = socket.inet_pton(socket.AF_INET6, "2001:db8:%d::1" % n)
        dst = socket.inet_pton(socket.AF_INET6, "2001:db8:%d::2" % n)
        ip = struct.pack("!IHBB", 6 << 28, udp_len, 17, 64) + src + dst
        ethertype = 0x86DD
    else:
        src = socket.inet_aton("198.18.%d.1" % n)
        dst = socket.inet_aton("198.18.%d.2" % n)
        hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0, 64, 17, 0, src, dst)
        ip = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
        ethertype = 0x0800
    return dst_mac + bytes.fromhex("020000000001") + struct.pack("!H", ethertype) + ip + udp


def main():
    iface, mac, n, rnd = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", "")), \
        int(sys.argv[3]), int(sys.argv[4])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    sent = 0
    # heavy: three flows a family of 300, 200 and 100 packets of 600-byte
    # payloads; light: 60 one-packet flows a family
    for v6 in (False, True):
        for i, count in enumerate((300, 200, 100)):
            f = frame(mac, v6, n, 10000 + rnd * 100 + i, 5000 + v6, b"x" * 600)
            for _ in range(count):
                s.send(f)
                sent += 1
        for i in range(60):
            s.send(frame(mac, v6, n, 30000 + rnd * 100 + i, 7000, b"y" * 40))
            sent += 1
    print("sent %d frames" % sent)


if __name__ == "__main__":
    main()
