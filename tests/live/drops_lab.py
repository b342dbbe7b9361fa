#!/usr/bin/env python3
"""The drops test's packets: each frame built here, sent with AF_PACKET and
written to a pcap as sent, so that `bloomtap trace` is asked about exactly
those packets. IPv4 and UDP (IPv6 and UDP with IPv6 addresses), addresses
from 198.18.0.0/15 and 2001:db8::/32.

usage:
  drops_lab.py send IFACE SRC_MAC DST_MAC OUT.pcap COUNT SRC DST DPORT
               [--ttl N] [--df] [--size BYTES] [--bad-csum] [--tag N]
               [--bad-ipcsum] [--proto N] [--ext hbh,dst,rt,frag]
      COUNT frames, IP IDs and payloads unique (tag * 65536 + i), one
      after another; prints the count sent. --tcp: segments of one TCP
      flow instead (ACK, consecutive sequence numbers, DF), numbered from
      --start (to go on with a flow). --flow: UDP of one flow (source port
      30000 + tag) rather than one flow a packet. --bad-ipcsum: a wrong
      IPv4 header checksum; --proto N: the IPv4 protocol field (the UDP
      datagram behind it all the same). --ext: IPv6's extension headers
      before UDP, in the order named (EXT6).
  drops_lab.py sink PORT [--rcvbuf BYTES] [--hold]
      a UDP socket bound to PORT: prints "ready"; reads every datagram as
      it comes, or with --hold none until stdin closes; then prints the
      tags of the datagrams read, one a line, then "done".
  drops_lab.py capture-out IFACE OUT.pcap PORT
      outgoing IPv4 TCP frames to or from PORT into OUT.pcap: prints
      "ready", stops after a frame with RST (the sender's last word).
  drops_lab.py tcp-send DST PORT BYTES SECONDS
      connects, sends what the socket takes for SECONDS (the peer's data
      is dropped: nothing is acknowledged), then resets the connection.
  drops_lab.py tcp-accept PORT
      listens on PORT, accepts and reads until the peer goes; "ready"."""
import os
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def frame(src_mac, dst_mac, src, dst, dport, ident, tag, ttl, df, size, bad, sport=None,
          bad_ip=False, proto=17):
    payload = struct.pack("!Q", tag)
    payload += bytes((tag + i) & 0xFF for i in range(max(0, size - 28 - len(payload))))
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    udp_len = 8 + len(payload)
    if sport is None:
        sport = 40000 + tag % 20000
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + payload
    c = csum(s + d + struct.pack("!BBH", 0, 17, udp_len) + udp) or 0xFFFF
    if bad:
        c = (c + 0x1111) & 0xFFFF or 1
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, ident, 0x4000 if df else 0,
                     ttl, proto, 0, s, d)
    ip = ip[:10] + struct.pack("!H", csum(ip) ^ (0x1111 if bad_ip else 0)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + udp


# IPv6 extension headers by name (--ext): type, and the bytes after the
# next-header byte (their length byte first). Routing is type 0 with no
# segment left (the receiver goes on to the next header); the fragment
# header is an atomic fragment (RFC 6946), its ID the packet's tag.
EXT6 = {
    "hbh": (0, lambda tag: bytes([0, 1, 4, 0, 0, 0, 0])),
    "dst": (60, lambda tag: bytes([1, 1, 12]) + bytes(12)),
    "rt": (43, lambda tag: bytes([2, 0, 0]) + bytes(4) + bytes(range(16))),
    "frag": (44, lambda tag: bytes([0, 0, 0]) + struct.pack("!I", tag & 0xFFFFFFFF)),
}


def ext6(names, tag, last):
    """The chain of extension headers named, its first type and bytes."""
    out, nh = b"", last
    for name in reversed(names):
        t, body = EXT6[name]
        out, nh = bytes([nh]) + body(tag) + out, t
    return nh, out


def frame6(src_mac, dst_mac, src, dst, dport, tag, hops, size, ext=()):
    """IPv6 and UDP: the tag in the payload and the flow label; ext: the
    extension headers before UDP (EXT6's names)."""
    payload = struct.pack("!Q", tag)
    payload += bytes((tag + i) & 0xFF for i in range(max(0, size - 48 - len(payload))))
    s, d = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
    udp_len = 8 + len(payload)
    udp = struct.pack("!HHHH", 40000 + tag % 20000, dport, udp_len, 0) + payload
    c = csum(s + d + struct.pack("!IxxxB", udp_len, 17) + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    nh, eh = ext6(ext, tag, 17)
    ip = struct.pack("!IHBB16s16s", 6 << 28 | (tag & 0xFFFFF), len(eh) + udp_len, nh, hops, s, d)
    return dst_mac + src_mac + b"\x86\xdd" + ip + eh + udp


def frame_tcp(src_mac, dst_mac, src, dst, dport, ident, tag, i, size):
    """Segment i of a TCP flow: ACK, consecutive sequence numbers and IP
    IDs, DF: what GRO merges."""
    payload = struct.pack("!Q", tag) + bytes((tag + j) & 0xFF for j in range(size - 8))
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    seq = 1000000 + i * len(payload)
    tcp = struct.pack("!HHIIBBHHH", 40000 + (tag >> 16), dport, seq, 1, 5 << 4, 0x10, 502,
                      0, 0) + payload
    c = csum(s + d + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), ident, 0x4000, 64, 6, 0, s, d)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + tcp


def pcap_header(f):
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))


