#!/usr/bin/env bash
# Both directions across hosts: h1 -> r -> h2, an agent on each. h1's
# records both directions (what it sends: "left here"), r's and h2's what
# they receive. h1 sends a UDP flow and a TCP transfer with TSO and GSO on,
# so that h1's egress meets super-packets the stack cuts after it; h2
# captures what it receives (GRO off there: an AF_PACKET socket reads after
# GRO, which veth turns on under XDP).
# - every packet of h2's capture traces as left h1, seen at r, seen at h2,
#   and the walk across the agents prints h1 (left) -> r -> h2;
# - a packet h1 never sent is seen nowhere;
# - the heavy flows of h1's egress equal h2's ingress, byte for byte, and
#   both equal tshark's count of h2's capture.
#
#   h1 --- r --- h2        (198.18.N.0/24, 198.18.N+1.0/24)
source "$(dirname "$0")/../lib/lib.sh"
need_root "both-lab"

ID=$$ N=40
NS1=bt-bl-h1-$ID NSR=bt-bl-r-$ID NS2=bt-bl-h2-$ID
V1=btblh1$ID VR1=btblr1$ID VR2=btblr2$ID V2=btblh2$ID
UPORT=40040 TPORT=40041 DATAGRAMS=300
TMP=$(mktemp -d)
AGENTS=()
cleanup() {
	local p
	for p in "${AGENTS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	AGENTS=()
	[ -n "${CAP:-}" ] && kill "$CAP" 2>/dev/null
	[ -n "${SINK:-}" ] && kill "$SINK" 2>/dev/null
	in_ns "$NS1" "$BLOOMTAP" detach "$V1" >/dev/null 2>&1
	in_ns "$NSR" "$BLOOMTAP" detach "$VR1" >/dev/null 2>&1
	in_ns "$NS2" "$BLOOMTAP" detach "$V2" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# link NSA VA NSB VB SUBNET: a veth pair, .1 on VA, .2 on VB
link() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" || return 1
	ip -n "$1" addr add "198.18.$5.1/24" dev "$2"
	ip -n "$3" addr add "198.18.$5.2/24" dev "$4"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}
netns_add "$NS1" && netns_add "$NSR" && netns_add "$NS2" &&
	link "$NS1" "$V1" "$NSR" "$VR1" $N && link "$NSR" "$VR2" "$NS2" "$V2" $((N + 1)) ||
	{ fail "namespaces"; summary; exit 1; }
in_ns "$NSR" sysctl -qw net.ipv4.ip_forward=1
ip -n "$NS1" route add default via "198.18.$N.2"
ip -n "$NS2" route add default via "198.18.$((N + 1)).1"
static_neighbours "$NS1" "$V1" "$NSR" "$VR1" $N
static_neighbours "$NSR" "$VR2" "$NS2" "$V2" $((N + 1))
in_ns "$NS1" ethtool -K "$V1" tso on gso on >/dev/null 2>&1
in_ns "$NS2" ethtool -K "$V2" gro off >/dev/null 2>&1

# the agents attach: h1 both directions, r and h2 ingress; one interval
# for the whole test, every flow heavy from its first byte
agent() {	# NAME NS IFACE [options]
	local name=$1 ns=$2 ifc=$3
	shift 3
	nsenter --net=/var/run/netns/"$ns" "$BLOOMTAP" run "$@" --interval 600 --bytes 1 \
		--listen 127.0.0.1:9440 --api-socket "$TMP/$name.sock" --archive "$TMP/archive-$name" \
		"$ifc" > "$TMP/agent-$name.log" 2>&1 &
	AGENTS+=($!)
}
printf '198.18.%d.2 far\n' $((N + 1)) > "$TMP/watch.txt"
agent h1 "$NS1" "$V1" --direction both --watch "$TMP/watch.txt"
agent r "$NSR" "$VR1"
agent h2 "$NS2" "$V2"
for a in h1 r h2; do
	wait_for "$a's agent answers" 30 curl -sf -m 2 --unix-socket "$TMP/$a.sock" http://x/healthz
