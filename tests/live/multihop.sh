#!/usr/bin/env bash
# SPIE across hosts: a chain of four router namespaces (forwarding on),
# bloomtap on each router's ingress and on a side branch the packets do not
# take. Packets captured at the victim are traced on every router: seen on
# each router of the path, on no router off it; a packet never sent is seen
# nowhere.
#
#   h --- r1 --- r2 --- r3 --- r4 --- v        (198.18.N.0/24, N = 1..5)
#                 \
#                  s (side branch, 198.18.6.0/24)
source "$(dirname "$0")/../lib/lib.sh"
need_root "multihop"

ID=$$
P=mh$ID
CAP=$(mktemp -d)/victim.pcap
NS=(h r1 r2 r3 r4 v s)
AGENTS=()
cleanup() {
	local i
	for i in "${AGENTS[@]}"; do kill "$i" 2>/dev/null; wait "$i" 2>/dev/null; done
	AGENTS=()
	for i in r1 r2 r3 r4 s; do "$BLOOMTAP" detach --instance "${P}${i}in" >/dev/null 2>&1; done
	for i in "${NS[@]}"; do ip netns del "$P-$i" 2>/dev/null; done
	rm -rf "$(dirname "$CAP")"
}
trap cleanup EXIT INT TERM

# link A B N: veth from A (198.18.N.1, named A-out... ) to B (198.18.N.2)
link() {
	local a=$1 b=$2 n=$3
	ip link add "${P}${a}o$n" netns "$P-$a" type veth peer name "${P}${b}in" netns "$P-$b" || return 1
	ip -n "$P-$a" addr add "198.18.$n.1/24" dev "${P}${a}o$n"
	ip -n "$P-$b" addr add "198.18.$n.2/24" dev "${P}${b}in"
	ip -n "$P-$a" link set "${P}${a}o$n" up
	ip -n "$P-$b" link set "${P}${b}in" up
}

for n in "${NS[@]}"; do
	ip netns add "$P-$n" || { fail "netns"; summary; exit 1; }
	in_ns "$P-$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$P-$n" link set lo up
done
for r in r1 r2 r3 r4; do in_ns "$P-$r" sysctl -qw net.ipv4.ip_forward=1; done
link h r1 1 && link r1 r2 2 && link r2 r3 3 && link r3 r4 4 && link r4 v 5 && link r2 s 6 ||
	{ fail "links"; summary; exit 1; }
# routes: towards v down the chain, back up towards h
ip -n "$P-h" route add default via 198.18.1.2
ip -n "$P-r1" route add default via 198.18.2.2
ip -n "$P-r2" route add 198.18.4.0/24 via 198.18.3.2
ip -n "$P-r2" route add 198.18.5.0/24 via 198.18.3.2
ip -n "$P-r3" route add 198.18.5.0/24 via 198.18.4.2
ip -n "$P-r3" route add default via 198.18.3.1
ip -n "$P-r4" route add default via 198.18.4.1
ip -n "$P-v" route add default via 198.18.5.1
ip -n "$P-s" route add default via 198.18.6.1
ip -n "$P-r2" route add 198.18.1.0/24 via 198.18.2.1

for r in r1 r2 r3 r4 s; do
	check "attach on $r's ingress" in_ns "$P-$r" "$BLOOMTAP" attach "${P}${r}in"
done
check "the path works (h pings v)" in_ns "$P-h" ping -q -c 1 -W 2 198.18.5.2

# what the victim receives, captured there
in_ns "$P-v" timeout 30 python3 "$TOP/tests/lib/capture.py" "${P}vin" "$CAP" 25 udp:7777,icmp-echo > "$CAP.out" &
TS=$!
capture_ready "$CAP.out"
in_ns "$P-h" bash -c 'for i in $(seq 1 20); do echo "attack $i" > /dev/udp/198.18.5.2/7777; done'
in_ns "$P-h" ping -q -c 5 -i 0.05 198.18.5.2 >/dev/null
wait $TS
N=$(tshark -r "$CAP" 2>/dev/null | wc -l)
eq "victim captured the 25 packets" "$N" 25

for r in r1 r2 r3 r4; do
	OUT=$("$BLOOMTAP" trace --instance "${P}${r}in" "$CAP"); RC=$?
	eq "$r (on the path): every packet seen" "$RC/$(tail -1 <<<"$OUT" | cut -d';' -f1)" "0/25 IP packets: 25 seen, 0 not seen"
done
OUT=$("$BLOOMTAP" trace --instance "${P}sin" "$CAP"); RC=$?
eq "s (off the path): no packet seen" "$RC/$(tail -1 <<<"$OUT" | cut -d';' -f1)" "1/25 IP packets: 0 seen, 25 not seen"
# a packet nobody sent: the first captured one with another IP ID
HEX=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); n=int.from_bytes(d[24+8:24+12],"little"); print(d[40:40+n].hex())' "$CAP")
NEVER=${HEX:0:36}ffff${HEX:40}
for r in r1 r2 r3 r4; do
	"$BLOOMTAP" trace --instance "${P}${r}in" --hex "$NEVER" >/dev/null; RC=$?
	eq "$r: a packet never sent is not seen" "$RC" 1