def pcap_write(f, fr):
    t = time.time()
    f.write(struct.pack("<IIII", int(t), int(t % 1 * 1e6), len(fr), len(fr)) + fr)


def opt(args, name, default=None, flag=False):
    if name not in args:
        return default
    i = args.index(name)
    if flag:
        del args[i]
        return True
    v = args[i + 1]
    del args[i:i + 2]
    return v


def send(args):
    ttl = int(opt(args, "--ttl", 64))
    df = opt(args, "--df", False, True)
    size = int(opt(args, "--size", 64))
    bad = opt(args, "--bad-csum", False, True)
    tag0 = int(opt(args, "--tag", 1)) * 65536
    tcp = opt(args, "--tcp", False, True)
    start = int(opt(args, "--start", 0))
    one_flow = opt(args, "--flow", False, True)
    bad_ip = opt(args, "--bad-ipcsum", False, True)
    proto = int(opt(args, "--proto", 17))
    ext = [e for e in opt(args, "--ext", "").split(",") if e]
    iface, smac, dmac, out, count, src, dst, dport = args
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    with open(out, "wb") as f:
        pcap_header(f)
        for i in range(start, start + int(count)):
            if ":" in src:
                fr = frame6(mac(smac), mac(dmac), src, dst, int(dport), tag0 + i, ttl, size, ext)
            elif tcp:
                fr = frame_tcp(mac(smac), mac(dmac), src, dst, int(dport), (tag0 + i) & 0xFFFF,
                               tag0, i, size)
            else:
                fr = frame(mac(smac), mac(dmac), src, dst, int(dport), (tag0 + i) & 0xFFFF,
                           tag0 + i, ttl, df, size, bad,
                           30000 + (tag0 >> 16) if one_flow else None, bad_ip, proto)
            s.send(fr)
            pcap_write(f, fr)
    print(count)


def sink(args):
    rcvbuf = opt(args, "--rcvbuf")
    hold = opt(args, "--hold", False, True)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(rcvbuf))
    s.bind(("0.0.0.0", int(args[0])))
    s.setblocking(False)
    print("ready", flush=True)
    tags = []

    def drain():
        while True:
            try:
                tags.append(struct.unpack("!Q", s.recv(65535)[:8])[0])
            except BlockingIOError:
                return

    if hold:
        sys.stdin.read()
    else:
        while True:
            r, _, _ = select.select([s, sys.stdin], [], [])
            if sys.stdin in r:
                break
            drain()
    drain()
    for t in tags:
        print(t)
    print("done", flush=True)


def capture_out(args):
    iface, out, port = args[0], args[1], int(args[2])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
    s.bind((iface, 0))
    print("ready", flush=True)
    with open(out, "wb") as f:
        pcap_header(f)
        while True:
            fr, addr = s.recvfrom(65535)
            if addr[2] != PACKET_OUTGOING or len(fr) < 54 or fr[12:14] != b"\x08\x00":
                continue
            ihl = (fr[14] & 15) * 4
            if fr[23] != 6:
                continue
            sport, dport = struct.unpack("!HH", fr[14 + ihl:18 + ihl])
            if port not in (sport, dport):
                continue
            pcap_write(f, fr)
            if fr[14 + ihl + 13] & 0x04:	# RST
                break
    print("done", flush=True)


def tcp_send(args):
    dst, port, size, secs = args[0], int(args[1]), int(args[2]), float(args[3])
    s = socket.create_connection((dst, port), timeout=10)
    s.setblocking(False)
    data, sent, end = b"x" * size, 0, time.time() + secs
    while time.time() < end:
        try:
            sent += s.send(data[sent:]) if sent < size else 0
        except BlockingIOError:
            pass
        time.sleep(0.01)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print(sent)


def tcp_accept(args):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", int(args[0])))
    ls.listen(1)
    print("ready", flush=True)
    c, _ = ls.accept()
    try:
        while c.recv(65536):
            pass
    except OSError:
        pass


def main():
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    cmd, args = sys.argv[1], sys.argv[2:]
    {"send": send, "sink": sink, "capture-out": capture_out, "tcp-send": tcp_send,
     "tcp-accept": tcp_accept}[cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