done
eq "h1 records both directions" "$(status_field "$NS1" "$V1" direction)" both
watch_loaded() { in_ns "$NS1" "$BLOOMTAP" -j watch show "$V1" | grep -q '"far"'; }
wait_for "h1's watch list is loaded" 30 watch_loaded
check "the path works (h1 pings h2)" in_ns "$NS1" ping -q -c 1 -W 2 "198.18.$((N + 1)).2"

# h2 captures what reaches it of the two flows
capture_bg "$NS2" "$V2" "$TMP/h2.pcap" 0 "udp:$UPORT,port:$TPORT"
CAP=$CAPTURE_PID
tcp_sink_bg "$NS2" $TPORT "$TMP/sink.out"
in_ns "$NS1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto((b"%05d" % i) * 200, (sys.argv[1], int(sys.argv[2])))' "198.18.$((N + 1)).2" $UPORT $DATAGRAMS
tcp_send_2mb "$NS1" "198.18.$((N + 1)).2" $TPORT
wait_for "h2's sink read the 2 MB" 60 grep -qx 2097152 "$TMP/sink.out"
# until h2's counters hold every frame of the capture (and the TCP close)
all_at_h2() {
	local got
	got=$(frames_in "$TMP/h2.pcap")
	[ "$got" -gt $DATAGRAMS ] &&
		[ "$(in_ns "$NS2" "$BLOOMTAP" -j stats "$V2" | json_get '["packets"]')" -ge "$got" ]
}
poll_until 20 all_at_h2
kill "$CAP"; wait "$CAP" 2>/dev/null; CAP=
FRAMES=$(frames_in "$TMP/h2.pcap")
check "h2 captured the flows ($FRAMES frames)" test "$FRAMES" -gt $((DATAGRAMS + 1000))
SEGS=$(in_ns "$NS1" "$BLOOMTAP" -j stats --direction egress "$V1" | json_get '["gso_segments"]')
check "h1's egress met TSO super-packets and digested their segments ($SEGS)" test "$SEGS" -gt 0

eq "every packet left h1 (and none was received there)" "$(trace_dir "$NS1" "$V1" "$TMP/h2.pcap")" "$FRAMES 0 0"
eq "every packet was seen at r" "$(trace_dir "$NSR" "$VR1" "$TMP/h2.pcap")" "0 $FRAMES 0"
eq "every packet was seen at h2" "$(trace_dir "$NS2" "$V2" "$TMP/h2.pcap")" "0 $FRAMES 0"

printf 'h2: r\nr: h1\n' > "$TMP/topology"
AG="h1=$TMP/h1.sock,r=$TMP/r.sock,h2=$TMP/h2.sock"
J=$("$BLOOMTAP" -j trace --agents "$AG" --topology "$TMP/topology" --from h2 "$TMP/h2.pcap" 2>/dev/null)
# nothing listens on the UDP port: the datagrams die at h2 (NO_SOCKET),
# the transfer's segments do not
eq "the walk: from the sender, every packet (the datagrams dropped at h2)" "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sorted((len(p["packets"]), p["path"], p["left"]) for p in d["paths"]), d["no_path"])' <<<"$J")" \
	"[($DATAGRAMS, ['h1', 'r', 'h2'], ['h1']), ($((FRAMES - DATAGRAMS)), ['h1', 'r', 'h2'], ['h1'])] 0"
OUT=$("$BLOOMTAP" trace --agents "$AG" --topology "$TMP/topology" --from h2 "$TMP/h2.pcap" 2>&1)
check "the walk's text: h1 (left) -> r -> h2" grep -q \
	"^$((FRAMES - DATAGRAMS)) packets: path (source side first): h1 (left) -> r -> h2$" <<<"$OUT"
check "the walk's text: the datagrams dropped at h2" grep -q \
	"^$DATAGRAMS packets: path (source side first): h1 (left) -> r -> h2  dropped at h2 (reason NO_SOCKET)$" \
	<<<"$OUT" || head -5 <<<"$OUT"
