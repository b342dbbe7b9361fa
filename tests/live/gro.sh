#!/usr/bin/env bash
# A receiver's capture under GRO traces as the segments the wire carried.
# A lab A -- B: A attached with --direction both sends a 2 MB TCP transfer
# and UDP GSO datagrams (UDP_SEGMENT, 1,000 bytes) to B, attached too
# (XDP: veth receives in NAPI, with GRO) and with GRO on; B's capture
# (tests/lib/capture.py, an AF_PACKET socket, as tcpdump's) holds the
# merged buffers GRO made of them, up to 64 KB, while A's egress and B's
# XDP program digested each wire segment.
# - the TCP capture traced at A: every merged packet left A as all its
#   segments (cut at the MSS of the flow's SYN), at B seen as all of them;
# - a merged packet nobody sent (its sequence number moved): not seen;
# - the merged packets alone (no SYN, no unmerged segment): "a merged
#   buffer (GRO)", and seen with --mss given by hand;
# - UDP GRO (a UDP_GRO socket at B): B's capture of the datagrams traced
#   at B (A's egress counts UDP GSO datagrams, never digests them): cut at
#   the flow's unmerged datagram's size, or at --mss.
source "$(dirname "$0")/../lib/lib.sh"
need_root "gro"

ID=$$ N=41
NSA=bt-gro-a-$ID NSB=bt-gro-b-$ID
VA=btgroa$ID VB=btgrob$ID
TPORT=40042 UPORT=40043 UPORT2=40044
TMP=$(mktemp -d)
cleanup() {
	[ -n "${CAP:-}" ] && kill "$CAP" 2>/dev/null
	[ -n "${SINK:-}" ] && kill "$SINK" 2>/dev/null
	[ -n "${USINK:-}" ] && kill "$USINK" 2>/dev/null
	in_ns "$NSA" "$BLOOMTAP" detach "$VA" >/dev/null 2>&1
	in_ns "$NSB" "$BLOOMTAP" detach "$VB" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

veth_pair "$NSA" "$VA" "$NSB" "$VB" $N || { fail "namespaces"; summary; exit 1; }
static_neighbours "$NSA" "$VA" "$NSB" "$VB" $N
in_ns "$NSA" ethtool -K "$VA" gso on tso on >/dev/null 2>&1
check "GRO on at B's veth" in_ns "$NSB" ethtool -K "$VB" gro on
check "attach --direction both on A" in_ns "$NSA" "$BLOOMTAP" attach --direction both "$VA"
check "attach on B" in_ns "$NSB" "$BLOOMTAP" attach "$VB"

capture_bg "$NSB" "$VB" "$TMP/b.pcap" 0 "port:$TPORT,udp:$UPORT,udp:$UPORT2"
CAP=$CAPTURE_PID
tcp_sink_bg "$NSB" $TPORT "$TMP/sink.out"
# B's UDP sockets take merged datagrams (UDP_GRO, 104): GRO merges a flow's
# datagrams only for a socket that asked
nsenter --net=/var/run/netns/"$NSB" timeout 300 python3 -c '
import select, socket, sys
ss = []
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_UDP, 104, 1)
    s.bind(("0.0.0.0", int(p))); ss.append(s)
print("ready", flush=True)
while True:
    for s in select.select(ss, [], [])[0]:
        s.recv(1 << 16)' $UPORT $UPORT2 > "$TMP/usink.out" &
USINK=$!
wait_for "B's UDP sockets are bound" 30 grep -qx ready "$TMP/usink.out"

tcp_send_2mb "$NSA" "198.18.$N.2" $TPORT
wait_for "B's sink read the 2 MB" 60 grep -qx 2097152 "$TMP/sink.out"
# UDP: on UPORT one datagram of 1,000 bytes alone first (the flow's size,
# unmerged), then GSO sends of 10 and 11 datagrams; on UPORT2 GSO sends
# alone (nothing in the capture tells their size)
in_ns "$NSA" python3 -c '
import socket, sys
for port, single in ((int(sys.argv[1]), True), (int(sys.argv[2]), False)):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("198.18.'$N'.2", port))
    if single:
        s.send(bytes(range(3, 253)) * 4)
    s.setsockopt(socket.SOL_UDP, 103, 1000)
    for i, n in enumerate((10000, 10500, 10000)):
        s.send(bytes((i * 7 + j) % 251 for j in range(n)))' $UPORT $UPORT2
