#!/usr/bin/env bash
# Attribution at packet time (docs/workloads.md "Attribution"): an agent on
# a host-side veth, UDP from a client namespace through it to a podman
# container (runc, busybox-static image) on a podman network of
# 198.18.X.0/24. The heavy flow and stats name the container; then the
# container is replaced by another on the same address (podman run --ip):
# the old flow keeps the old name, the same 5-tuple's new packets are a
# flow of their own under the new name, and stats count each generation
# apart. The agent records both directions (--direction both): the
# container's datagrams to the client leave through the interface's egress
# program, whose heavy flow and stats name the container as their source,
# as the received side names it as destination. Forwarding in the host
# namespace is turned on for the run (saved and restored): the packets
# reach the container.
source "$(dirname "$0")/../lib/lib.sh"
need_root "wlattr"
need_podman "wlattr"

ID=$$
N=$((ID % 200 + 20))
IMG=localhost/btwa-test:$ID
NET=btwa-$ID
SUB=198.18.$N.0/24
CIP=198.18.$N.10
CTR1=btwa-one-$ID
CTR2=btwa-two-$ID
NSC=btwa-c-$ID
VC=bwc$ID VH=bwh$ID
L=$(((N + 1) % 256))
PORT=$((20000 + ID % 10000))
WORK=$(mktemp -d /tmp/bt-wlattr.XXXXXX)
FWD=$(sysctl -n net.ipv4.ip_forward)
AGENT=

cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	"$BLOOMTAP" detach "$VH" >/dev/null 2>&1
	podman rm -f -t 0 "$CTR1" "$CTR2" >/dev/null 2>&1
	podman network rm -f "$NET" >/dev/null 2>&1
	podman rmi -f "$IMG" >/dev/null 2>&1
	ip link del "$VH" 2>/dev/null
	cleanup_netns
	sysctl -qw net.ipv4.ip_forward="$FWD"
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

podman_busybox_image "$IMG" "$WORK" || { fail "podman import of busybox-static"; summary; exit 1; }
check "podman network on $SUB" podman network create --subnet "$SUB" "$NET"
check "the first container on $CIP" podman run -d --name "$CTR1" --network "$NET" --ip "$CIP" \
	"$IMG" sleep 600

# the client: its own namespace, a veth to the host, the container's
# subnet routed through it
netns_add "$NSC"
ip link add "$VC" netns "$NSC" type veth peer name "$VH"
ip -n "$NSC" addr add "198.18.$L.1/24" dev "$VC"
ip addr add "198.18.$L.2/24" dev "$VH"
ip -n "$NSC" link set "$VC" up
ip link set "$VH" up
ip -n "$NSC" route add "$SUB" via "198.18.$L.2"
sysctl -qw net.ipv4.ip_forward=1

"$BLOOMTAP" run --direction both --listen "127.0.0.1:$PORT" --archive "$WORK/arch" \
	--interval 3600 "$VH" > "$WORK/agent.log" 2>&1 &
AGENT=$!
wait_for "the agent answers /healthz" 30 curl -sf -m 5 "127.0.0.1:$PORT/healthz"

# send SPORT COUNT: COUNT datagrams of 500 bytes from the client to the
# container, port 9 (nothing listens: the container answers ICMP)
send() {
	in_ns "$NSC" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[2])))
for _ in range(int(sys.argv[3])):
    s.sendto(b"x" * 500, (sys.argv[1], 9))' "$CIP" "$1" "$2"
}
# send_back SPORT COUNT: COUNT datagrams of 300 bytes from the first
# container (in its network namespace), port SPORT, to the client's port
# SPORT + 1: they leave through $VH's egress. Podman masquerades what a
# container starts towards another subnet, so the client's datagram first
# (to the container's SPORT, which nobody holds) makes them the replies
# of its conntrack entry, sent with the container's address.
send_back() {
	local pid
	pid=$(podman inspect -f '{{.State.Pid}}' "$CTR1") || return 1
	in_ns "$NSC" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[2]) + 1))
s.sendto(b"z", (sys.argv[1], int(sys.argv[2])))' "$CIP" "$1" || return 1
	nsenter --net=/proc/"$pid"/ns/net python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[2])))
for _ in range(int(sys.argv[3])):
    s.sendto(b"y" * 300, (sys.argv[1], int(sys.argv[2]) + 1))' "198.18.$L.1" "$1" "$2"
}
# stats_of NAME FIELD [DIRECTION]: FIELD of the workload NAME in stats -j
# (none: 0), of the received packets unless DIRECTION says
stats_of() {
	"$BLOOMTAP" -j stats --direction "${3:-ingress}" "$VH" | python3 -c '
import json, sys
w = [x for x in json.load(sys.stdin)["workloads"] if x["workload"] == sys.argv[1]]
print(sum(x[sys.argv[2]] for x in w))' "$1" "$2"
}
# named NAME: a probe (port 7001) counted under NAME: the agent's table
# has the container (a probe a try)
PROBES=0
named() { send 7001 1; PROBES=$((PROBES + 1)); [ "$(stats_of "$1" dst_packets)" -gt 0 ]; }
# flow SPORT [DIRECTION DST]: the heavy flows of SPORT to the container
# (received; or of DIRECTION to DST), as "packets:src_workload:dst_workload"
# lines, sorted
flow() {
	"$BLOOMTAP" -j heavy --direction "${2:-ingress}" "$VH" -n 100 | python3 -c '
import json, sys
for f in sorted(json.load(sys.stdin), key=lambda f: str(f["dst_workload"])):
    if f["interval"] == "current" and f["sport"] == int(sys.argv[1]) and f["dst"] == sys.argv[2]:
        print("%d:%s:%s" % (f["packets"], f["src_workload"], f["dst_workload"]))' "$1" "${3:-$CIP}"
}

