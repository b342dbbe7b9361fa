#!/usr/bin/env bash
# Both directions (attach --direction both): what A sends is recorded on
# A's egress, so a trace says "left here" at the sender. A lab A -- B, one
# instance on each end: A's records both directions, B's what it receives.
# - UDP datagrams of many lengths (checksum offload: a veth carries the
#   partial checksum the sender's stack leaves, which the digest skips);
# - a TCP transfer with GSO on, so that A's egress meets super-packets of
#   up to 64 KB that the stack cuts after it: each segment's digest is
#   rebuilt, as B receives it;
# - pings.
# Each frame on the wire from A to B traces as "left here" at A (and only
# as that: never as received there) and as seen at B; B's replies trace
# at A as received, never as left; a packet nobody sent is nowhere. The
# egress counters count what A sent. The wire's frames are captured on A
# (what A's interface sends, after the stack cut the super-packets): on B
# an AF_PACKET socket reads after GRO, which veth turns on under XDP.
source "$(dirname "$0")/../lib/lib.sh"
need_root "egress"

ID=$$ N=38
NSA=bt-eg-a-$ID NSB=bt-eg-b-$ID
VA=btega$ID VB=btegb$ID
UPORT=40038 TPORT=40039 VPORT=40036 DATAGRAMS=40 PINGS=5
TMP=$(mktemp -d)
cleanup() {
	[ -n "${AGENT_A:-}" ] && kill "$AGENT_A" 2>/dev/null && wait "$AGENT_A" 2>/dev/null
	[ -n "${AGENT_B:-}" ] && kill "$AGENT_B" 2>/dev/null && wait "$AGENT_B" 2>/dev/null
	[ -n "${CAP:-}" ] && kill "$CAP" 2>/dev/null
	[ -n "${CAPR:-}" ] && kill "$CAPR" 2>/dev/null
	[ -n "${SINK:-}" ] && kill "$SINK" 2>/dev/null
	in_ns "$NSA" "$BLOOMTAP" detach "$VA" >/dev/null 2>&1
	in_ns "$NSB" "$BLOOMTAP" detach "$VB" >/dev/null 2>&1
	[ -n "${NSR:-}" ] && in_ns "$NSR" "$BLOOMTAP" detach "$VR2" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

veth_pair "$NSA" "$VA" "$NSB" "$VB" $N || { fail "namespaces"; summary; exit 1; }
static_neighbours "$NSA" "$VA" "$NSB" "$VB" $N
# GSO on at the sender (the default): the stack hands egress super-packets
in_ns "$NSA" ethtool -K "$VA" gso on >/dev/null 2>&1

check "attach --direction both on A" in_ns "$NSA" "$BLOOMTAP" attach --direction both "$VA"
check "attach on B (ingress)" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
eq "status: A records both directions" "$(status_field "$NSA" "$VA" direction)" both
hook=$(status_field "$NSA" "$VA" egress_hook)
check "status: A's egress hook is tcx or tc ($hook)" test "$hook" = tcx -o "$hook" = tc
eq "status: B records what it receives" "$(status_field "$NSB" "$VB" direction)" ingress
check "bloomtap kernel names the egress hook's features" bash -c \
	"$BLOOMTAP -j kernel | grep -q '\"tcx\"'"

# everything A sends to B, then the replies A receives
capture_bg "$NSA" "$VA" "$TMP/wire.pcap" 0 "udp:$UPORT,port:$TPORT,icmp-echo,sent"
CAP=$CAPTURE_PID
capture_bg "$NSA" "$VA" "$TMP/replies.pcap" $PINGS "icmp-reply"
CAPR=$CAPTURE_PID
# B's TCP sink: reads the transfer whole
tcp_sink_bg "$NSB" $TPORT "$TMP/sink.out"

# UDP: lengths around the word and chunk boundaries, 0 to 1472 bytes
in_ns "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
lens = [0, 1, 3, 7, 8, 9, 15, 16, 17, 100, 511, 512, 513, 1000, 1471, 1472]
for i in range(int(sys.argv[2])):
    n = lens[i % len(lens)]
    s.sendto((b"%04d" % i * 400)[:n], ("198.18.'$N'.2", int(sys.argv[1])))' $UPORT $DATAGRAMS
# UDP GSO (UDP_SEGMENT, 1,000 bytes): 10,000 and 10,500 bytes a send, cut
# by the stack after egress into 10 and 11 datagrams of their own headers;
# counted, not digested (docs/traceback.md), so sent to a port the wire's
# capture leaves out
in_ns "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_UDP, 103, 1000)
for n in (10000, 10500):
    s.sendto((bytes(range(7, 256)) * 50)[:n], ("198.18.'$N'.2", int(sys.argv[1])))' $((UPORT + 2))
GSO_DATAGRAMS=21
# TCP: 2 MB with GSO
tcp_send_2mb "$NSA" "198.18.$N.2" $TPORT
wait_for "B's sink read the 2 MB" 60 grep -qx 2097152 "$TMP/sink.out"
in_ns "$NSA" ping -c $PINGS -i 0.2 -W 2 -q "198.18.$N.2" >/dev/null
wait "$CAPR"; CAPR=
# the capture stops once B's counters hold every frame it took, and the
# UDP GSO datagrams it left out
all_at_b() {
	local want
	want=$(( $(frames_in "$TMP/wire.pcap") + GSO_DATAGRAMS ))
	[ "$want" -gt $GSO_DATAGRAMS ] && [ "$(in_ns "$NSB" "$BLOOMTAP" -j stats "$VB" | json_get '["packets"]')" -ge "$want" ]
}
poll_until 20 all_at_b
kill "$CAP"; wait "$CAP" 2>/dev/null; CAP=
got=$(frames_in "$TMP/wire.pcap")
check "the wire carried the datagrams, the transfer and the pings ($got frames)" \
	test "$got" -gt $((DATAGRAMS + PINGS + 100))

read -r left recv none <<<"$(trace_dir "$NSA" "$VA" "$TMP/wire.pcap")"
eq "every frame on the wire left A (trace at A: left here)" "$left" "$got"
eq "none of them was received at A" "$recv" 0
read -r left recv none <<<"$(trace_dir "$NSB" "$VB" "$TMP/wire.pcap")"
eq "every frame on the wire is seen at B" "$recv" "$got"
eq "none of them left B" "$left" 0
read -r left recv none <<<"$(trace_dir "$NSA" "$VA" "$TMP/replies.pcap")"
eq "B's $PINGS replies: received at A" "$recv" $PINGS
eq "B's replies never left A" "$left" 0
check "trace's text says 'left here'" bash -c "nsenter --net=/var/run/netns/$NSA \
	$BLOOMTAP trace --instance $VA $TMP/wire.pcap | grep -q 'left here: $VA window'"
# a datagram nobody sent: the capture's first with another payload
never_sent "$TMP/wire.pcap" "$TMP/never.pcap"
read -r left recv none <<<"$(trace_dir "$NSA" "$VA" "$TMP/never.pcap")"
eq "a datagram nobody sent: not at A" "$none" 1

# the egress counters: what A sent, by kind
egress() { in_ns "$NSA" "$BLOOMTAP" -j stats --direction egress "$VA" | json_get "[\"$1\"]"; }
check "A's egress counted every frame on the wire ($(egress packets) >= $got)" \
	test "$(egress packets)" -ge "$got"
eq "A's egress counted $DATAGRAMS datagrams and $GSO_DATAGRAMS cut from UDP GSO as UDP" \
	"$(egress udp)" $((DATAGRAMS + GSO_DATAGRAMS))
check "A's egress digested the TCP transfer's GSO segments one by one ($(egress gso_segments))" \
	test "$(egress gso_segments)" -gt 0
eq "the $GSO_DATAGRAMS UDP GSO datagrams counted, not digested" "$(egress gso_not_digested)" $GSO_DATAGRAMS
check "A's ingress counters hold no datagram (they were sent)" \
	test "$(in_ns "$NSA" "$BLOOMTAP" -j stats "$VA" | json_get '["udp"]')" -eq 0

# A GSO skb of SKB_GSO_DODGY, as a VM's through tap or vhost-net: ten
# 1,000-byte segments in one write to a PACKET_VNET_HDR socket, whose
# gso_segs is 0 until the stack cuts it after egress; egress counts its
# segments from the lengths and gso_size, and each one left A
segs0=$(egress gso_segments)
capture_bg "$NSA" "$VA" "$TMP/vnet.pcap" 10 "port:$VPORT,sent"
CAP=$CAPTURE_PID
in_ns "$NSA" python3 "$TOP/tests/lib/segsend.py" vnet "$VA" \
	"$(ip -n "$NSB" -br link show "$VB" | awk '{print $3}')" "198.18.$N.1" "198.18.$N.2" $VPORT 10 1000
# a bound for a segment that never comes (the checks below say so)
poll_until 30 test "$(frames_in "$TMP/vnet.pcap")" -ge 10
kill "$CAP" 2>/dev/null; wait "$CAP" 2>/dev/null; CAP=
read -r left recv none <<<"$(trace_dir "$NSA" "$VA" "$TMP/vnet.pcap")"
eq "PACKET_VNET_HDR, gso_segs 0: the 10 segments on the wire left A" "$left/$(frames_in "$TMP/vnet.pcap")" 10/10
eq "... and A's egress digested them as GSO segments" $(($(egress gso_segments) - segs0)) 10

# IPv6 with a destination options header on every segment (IPV6_DSTOPTS):
# egress rebuilds each GSO segment's digest with TCP after the extension
# header, and the digest takes TCP's bytes there, not the header's
in_ns "$NSA" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf."$VA".disable_ipv6=0
in_ns "$NSB" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf."$VB".disable_ipv6=0
ip -n "$NSA" addr add "2001:db8:$N::1/64" dev "$VA" nodad
ip -n "$NSB" addr add "2001:db8:$N::2/64" dev "$VB" nodad
ip -n "$NSA" neigh replace "2001:db8:$N::2" dev "$VA" nud permanent \
	lladdr "$(ip -n "$NSB" -br link show "$VB" | awk '{print $3}')"
ip -n "$NSB" neigh replace "2001:db8:$N::1" dev "$VB" nud permanent \
	lladdr "$(ip -n "$NSA" -br link show "$VA" | awk '{print $3}')"
segs0=$(egress gso_segments)
capture_bg "$NSA" "$VA" "$TMP/dstopts.pcap" 0 "port:$((TPORT + 2)),sent"
CAP=$CAPTURE_PID
nsenter --net=/var/run/netns/"$NSB" timeout 120 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", int(sys.argv[1]))); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); n = 0
while (b := c.recv(1 << 16)):
    n += len(b)
print(n, flush=True)' $((TPORT + 2)) > "$TMP/sink6.out" &
SINK=$!
wait_for "the IPv6 TCP sink listens" 30 grep -qx ready "$TMP/sink6.out"
in_ns "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_DSTOPTS, bytes([0, 0, 1, 4, 0, 0, 0, 0]))
s.connect((sys.argv[1], int(sys.argv[2])))
s.sendall(bytes(range(256)) * 1024); s.close()' "2001:db8:$N::2" $((TPORT + 2))
wait_for "B's sink read the 256 KB over IPv6" 60 grep -qx 262144 "$TMP/sink6.out"
SINK=
kill "$CAP"; wait "$CAP" 2>/dev/null; CAP=
got=$(frames_in "$TMP/dstopts.pcap")
read -r left recv none <<<"$(trace_dir "$NSA" "$VA" "$TMP/dstopts.pcap")"
eq "IPV6_DSTOPTS: every segment on the wire left A" "$left" "$got"
# one of them with another sequence number: never sent, though of the same
# length as the others (a digest taken at byte 40 covers the header alone)
python3 - "$TMP/dstopts.pcap" "$TMP/forged6.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
o, best = 24, b""
while o + 16 <= len(d):
    n = struct.unpack_from("<I", d, o + 8)[0]
    best = max(best, d[o + 16:o + 16 + n], key=len)
    o += 16 + n
f = bytearray(best)
f[14 + 40 + 8 + 4] ^= 0x40	# TCP's sequence number, after 8 bytes of options
open(sys.argv[2], "wb").write(d[:24] + struct.pack("<IIII", 0, 0, len(f), len(f)) + bytes(f))
PY
read -r left recv none <<<"$(trace_dir "$NSA" "$VA" "$TMP/forged6.pcap")"
eq "... and a segment A never sent (another sequence number) did not" "$none" 1
check "... GSO segments among them ($(($(egress gso_segments) - segs0)))" \
	test $(($(egress gso_segments) - segs0)) -gt 0
# 2 and 3 extension headers, and one with a fragment header, before UDP
# (frames of tests/live/drops_lab.py, through A's qdisc): egress walks
# them as the XDP parser does, and its digests are trace's
MAC_A=$(ip -n "$NSA" -br link show "$VA" | awk '{print $3}')
MAC_B=$(ip -n "$NSB" -br link show "$VB" | awk '{print $3}')
tag=50
for ext in hbh,dst hbh,dst,rt hbh,rt,frag; do
	in_ns "$NSA" python3 "$TOP/tests/live/drops_lab.py" send "$VA" "$MAC_A" "$MAC_B" \
		"$TMP/ext-$ext.pcap" 10 "2001:db8:$N::1" "2001:db8:$N::2" $((TPORT + 3)) \
		--tag $tag --ext $ext >/dev/null
	tag=$((tag + 1))
	read -r left recv none <<<"$(trace_dir "$NSA" "$VA" "$TMP/ext-$ext.pcap")"
	eq "IPv6 $ext before UDP: every frame left A" "$left/$none" 10/0
done
# IPv6 off again: the link's own solicitations (a router solicitation
# from its link-local address, MLD reports) would enter the flows of the
# checks below, which count what they sent
in_ns "$NSA" sysctl -qw net.ipv6.conf."$VA".disable_ipv6=1
in_ns "$NSB" sysctl -qw net.ipv6.conf."$VB".disable_ipv6=1

# digests_present at egress: the digests of its sample (one in 64, by
# the digest) are checked and a hit counted 64 times. 1,000 new frames
# count none; the same frames again count 64 for each of theirs in the
# sample, about 16 (none with probability (63/64)^1000, 1.5e-7)
present0=$(egress digests_present)
send_again() {
	in_ns "$NSA" python3 "$TOP/tests/live/drops_lab.py" send "$VA" "$MAC_A" "$MAC_B" \
		"$TMP/again.pcap" 1000 "198.18.$N.1" "198.18.$N.2" $((TPORT + 4)) --tag 60 >/dev/null
}
send_again
present1=$(egress digests_present)
send_again
present2=$(egress digests_present)
eq "1,000 new frames sent: no digest counted present" $((present1 - present0)) 0
check "... sent again: 64 for each of the sampled, 1 to 60 of them ($(((present2 - present1) / 64)))" \
	test $(((present2 - present1) % 64)) -eq 0 -a $((present2 - present1)) -ge 64 \
	-a $((present2 - present1)) -le $((60 * 64))

# A's interval to an IPFIX file, as the agent exports it: the received
# flows and the sent ones (flowDirection 0 and 1), whichever is printed
check "heavy --flip --ipfix-file on A (both directions)" in_ns "$NSA" "$BLOOMTAP" heavy --flip \
	--ipfix-file "$TMP/both.ipfix" "$VA"
eq "IPFIX file: A's received and sent flows, both in it" "$(python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import ipfix_check
print(sorted({r[(0, 61)][0] for r in ipfix_check.walk(sys.argv[2])[1] if (0, 61) in r}))' \
	"$TOP/tests/live" "$TMP/both.ipfix")" "[0, 1]"
check "detach A" in_ns "$NSA" "$BLOOMTAP" detach "$VA"
check "no egress program left on A's interface" bash -c \
	"! ip -n $NSA link show $VA | grep -q 'prog' && ! tc -n $NSA filter show dev $VA egress 2>/dev/null | grep -q bloomtap"

# the walk across agents starts at the sender: A's agent records both
# directions (run --direction both), B's what it receives; each answers on
# a unix socket, which trace reaches from outside their namespaces
check "detach B" in_ns "$NSB" "$BLOOMTAP" detach "$VB"
nsenter --net=/var/run/netns/"$NSA" "$BLOOMTAP" run --direction both --listen 127.0.0.1:9438 \
	--api-socket "$TMP/a.sock" --archive "$TMP/archive-a" "$VA" > "$TMP/agent-a.log" 2>&1 &
AGENT_A=$!
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --listen 127.0.0.1:9438 \
	--api-socket "$TMP/b.sock" --archive "$TMP/archive-b" "$VB" > "$TMP/agent-b.log" 2>&1 &
AGENT_B=$!
wait_for "A's agent answers on its socket" 30 curl -sf -m 2 --unix-socket "$TMP/a.sock" http://a/healthz
wait_for "B's agent answers on its socket" 30 curl -sf -m 2 --unix-socket "$TMP/b.sock" http://b/healthz
eq "run --direction both: A records both directions" "$(status_field "$NSA" "$VA" direction)" both
capture_bg "$NSA" "$VA" "$TMP/walk.pcap" 10 "udp:$UPORT,sent"
CAP=$CAPTURE_PID
in_ns "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(10):
    s.sendto(b"walk %04d" % i, ("198.18.'$N'.2", int(sys.argv[1])))' $UPORT
wait "$CAP"; CAP=
printf 'b: a\n' > "$TMP/topology"
OUT=$("$BLOOMTAP" trace --agents "a=$TMP/a.sock,b=$TMP/b.sock" --topology "$TMP/topology" \
	--from b "$TMP/walk.pcap" 2>&1)
# nothing listens on B's port: each datagram died there, NO_SOCKET
check "the walk starts at the sender: a (left) -> b, dropped at b" grep -q \
	"^10 packets: path (source side first): a (left) -> b  dropped at b (reason NO_SOCKET)$" <<<"$OUT"
J=$("$BLOOMTAP" -j trace --agents "a=$TMP/a.sock,b=$TMP/b.sock" --topology "$TMP/topology" \
	--from b "$TMP/walk.pcap" 2>/dev/null)
eq "-j: the path, and where the packets left" "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print([(p["path"], p["left"], len(p["packets"])) for p in d["paths"]])' <<<"$J")" \
	"[(['a', 'b'], ['a'], 10)]"
kill "$AGENT_A" "$AGENT_B"; wait "$AGENT_A" "$AGENT_B" 2>/dev/null; AGENT_A= AGENT_B=

# egress alone (--direction egress): no XDP program; what B sends is
# recorded, what it receives is not
in_ns "$NSA" "$BLOOMTAP" detach "$VA" >/dev/null 2>&1
in_ns "$NSB" "$BLOOMTAP" detach "$VB" >/dev/null 2>&1
OUT=$(in_ns "$NSB" "$BLOOMTAP" attach --direction egress --bytes 1 "$VB" 2>&1); RC=$?
eq "attach --direction egress on B" "$RC" 0
check "attach says it records what B sends only, and no XDP mode" bash -c \
	"grep -q \"attached to $VB's egress (.*, no XDP program): records what it sends only\" <<<\"\$0\" &&
	 ! grep -q 'native mode\|skb mode' <<<\"\$0\"" "$OUT"
eq "status: B records egress alone" "$(status_field "$NSB" "$VB" direction)/$(status_field "$NSB" "$VB" state)" \
	egress/attached
check "no XDP program on B" bash -c "! ip -n $NSB link show $VB | grep -q xdp"
capture_bg "$NSB" "$VB" "$TMP/alone.pcap" $PINGS "icmp-reply,sent"
CAP=$CAPTURE_PID
in_ns "$NSA" ping -c $PINGS -i 0.2 -W 2 -q "198.18.$N.2" >/dev/null
wait "$CAP"; CAP=
read -r left recv none <<<"$(trace_dir "$NSB" "$VB" "$TMP/alone.pcap")"
eq "B's $PINGS replies left B" "$left/$recv" "$PINGS/0"
# what B receives is not recorded: asked for it, each reader says so
# rather than print zeros
for args in "stats" "heavy" "watch show" "-j stats" "stats --direction ingress"; do
	# shellcheck disable=SC2086
	expect_fail "$args on B (egress alone): refused, records what it sends only" \
		"instance $VB records what it sends only" in_ns "$NSB" "$BLOOMTAP" $args "$VB"
done
check "stats --direction egress on B" in_ns "$NSB" "$BLOOMTAP" stats --direction egress "$VB"
eq "heavy --direction egress: the replies' flow, B to A" "$(in_ns "$NSB" "$BLOOMTAP" -j heavy \
	--direction egress "$VB" | python3 -c '
import json, sys
print([(f["src"], f["dst"], f["packets"], f["direction"]) for f in json.load(sys.stdin)])')" \
	"[('198.18.$N.2', '198.18.$N.1', $PINGS, 'egress')]"
# IPFIX: the sent flow's record says so (flowDirection 1) and names the
# interface as egressInterface
check "heavy --direction egress --flip --ipfix-file" in_ns "$NSB" "$BLOOMTAP" heavy --direction egress \
	--flip --ipfix-file "$TMP/sent.ipfix" "$VB"
python3 "$TOP/tests/live/ipfix_check.py" pcap "$TMP/sent.ipfix" "$TMP/sent.pcap" >/dev/null
eq "IPFIX: the replies' record: direction 1 (egress), egressInterface B's, no ingressInterface" \
	"$(tshark -r "$TMP/sent.pcap" -d udp.port==4739,cflow -Y cflow.packets -T fields -e cflow.direction \
	-e cflow.outputint -e cflow.inputint -e cflow.packets 2>/dev/null)" \
	"$(printf '1\t%s\t\t%s' "$(ip -n "$NSB" -j link show "$VB" | json_get '[0]["ifindex"]')" $PINGS)"
# a received packet's drop is not the egress-alone instance's: it never
# saw the packet. UDP to a closed port on B dies there (NO_SOCKET), and
# goes to the host's count, as on an interface without an instance
host_no_socket() {
	"$BLOOMTAP" -j drops --host | python3 -c '
import json, sys
print(sum(r["packets"] for r in json.load(sys.stdin)["unattributed"] if r["reason"] == "NO_SOCKET"))'
}
eq "status: B (egress alone) records no drops" "$(status_field "$NSB" "$VB" drops_recording)" False
host0=$(host_no_socket)
capture_bg "$NSA" "$VA" "$TMP/closed.pcap" 10 "udp:$((UPORT + 4)),sent"
CAP=$CAPTURE_PID
in_ns "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(10):
    s.sendto(b"closed %04d" % i, ("198.18.'$N'.2", int(sys.argv[1])))' $((UPORT + 4))
wait "$CAP"; CAP=
host_has() { [ "$(host_no_socket)" -ge "$1" ]; }
wait_for "the 10 NO_SOCKET drops at B are in the host's count" 10 host_has $((host0 + 10))
eq "... and none is B's (it never saw them)" "$(reason_count "$VB" "$NSB" NO_SOCKET)" 0
eq "trace at B: none of them dropped here" "$(in_ns "$NSB" "$BLOOMTAP" -j trace "$VB" \
	"$TMP/closed.pcap" | python3 -c '
import json, sys
print(sum(len(p["drops"]) for p in json.load(sys.stdin)))')" 0
check "detach B (egress alone)" in_ns "$NSB" "$BLOOMTAP" detach "$VB"
check "no egress program left on B" bash -c \
	"! tc -n $NSB filter show dev $VB egress 2>/dev/null | grep -q bloomtap && ! bpftool net show dev $VB 2>/dev/null | grep -q bloomtap"

# a kept instance (detach --keep-maps) has the sizes it was made with:
# other sizes asked when it is attached again are refused, never ignored
check "attach B --width 2048" in_ns "$NSB" "$BLOOMTAP" attach --width 2048 "$VB"
check "detach B --keep-maps" in_ns "$NSB" "$BLOOMTAP" detach --keep-maps "$VB"
expect_fail "attach the kept instance --width 1024: refused, the kept width named" \
	"--width 1024 (kept: 2048)" in_ns "$NSB" "$BLOOMTAP" attach --width 1024 "$VB"
check "refused: nothing attached, the kept instance still there" bash -c \
	"! ip -n $NSB link show $VB | grep -q xdp && nsenter --net=/var/run/netns/$NSB $BLOOMTAP stats $VB"
expect_fail "attach the kept instance --fraction 0.01 --windows 64: refused, both named" \
	"--fraction 0.01 (kept: --fraction 0.001), --windows 64 (kept: 256)" \
	in_ns "$NSB" "$BLOOMTAP" attach --fraction 0.01 --windows 64 "$VB"
expect_fail "attach the kept (ingress) instance --direction both: refused" \
	"was made to record ingress only" in_ns "$NSB" "$BLOOMTAP" attach --direction both "$VB"
check "attach the kept instance with its own width" in_ns "$NSB" "$BLOOMTAP" attach --width 2048 "$VB"
check "detach B --keep-maps again" in_ns "$NSB" "$BLOOMTAP" detach --keep-maps "$VB"
check "attach the kept instance without sizes" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
# 4 x 2048 cells: 1,024 lines of 10 (the power of two above 8,192 / 10), a spare
eq "its sketch is the kept one: 4 x 2048 cells, 1,025 lines of 64 bytes" "$(bpftool -j map show pinned \
	"/sys/fs/bpf/bloomtap/$VB/cms" | json_get '["bytes_value"]')" $(((1024 + 1) * 64))
check "detach B" in_ns "$NSB" "$BLOOMTAP" detach "$VB"
# A router: S -- R -- D. R's receiving veth merges with GRO (TSO off at
# S, so that veth hands R's NAPI what S sends; a flush timeout so that
# the segments of one write meet in one poll) and forwards the merged skb
# out of its other veth, which cuts it again (TSO and GSO off there, so
# its capture holds the segments). S's 8 DF segments share one IPv4 ID:
# GRO's skb is SKB_GSO_TCP_FIXEDID, and its segments keep that ID on the
# wire. Egress cannot read the GSO type: a forwarded skb's segments are
# recorded with both IDs, and each one left R.
NSS=bt-eg-s-$ID NSR=bt-eg-r-$ID NSD=bt-eg-d-$ID
VS=btegs$ID VR1=btegr$ID VR2=btegq$ID VD=btegd$ID
veth_pair "$NSS" "$VS" "$NSR" "$VR1" $((N + 100)) && netns_add "$NSD" &&
	ip link add "$VR2" netns "$NSR" type veth peer name "$VD" netns "$NSD" ||
	{ fail "the router's namespaces"; summary; exit 1; }
ip -n "$NSR" addr add "198.18.$((N + 101)).1/24" dev "$VR2"
ip -n "$NSD" addr add "198.18.$((N + 101)).2/24" dev "$VD"
ip -n "$NSR" link set "$VR2" up
ip -n "$NSD" link set "$VD" up
static_neighbours "$NSS" "$VS" "$NSR" "$VR1" $((N + 100))
static_neighbours "$NSR" "$VR2" "$NSD" "$VD" $((N + 101))
in_ns "$NSR" sysctl -qw net.ipv4.ip_forward=1
in_ns "$NSS" ethtool -K "$VS" tso off gso off >/dev/null
in_ns "$NSR" ethtool -K "$VR1" gro on >/dev/null
in_ns "$NSR" ethtool -K "$VR2" tso off gso off >/dev/null
# sysfs shows the devices of the namespace that mounts it
in_ns "$NSR" unshare -m sh -c "mount -t sysfs sysfs /sys &&
	echo 20000000 > /sys/class/net/$VR1/gro_flush_timeout &&
	echo 2 > /sys/class/net/$VR1/napi_defer_hard_irqs"
check "attach --direction egress on R's way out" in_ns "$NSR" "$BLOOMTAP" attach --direction egress "$VR2"
capture_bg "$NSR" "$VR2" "$TMP/fwd.pcap" 8 "port:$VPORT,sent"
CAP=$CAPTURE_PID
in_ns "$NSS" python3 "$TOP/tests/lib/segsend.py" fixedid "$VS" \
	"$(ip -n "$NSR" -br link show "$VR1" | awk '{print $3}')" "198.18.$((N + 100)).1" \
	"198.18.$((N + 101)).2" $VPORT 8 1000
poll_until 30 test "$(frames_in "$TMP/fwd.pcap")" -ge 8
kill "$CAP" 2>/dev/null; wait "$CAP" 2>/dev/null; CAP=
# GRO merges what arrives within its flush timeout: all 8 here, 7 once in
# the 6.1 guest under TCG; a merged skb of 2 or more is what the check
# below needs (its segments after the first carry the first's ID)
GSO=$(in_ns "$NSR" "$BLOOMTAP" -j stats --direction egress "$VR2" | json_get '["gso_segments"]')
check "R forwarded the segments merged by GRO ($GSO of 8 in GSO skbs)" test "${GSO:-0}" -ge 2
eq "... all with their one ID" "$(tshark -r "$TMP/fwd.pcap" -T fields -e ip.id 2>/dev/null | sort -u)" \
	0x4242
read -r left recv none <<<"$(trace_dir "$NSR" "$VR2" "$TMP/fwd.pcap")"
eq "fixed IDs (SKB_GSO_TCP_FIXEDID): the 8 segments left R" "$left" 8
check "detach R" in_ns "$NSR" "$BLOOMTAP" detach "$VR2"

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
