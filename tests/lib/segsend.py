#!/usr/bin/env python3
"""TCP segments for the egress tests, written whole onto an interface with
an AF_PACKET socket: the kernel's TCP would never send them so.

usage: segsend.py vnet IFACE DST_MAC SRC DST PORT SEGS SIZE
         one GSO skb of SEGS segments of SIZE payload bytes, through a
         PACKET_VNET_HDR socket (virtio_net_hdr: TCPV4, gso_size SIZE,
         hdr_len 54): the kernel marks it SKB_GSO_DODGY and leaves its
         gso_segs 0, as for a VM's skb through tap or vhost-net;
       segsend.py fixedid IFACE DST_MAC SRC DST PORT SEGS SIZE
         SEGS frames of one flow, consecutive sequence numbers, DF and one
         IPv4 ID for all (as some stacks send): what GRO merges into a
         SKB_GSO_TCP_FIXEDID skb."""
import socket
import struct
import sys

SOL_PACKET = 263
PACKET_VNET_HDR = 15
VIRTIO_NET_HDR_F_NEEDS_CSUM = 1
VIRTIO_NET_HDR_GSO_TCPV4 = 1
IP_ID = 0x4242
SPORT = 40100


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def frame(iface_mac, dst_mac, src, dst, port, seq, payload, flags=0x10):
    ip_len = 20 + 20 + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, IP_ID, 0x4000, 64, 6, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", 0xffff - csum(ip)) + ip[12:]
    tcp = struct.pack("!HHIIBBHHH", SPORT, port, seq, 1, 5 << 4, flags, 1024, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, 20 + len(payload))
    return dst_mac + iface_mac + b"\x08\x00" + ip, tcp, pseudo, payload


def main():
    mode, iface, dst_mac, src, dst = sys.argv[1:6]
    port, segs, size = (int(a) for a in sys.argv[6:9])
    dst_mac = bytes.fromhex(dst_mac.replace(":", ""))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    if mode == "vnet":
        s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    s.bind((iface, 0))
    mac = s.getsockname()[4]
    data = bytes(range(256)) * (segs * size // 256 + 1)
    if mode == "vnet":
        head, tcp, pseudo, payload = frame(mac, dst_mac, src, dst, port, 1000, data[:segs * size])
        # CHECKSUM_PARTIAL: the pseudo-header's sum in the checksum field
        part = csum(pseudo)
        tcp = tcp[:16] + struct.pack("!H", part) + tcp[18:]
        vnet = struct.pack("<BBHHHH", VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4,
                           len(head) + 20, size, len(head), 16)
        s.send(vnet + head + tcp + payload)
        return
    for i in range(segs):
        head, tcp, pseudo, payload = frame(mac, dst_mac, src, dst, port, 1000 + i * size,
                                           data[i * size:(i + 1) * size])
        c = 0xffff - csum(pseudo + tcp + payload)
        s.send(head + tcp[:16] + struct.pack("!H", c) + tcp[18:] + payload)


main()