# the client's namespace is a workload too (a named netns with an address)
wait_for "the agent names the first container" 30 named "$CTR1"
P1=$(stats_of "$CTR1" dst_packets)
send 5000 300
eq "the heavy flow names the client's namespace and the container" "$(flow 5000)" \
	"300:$NSC:$CTR1"
eq "stats: the container's packets as destination" "$(stats_of "$CTR1" dst_packets)" \
	$((P1 + 300))
"$BLOOMTAP" heavy "$VH" > "$WORK/heavy1.txt"
check "heavy (text): the workloads' column" grep -q -- "$NSC > $CTR1" "$WORK/heavy1.txt"
"$BLOOMTAP" stats "$VH" > "$WORK/stats1.txt"
check "stats (text): the container's line" grep -q "^  $CTR1 " "$WORK/stats1.txt"

# sent: the container's datagrams to the client, through $VH's egress
# (the client's ICMP answers are received ones, to the container)
E1=$(stats_of "$CTR1" src_packets egress)
send_back 6000 300
eq "egress: the heavy sent flow names the container and the client's namespace" \
	"$(flow 6000 egress "198.18.$L.1")" "300:$CTR1:$NSC"
# and the container's ICMP answer to the client's first datagram, unless
# rate-limited
E2=$(stats_of "$CTR1" src_packets egress)
check "egress stats: the container's packets as source ($E2: $E1 + 300, or 301)" \
	test "$E2" -ge $((E1 + 300)) -a "$E2" -le $((E1 + 301))
check "egress stats: the client's namespace as destination" \
	test "$(stats_of "$NSC" dst_packets egress)" -ge 300
"$BLOOMTAP" heavy --direction egress "$VH" > "$WORK/heavy-egress.txt"
check "heavy --direction egress (text): the workloads' column" \
	grep -q -- "$CTR1 > $NSC" "$WORK/heavy-egress.txt"
eq "the API's sent heavy flow names the container" "$(curl -s -m 5 \
	"127.0.0.1:$PORT/api/v1/heavy?iface=$VH&n=100&direction=egress" | python3 -c '
import json, sys
print([(f["direction"], f["src_workload"], f["dst_workload"]) for f in json.load(sys.stdin)
       if f["sport"] == 6000 and f["interval"] == "current"])')" "[('egress', '$CTR1', '$NSC')]"
eq "the received flow still as before" "$(flow 5000)" "300:$NSC:$CTR1"

# the container replaced by another on the same address
check "the first container removed" podman rm -f -t 0 "$CTR1"
check "another container on $CIP" podman run -d --name "$CTR2" --network "$NET" --ip "$CIP" \
	"$IMG" sleep 600
wait_for "the agent names the second container" 30 named "$CTR2"
# the probes sent before the table had the second container are the
# first's (its address, until the next scan): counted from here
P1B=$(stats_of "$CTR1" dst_packets)
check "stats: the first container kept its 300 ($P1B >= $((P1 + 300)))" test "$P1B" -ge $((P1 + 300))
P2=$(stats_of "$CTR2" dst_packets)
send 5000 200
eq "the old flow keeps the old name; the same 5-tuple's new packets, the new one" \
	"$(flow 5000 | tr '\n' ' ')" "300:$NSC:$CTR1 200:$NSC:$CTR2 "
eq "stats: the first container's packets stay its own, none of the second's" \
	"$(stats_of "$CTR1" dst_packets)" "$P1B"
eq "stats: the second container's, its own" "$(stats_of "$CTR2" dst_packets)" $((P2 + 200))
H=$(curl -s -m 5 "127.0.0.1:$PORT/api/v1/heavy?iface=$VH&n=100")
eq "the API's heavy flows name both" "$(echo "$H" | python3 -c '
import json, sys
print(sorted(f["dst_workload"] for f in json.load(sys.stdin)
             if f["sport"] == 5000 and f["interval"] == "current"))')" "['$CTR1', '$CTR2']"

# workloads = off: the agent stopped (the table no longer looked up), then
# started again without it: new packets are named nowhere, the old flows
# keep their names
kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
"$BLOOMTAP" run --direction both --listen "127.0.0.1:$PORT" --archive "$WORK/arch" \
	--interval 3600 --workloads off "$VH" >> "$WORK/agent.log" 2>&1 &
AGENT=$!
wait_for "the agent (workloads off) answers /healthz" 30 curl -sf -m 5 "127.0.0.1:$PORT/healthz"
send 5002 100
eq "workloads off: new packets named nowhere" "$(flow 5002)" "100:None:None"
eq "workloads off: the old flows keep their names" "$(flow 5000 | tr '\n' ' ')" \
	"300:$NSC:$CTR1 200:$NSC:$CTR2 "
check "the agents logged no error" bash -c "! grep -i 'error' '$WORK/agent.log'"
expect_fail "workloads: a bad value is refused" "workloads" \
	"$BLOOMTAP" run --workloads sometimes --check "$VH"
summary
[ "$FAIL" = 0 ]