UDP_BYTES=$((1000 + 30500 * 2))

# the capture is whole once it holds A's FIN and every UDP payload byte
# (lengths from the IP header: capture.py reads 65,535 bytes a frame)
holds_all() {
	python3 - "$TMP/b.pcap" $TPORT $UDP_BYTES <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read(); o, fin, udp = 24, False, 0
while o + 16 <= len(d):
    n = struct.unpack_from("<I", d, o + 8)[0]; f = d[o + 16:o + 16 + n]; o += 16 + n
    ihl = (f[14] & 15) * 4; l4 = 14 + ihl
    if f[23] == 6 and struct.unpack_from("!H", f, l4 + 2)[0] == int(sys.argv[2]) and f[l4 + 13] & 1:
        fin = True
    if f[23] == 17:
        udp += struct.unpack_from("!H", f, 16)[0] - ihl - 8
sys.exit(0 if fin and udp >= int(sys.argv[3]) else 1)
PY
}
poll_until 30 holds_all
kill "$CAP"; wait "$CAP" 2>/dev/null; CAP=
check "B's capture holds A's FIN and every UDP byte" holds_all

# the capture split: TCP, UDP of UPORT, UDP of UPORT2, and the merged TCP
# packets alone; one merged TCP packet moved by a byte of sequence
python3 - "$TMP" $TPORT $UPORT $UPORT2 <<'PY'
import struct, sys
tmp, tport, uport, uport2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = open(tmp + "/b.pcap", "rb").read(); o = 24
out = {k: [] for k in ("tcp", "udp", "udp2", "merged", "moved")}
while o + 16 <= len(d):
    n = struct.unpack_from("<I", d, o + 8)[0]; rec = d[o:o + 16 + n]; o += 16 + n
    f = rec[16:]; ihl = (f[14] & 15) * 4; l4 = 14 + ihl
    iplen = struct.unpack_from("!H", f, 16)[0]
    if f[23] == 6:
        out["tcp"].append(rec)
        if iplen > 1500:
            out["merged"].append(rec)
            if len(out["merged"]) == 1:
                m = bytearray(rec); s = struct.unpack_from("!I", m, 16 + l4 + 4)[0]
                struct.pack_into("!I", m, 16 + l4 + 4, (s + 1) & 0xffffffff)
                out["moved"].append(bytes(m))
        elif len(out["merged"]) == 0:
            out["moved"].append(rec)	# the handshake, before it
    elif f[23] == 17:
        out["udp" if struct.unpack_from("!H", f, l4 + 2)[0] == uport else "udp2"].append(rec)
for k, v in out.items():
    open("%s/%s.pcap" % (tmp, k), "wb").write(d[:24] + b"".join(v))
PY

# a trace's JSON summed: packets, those seen, the merged ones (cut), those
# seen as all their segments, the segment sizes and where they came from,
# whether every cut packet left here, and the "why" of those not cut
summed() {
	python3 -c '
import json, sys
r = json.load(sys.stdin)
first = {p["packet"]: p for p in r}
cut = [p for p in r if "segments_total" in p]
print(*(str(x).replace(" ", "_") for x in (len(r), sum(p["seen"] for p in r), len(cut),
      sum(p["segments_seen"] == p["segments_total"] and p["seen"] for p in cut),
      ",".join(sorted({"%d:%s" % (p["segment_size"], p["segment_size_from"]) for p in cut})) or "-",
      all(any(w["direction"] == sys.argv[1] for w in p["windows"]) for p in cut),
      ",".join(sorted({p["why"] for p in r if "why" in p})) or "-")))' "$1"
}
trace_json() { in_ns "$1" "$BLOOMTAP" -j trace "${@:2}"; }