# a packet h1 never sent: a captured datagram with another payload byte
never_sent "$TMP/h2.pcap" "$TMP/never.pcap"
J=$("$BLOOMTAP" -j trace --agents "$AG" --topology "$TMP/topology" --from h2 "$TMP/never.pcap" 2>/dev/null)
eq "a packet h1 never sent: no path" "$(python3 -c '
import json, sys; d = json.load(sys.stdin); print(d["paths"], d["no_path"])' <<<"$J")" "[] 1"
for a in h1:"$NS1":"$V1" r:"$NSR":"$VR1" h2:"$NS2":"$V2"; do
	IFS=: read -r name ns ifc <<<"$a"
	eq "a packet h1 never sent: not at $name" "$(in_ns "$ns" "$BLOOMTAP" trace "$ifc" "$TMP/never.pcap" >/dev/null; echo $?)" 1
done

# heavy flows: h1's sent, h2's received, and tshark's count of h2's frames
flows() {	# NS IFACE [--direction egress]: "proto sport dport bytes packets" a flow, sorted
	in_ns "$1" "$BLOOMTAP" -j heavy "$2" "${@:3}" --top 1000 | python3 -c '
import json, sys
rows = [f for f in json.load(sys.stdin) if f["dport"] in (int(sys.argv[1]), int(sys.argv[2]))]
for f in sorted(rows, key=lambda f: f["dport"]):
    print(f["proto"], f["dport"], f["bytes"], f["packets"])' $UPORT $TPORT
}
SENT=$(flows "$NS1" "$V1" --direction egress)
RECV=$(flows "$NS2" "$V2")
TSHARK=$(tshark -r "$TMP/h2.pcap" -T fields -e ip.proto -e udp.dstport -e tcp.dstport -e frame.len 2>/dev/null |
	awk -v u=$UPORT -v t=$TPORT '{ p = $2 != "" ? $2 : $3; if ($1 == 6 && p != t) next
		b[$1 " " p] += $NF; n[$1 " " p]++ } END { for (k in b) print k, b[k], n[k] }' | sort -k2n)
eq "h1's egress heavy flows: the UDP flow and the transfer" "$(awk '{print $1, $2}' <<<"$SENT" | tr '\n' ' ')" \
	"17 $UPORT 6 $TPORT "
eq "h1's sent flows equal h2's received, byte for byte" "$SENT" "$RECV"
eq "and tshark's count of h2's capture" "$RECV" "$TSHARK"
[ "$SENT" = "$TSHARK" ] || { echo "        sent:   $SENT"; echo "        tshark: $TSHARK"; }
OUT=$(in_ns "$NSR" "$BLOOMTAP" heavy --direction egress "$VR1" 2>&1); RC=$?
check "heavy --direction egress on r (ingress only) fails, saying so" bash -c \
	'[ "$1" -ne 0 ] && grep -q "does not record what it sends" <<<"$2"' _ "$RC" "$OUT"

# the watch list's counts by direction: h1 sent every packet of the
# capture to h2's address (class far, as destination); it received from
# there (the transfer's ACKs), never to there
far() {	# DIRECTION SIDE: h1's packets of class far
	in_ns "$NS1" "$BLOOMTAP" -j watch show --direction "$1" "$V1" | python3 -c '
import json, sys
print([c for c in json.load(sys.stdin) if c["class"] == "far"][0][sys.argv[1] + "_packets"])' "$2"
}
SENT_FAR=$(far egress dst)
check "watch show --direction egress: h1 sent h2 every packet of the capture ($SENT_FAR >= $FRAMES)" \
	test "${SENT_FAR:-0}" -ge "$FRAMES"
eq "watch show: h1 received nothing addressed to h2" "$(far ingress dst)" 0
check "watch show: h1 received h2's replies ($(far ingress src))" test "$(far ingress src)" -gt 0
eq "/metrics: the class's sent packets, labelled egress" "$(curl -s --unix-socket "$TMP/h1.sock" \
	http://x/metrics | awk -v k="bloomtap_class_packets_total{interface=\"$V1\",class=\"far\",side=\"dst\",direction=\"egress\"}" \
	'$1 == k {print $2}')" "$SENT_FAR"

cleanup
trap - EXIT
check "no namespace left" bash -c "! ip netns list | grep -q 'bt-bl-.*-$ID'"
summary
[ $FAIL -eq 0 ]