done
OUT=$("$BLOOMTAP" trace --instance "${P}r1in" --hex "$HEX" 2>&1); RC=$?
eq "r1: the same frame unchanged is seen" "$RC" 0
[ $RC -eq 0 ] || { echo "        frame: $HEX"; sed 's/^/        /' <<<"$OUT"; tshark -r "$CAP" -c 3 2>/dev/null | sed 's/^/        /'; }

# across hosts: an agent in each router (adopting its instance), each on an
# address of its own namespace; asked from the victim, which reaches them all
declare -A ADDR=( [r1]=198.18.1.2 [r2]=198.18.2.2 [r3]=198.18.3.2 [r4]=198.18.4.2 [s]=198.18.6.2 )
for r in r1 r2 r3 r4 s; do
	nsenter --net=/var/run/netns/"$P-$r" "$BLOOMTAP" run "${P}${r}in" --listen "${ADDR[$r]}:9477" \
		--window 600 --archive "$(dirname "$CAP")/archive-$r" > "$(dirname "$CAP")/agent-$r.log" 2>&1 &
	AGENTS+=($!)
done
for r in r1 r2 r3 r4 s; do
	wait_for "$r's agent answers" 30 in_ns "$P-v" curl -s -m 1 "${ADDR[$r]}:9477/healthz"
done
cat > "$(dirname "$CAP")/topology" <<TOPO
# who is whose neighbour
r4: r3
r3: r2
r2: r1 s
TOPO
LIST=r4=${ADDR[r4]}:9477,r3=${ADDR[r3]}:9477,r2=${ADDR[r2]}:9477,r1=${ADDR[r1]}:9477,s=${ADDR[s]}:9477
OUT=$(in_ns "$P-v" "$BLOOMTAP" trace --agents "$LIST" --topology "$(dirname "$CAP")/topology" --from r4 "$CAP" 2>&1); RC=$?
eq "across hosts: exit 0" "$RC" 0
check "across hosts: the attack path" grep -q "^25 packets: path (source side first): r1 -> r2 -> r3 -> r4$" <<<"$OUT"
check "across hosts: the side branch did not see them" grep -q "^s .*saw 0 of 25 packets" <<<"$OUT"
eq "across hosts: one path, for all 25 packets" "$(grep -c ' packets: path ' <<<"$OUT")" 1
# time bounds travel to the agents: windows of before 2000 hold nothing
OUT=$(in_ns "$P-v" "$BLOOMTAP" trace --agents "$LIST" --topology "$(dirname "$CAP")/topology" --from r4 \
	--until 2000-01-01T00:00:00Z "$CAP" 2>&1); RC=$?
eq "across hosts, --until 2000: nobody saw them (exit 1)" "$RC" 1
OUT=$(in_ns "$P-v" "$BLOOMTAP" trace --agents "$LIST" --topology "$(dirname "$CAP")/topology" --from r4 \
	--since -10m "$CAP" 2>&1); RC=$?
check "across hosts, --since -10m: the same path" grep -q "^25 packets: path (source side first): r1 -> r2 -> r3 -> r4$" <<<"$OUT"
J=$(in_ns "$P-v" "$BLOOMTAP" -j trace --agents "$LIST" --topology "$(dirname "$CAP")/topology" --hex "$NEVER" 2>/dev/null)
eq "across hosts: a packet never sent has no path" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["paths"], d["no_path"])' <<<"$J")" "[] 1"
# a router on the path whose agent is down: unknown, walked through, and
# the routers behind it are still on the path (not false positives)
kill ${AGENTS[1]}; wait ${AGENTS[1]} 2>/dev/null
OUT=$(in_ns "$P-v" "$BLOOMTAP" trace --agents "$LIST" --topology "$(dirname "$CAP")/topology" --from r4 "$CAP" 2>&1); RC=$?
eq "r2's agent stopped: still exit 0" "$RC" 0
check "r2's agent stopped: the path goes through it, marked unknown" \
	grep -q "^25 packets: path (source side first): r1 -> r2? -> r3 -> r4$" <<<"$OUT"
check "r2's agent stopped: r1 is no false positive" bash -c "! grep -q 'false positive' <<<\"\$0\"" "$OUT"
check "r2's agent stopped: named as not answering" grep -q "^r2 .*no answer: unknown" <<<"$OUT"
J=$(in_ns "$P-v" "$BLOOMTAP" -j trace --agents "$LIST" --topology "$(dirname "$CAP")/topology" --from r4 "$CAP" 2>/dev/null)
eq "r2's agent stopped: -j marks it unknown" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print([(p["path"], p["unknown"], len(p["packets"])) for p in d["paths"]])' <<<"$J")" \
	"[(['r1', 'r2', 'r3', 'r4'], ['r2'], 25)]"

cleanup
trap - EXIT
check "no namespace left" bash -c "! ip netns list | grep -q '^$P-'"
summary
[ $FAIL -eq 0 ]