read -r n seen ncut allseg size left why <<<"$(trace_json "$NSA" "$VA" "$TMP/tcp.pcap" | summed egress)"
check "B's TCP capture holds merged buffers ($ncut of $n packets cut)" test "$ncut" -gt 0
eq "traced at A, every TCP packet of B's capture is seen" "$seen" "$n"
eq "every merged one as all its segments" "$allseg" "$ncut"
eq "cut at the MSS of the flow's SYN" "$size" "1448:the_MSS_of_the_flow's_SYN"
eq "each left A (egress windows)" "$left" True
read -r n2 seen2 ncut2 allseg2 _ left2 _ <<<"$(trace_json "$NSB" "$VB" "$TMP/tcp.pcap" | summed ingress)"
eq "traced at B, every TCP packet seen, the merged ones as all their segments" \
	"$seen2/$allseg2/$left2" "$n2/$ncut2/True"
check "trace's text: 'seen: N of N segments'" bash -c "nsenter --net=/var/run/netns/$NSA \
	$BLOOMTAP trace --instance $VA $TMP/tcp.pcap | grep -qE '^packet [0-9]+: seen: ([0-9]+) of \\1 segments \\(a merged buffer, [0-9]+ bytes of TCP cut at 1448, the MSS of the flow.s SYN; IP IDs incremented\\)$'"

read -r n seen ncut allseg _ <<<"$(trace_json "$NSA" "$VA" "$TMP/moved.pcap" | summed egress)"
eq "a merged packet nobody sent (its sequence moved by one), after the handshake: cut, none of its segments seen" \
	"$((n - seen))/$ncut/$allseg" "1/1/0"
expect_fail "its text: not seen, 0 of its segments" "not seen: 0 of" \
	in_ns "$NSA" "$BLOOMTAP" trace "$VA" "$TMP/moved.pcap"

read -r n seen ncut _ _ _ why <<<"$(trace_json "$NSA" "$VA" "$TMP/merged.pcap" | summed egress)"
eq "the merged packets alone (no SYN, no unmerged segment): none cut, none seen" "$ncut/$seen" "0/0"
expect_fail "they say why: a merged buffer, capture with GRO off or give --mss" \
	"not seen (a merged buffer (GRO): capture with GRO off, or give --mss)" \
	in_ns "$NSA" "$BLOOMTAP" trace "$VA" "$TMP/merged.pcap"
read -r n seen ncut allseg size _ <<<"$(trace_json "$NSA" "$VA" --mss 1448 "$TMP/merged.pcap" | summed egress)"
eq "with --mss 1448: each seen as all its segments" "${n:-none}/$seen/$ncut/$allseg/$size" \
	"$n/$n/$n/$n/1448:given_(--mss)"

read -r n seen ncut allseg size left _ <<<"$(trace_json "$NSB" "$VB" "$TMP/udp.pcap" | summed ingress)"
check "B's UDP capture holds merged datagrams ($ncut of $n packets cut)" test "$ncut" -gt 0
eq "traced at B, each UDP packet seen, the merged ones as all their datagrams" \
	"$seen/$allseg/$left" "$n/$ncut/True"
eq "cut at the flow's unmerged datagram's size" "$size" "1000:the_flow's_largest_unmerged_segment"
read -r n seen ncut _ _ _ why <<<"$(trace_json "$NSB" "$VB" "$TMP/udp2.pcap" | summed ingress)"
eq "UDP GSO datagrams alone: none cut, none seen, and why" "$ncut/$seen/$why" \
	"0/0/a_merged_buffer_(GRO):_capture_with_GRO_off,_or_give_--mss"
read -r n seen ncut allseg _ <<<"$(trace_json "$NSB" "$VB" --mss 1000 "$TMP/udp2.pcap" | summed ingress)"
eq "with --mss 1000: each seen as all its datagrams" "${n:-none}/$seen/$ncut/$allseg" "$n/$n/$n/$n"
expect_fail "--mss 0 is refused" "--mss 0 is out of range" \
	in_ns "$NSA" "$BLOOMTAP" trace "$VA" --mss 0 "$TMP/tcp.pcap"

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
