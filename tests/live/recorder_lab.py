#!/usr/bin/env python3
"""The drop recorder test's frames that describe themselves, and the check
that a pcapng's every packet is whole.

usage:
  recorder_lab.py flood IFACE SRC_MAC DST_MAC SRC DST COUNT
      COUNT IPv4/UDP frames, frames 0 to 4095 again and again; frame i: IP ID i, to port 5001 or 5002 as
      port_of(i) says (a hash of i: neighbours in a ring differ), frame
      length size_of(i) (100 to 1399 bytes), its payload i as 4 bytes then
      i's low byte to the end. Prints the count sent.
  recorder_lab.py check HEAD REASON_5001 REASON_5002 FILE.pcapng...
      every packet of the flood's (UDP source port 40000) in each file
      whole: its length the one its index
      (payload) says, its IP ID, its port, its IP length, its comment's
      reason that of its port, each payload byte its index's, its
      captured length min(length, HEAD). Prints "records R bad B files F"
      and the first bad ones."""
import socket
import struct
import sys


PERIOD = 4096          # frames built; sent round and round


def port_of(i):
    return 5001 + ((i * 2654435761) >> 7 & 1)


def size_of(i):
    return 100 + (i * 37) % 1300


def csum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(smac, dmac, src, dst, i):
    n = size_of(i) - 14 - 20 - 8
    payload = struct.pack("!I", i) + bytes([i & 0xFF]) * (n - 4)
    udp = struct.pack("!HHHH", 40000, port_of(i), 8 + n, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xFFFF, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dmac + smac + b"\x08\x00" + ip + udp


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def flood(iface, smac, dmac, src, dst, count):
    """frames 0 .. PERIOD - 1 built first, then sent round and round: the
    drop rate the sender's loop allows, not its building"""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    frames = [frame(mac(smac), mac(dmac), src, dst, i) for i in range(min(PERIOD, int(count)))]
    send = s.send
    for i in range(int(count)):
        send(frames[i % PERIOD])
    print(count)


def packets(path):
    """(caplen, origlen, data, comment) of each enhanced packet block"""
    b = open(path, "rb").read()
    o = 0
    while o + 12 <= len(b):
        t, ln = struct.unpack_from("<II", b, o)
        if ln < 12 or o + ln > len(b):
            raise ValueError("%s: a block cut at %d" % (path, o))
        if t == 6:
            _, _, _, cl, ol = struct.unpack_from("<IIIII", b, o + 8)
            data = b[o + 28:o + 28 + cl]
            p = o + 28 + (cl + 3) // 4 * 4
            comment = ""
            while p + 4 <= o + ln - 4:
                code, olen = struct.unpack_from("<HH", b, p)
                if code == 0:
                    break
                if code == 1:
                    comment = b[p + 4:p + 4 + olen].decode()
                p += 4 + (olen + 3) // 4 * 4
            yield cl, ol, data, comment
        o += ln


def whole(head, reasons, cl, ol, d, comment):
    if len(d) < 46:
        return "too short"
    i = struct.unpack_from("!I", d, 42)[0]
    ipid, = struct.unpack_from("!H", d, 18)
    tot, = struct.unpack_from("!H", d, 16)
    dport, = struct.unpack_from("!H", d, 36)
    why = []
    if ol != size_of(i):
        why.append("length %d, index %d's %d" % (ol, i, size_of(i)))
    if ipid != i & 0xFFFF:
        why.append("IP ID %d" % ipid)
    if tot != ol - 14:
        why.append("IP length %d" % tot)
    if dport != port_of(i):
        why.append("port %d" % dport)
    if "dropped: %s," % reasons[port_of(i)] not in comment:
        why.append("comment %r" % comment[:40])
    if cl != min(ol, head):
        why.append("captured %d" % cl)
    if d[46:] != bytes([i & 0xFF]) * (len(d) - 46):
        why.append("payload bytes not index %d's" % i)
    return "; ".join("frame %d: %s" % (i, w) for w in why)


def check(head, r1, r2, files):
    reasons = {5001: r1, 5002: r2}
    n = bad = 0
    shown = []
    for f in files:
        for cl, ol, d, comment in packets(f):
            if len(d) < 36 or d[34:36] != b"\x9c\x40":
                continue        # not the flood's: another section's drop
            n += 1
            why = whole(int(head), reasons, cl, ol, d, comment)
            if why:
                bad += 1
                if len(shown) < 5:
                    shown.append("%s: %s" % (f, why))
    print("records %d bad %d files %d" % (n, bad, len(files)))
    for s in shown:
        print("  " + s)


if __name__ == "__main__":
    if sys.argv[1] == "flood":
        flood(*sys.argv[2:8])
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
