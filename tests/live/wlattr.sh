#!/usr/bin/env bash
# Attribution at packet time (docs/workloads.md "Attribution"): an agent on
# a host-side veth, UDP from a client namespace through it to a podman
# container (runc, busybox-static image) on a podman network of
# 198.18.X.0/24. The heavy flow and stats name the container; then the
# container is replaced by another on the same address (podman run --ip):
# the old flow keeps the old name, the same 5-tuple's new packets are a
# flow of their own under the new name, and stats count each generation
# apart; trace names each capture's packets by the container that held
# the address when they passed, the first capture the first container
# after the second took the address; /metrics has the same counts, capped
# (metrics-workloads), and an IPFIX export of the flows their names.
# The agent records both directions (--direction both): the container's
# datagrams to the client leave through the interface's egress program,
# whose heavy flow and stats name the container as their source.
# Forwarding in the host namespace is turned on for the run (saved and
# restored): the packets reach the container.
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
client_via_host "$NSC" "$VC" "$VH" "$L" "$SUB" || { fail "the client's namespace"; summary; exit 1; }

: > "$WORK/agent.conf"
# a ring of 16 one-second windows, archived within a second: the first
# capture's windows are in the archive alone before the end
"$BLOOMTAP" run --direction both --listen "127.0.0.1:$PORT" --archive "$WORK/arch" --interval 3600 \
	--windows 16 --archive-flush 1 --config "$WORK/agent.conf" "$VH" > "$WORK/agent.log" 2>&1 &
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
# wlm SIDE [LABELS]: bloomtap_workload_packets_total of SIDE on $VH with
# exactly these labels after side's (LABELS: workload="NAME",... as
# /metrics writes them; overflow="true" for the overflow), none: 0
wlm() {
	curl -s -m 5 "127.0.0.1:$PORT/metrics" | python3 -c '
import sys
want = "bloomtap_workload_packets_total{interface=\"%s\",direction=\"ingress\",side=\"%s\",%s}" % tuple(sys.argv[1:4])
print(sum(int(l.rsplit(" ", 1)[1]) for l in sys.stdin if l.rsplit(" ", 1)[0] == want))' \
		"$VH" "$1" "$2"
}
# wl_own: the workloads with series of their own on $VH (their packets as
# source and destination), one a line, sorted
wl_own() {
	curl -s -m 5 "127.0.0.1:$PORT/metrics" | python3 -c '
import re, sys
print(" ".join(sorted({m.group(1) for m in re.finditer(r"^bloomtap_workload_packets_total\{interface=\"%s\",direction=\"ingress\",side=\"(?:src|dst)\",workload=\"([^\"]*)\"" % sys.argv[1], sys.stdin.read(), re.M)})))' "$VH"
}
# left_out: bloomtap_workload_left_out_total of $VH's ingress
left_out() {
	curl -s -m 5 "127.0.0.1:$PORT/metrics" | sed -n \
		"s/^bloomtap_workload_left_out_total{interface=\"$VH\",direction=\"ingress\"} //p"
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

# names_of PCAP [API]: trace's answers for the capture as a
# "seen:src_workload:dst_workload" line each, counted ("300 True:a:b");
# API: through the agent's /api/v1/trace
names_of() {
	if [ -n "${2:-}" ]; then
		curl -s -m 30 -X POST --data-binary "@$1" "127.0.0.1:$PORT/api/v1/trace"
	else
		"$BLOOMTAP" -j trace "$VH" "$1"
	fi | python3 -c '
import collections, json, sys
c = collections.Counter("%s:%s:%s" % (p["seen"], p["src_workload"], p["dst_workload"])
                        for p in json.load(sys.stdin))
print(" ".join("%d %s" % (n, k) for k, n in sorted(c.items())))'
}
# captured PCAP COUNT SPORT: COUNT datagrams from SPORT sent, as the
# client's veth sent them, in PCAP
captured() {
	capture_bg "$NSC" "$VC" "$1" "$2" sent,udp:9
	send "$3" "$2"
	wait "$CAPTURE_PID"
}

# the client's namespace is a workload too (a named netns with an address)
wait_for "the agent names the first container" 30 named "$CTR1"
# table IP: the workload the instance's table gives IP now (workloads IFACE)
table() {
	"$BLOOMTAP" -j workloads "$VH" | python3 -c '
import json, sys
print(" ".join(str(e["workload"]) for e in json.load(sys.stdin) if e["address"] == sys.argv[1]))' "$1"
}
eq "workloads IFACE: the table gives the container's address its name" "$(table "$CIP")" "$CTR1"
"$BLOOMTAP" workloads "$VH" > "$WORK/table1.txt"
check "... and in text" grep -Eq "^$CIP +[0-9]+ $CTR1\$" "$WORK/table1.txt"
P1=$(stats_of "$CTR1" dst_packets)
captured "$WORK/one.pcap" 300 5000
eq "trace: the first capture's packets name the client's namespace and the first container" \
	"$(names_of "$WORK/one.pcap")" "300 True:$NSC:$CTR1"
"$BLOOMTAP" trace "$VH" "$WORK/one.pcap" > "$WORK/trace1.txt"
T1=$(grep -c "^  workloads: $NSC > $CTR1\$" "$WORK/trace1.txt")
eq "trace (text): a workloads line a packet" "$T1" 300
eq "the heavy flow names the client's namespace and the container" "$(flow 5000)" \
	"300:$NSC:$CTR1"
eq "stats: the container's packets as destination" "$(stats_of "$CTR1" dst_packets)" \
	$((P1 + 300))
"$BLOOMTAP" heavy "$VH" > "$WORK/heavy1.txt"
check "heavy (text): the workloads' column" grep -q -- "$NSC > $CTR1" "$WORK/heavy1.txt"
"$BLOOMTAP" stats "$VH" > "$WORK/stats1.txt"
check "stats (text): the container's line" grep -q "^  $CTR1 " "$WORK/stats1.txt"
# /metrics: the same counts, the container's labels, the namespace's name
eq "/metrics: the container's packets as destination" \
	"$(wlm dst "workload=\"$CTR1\",container=\"$CTR1\"")" $((P1 + 300))
eq "/metrics: the client's namespace as source (a netns: its workload label alone)" \
	"$(wlm src "workload=\"$NSC\"")" "$(stats_of "$NSC" src_packets)"
check "/metrics: the client's namespace sent the 300 ($(wlm src "workload=\"$NSC\"") >= 300)" \
	test "$(wlm src "workload=\"$NSC\"")" -ge 300
eq "/metrics: nothing under the overflow (the cap, 100, not reached)" \
	"$(wlm dst 'overflow="true"') $(left_out)" "0 0"
curl -s -m 5 "127.0.0.1:$PORT/metrics" > "$WORK/metrics.txt"
check "/metrics with workloads' series: promtool check metrics" \
	bash -c "promtool check metrics < '$WORK/metrics.txt'"

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
# and has given its eth0 to the drop path (another step of the scan: a
# datagram before it dies in the container unseen by the instance)
PID2=$(podman inspect -f '{{.State.Pid}}' "$CTR2" 2>/dev/null)
wl_device() {
	"$BLOOMTAP" -j drops "$VH" | python3 -c '
import json, sys
sys.exit(0 if any(x["netns"] == int(sys.argv[1]) and x["ifindex"] == int(sys.argv[2])
                  for x in json.load(sys.stdin)["workload_devices"]["devices"]) else 1)' \
		"$(stat -L -c %i /proc/$PID2/ns/net)" \
		"$(nsenter --net=/proc/$PID2/ns/net ip -j link show eth0 | json_get '[0]["ifindex"]')"
}
wait_for "the agent gives the second container's eth0 to the drop path" 10 wl_device
eq "workloads IFACE: the address is the second container's now" "$(table "$CIP")" "$CTR2"
# the probes sent before the table had the second container are the
# first's (its address, until the next scan): counted from here
P1B=$(stats_of "$CTR1" dst_packets)
check "stats: the first container kept its 300 ($P1B >= $((P1 + 300)))" test "$P1B" -ge $((P1 + 300))
P2=$(stats_of "$CTR2" dst_packets)
captured "$WORK/two.pcap" 200 5000
eq "trace: the second capture's packets name the second container" \
	"$(names_of "$WORK/two.pcap")" "200 True:$NSC:$CTR2"
eq "trace: the first capture's still name the first container (the address reused)" \
	"$(names_of "$WORK/one.pcap")" "300 True:$NSC:$CTR1"
# a clock step since (the conversion's input stepped, as horizon.sh
# does): the history moves with the windows, never to the next holder
eq "trace after a clock step of 300 s: still the first container, never the second" \
	"$(BLOOMTAP_TEST_CLOCK_STEP_S=300 names_of "$WORK/one.pcap")" "300 True:$NSC:$CTR1"
eq "/api/v1/trace: each capture its own container" \
	"$(names_of "$WORK/one.pcap" api) / $(names_of "$WORK/two.pcap" api)" \
	"300 True:$NSC:$CTR1 / 200 True:$NSC:$CTR2"
# the first capture's windows sealed into the archive and gone from the
# ring (16 windows): named by the history at their archived times
archived_only() {
	"$BLOOMTAP" -j trace "$VH" "$WORK/one.pcap" | python3 -c '
import json, sys
a = json.load(sys.stdin)
sys.exit(0 if all(p["windows"] and all(w["source"] == "archive" for w in p["windows"])
                  for p in a) else 1)'
}
poll_until 60 archived_only
check "the first capture's windows: in the archive alone now" archived_only
eq "trace: the first capture's, from the archive alone, still name the first container" \
	"$(names_of "$WORK/one.pcap")" "300 True:$NSC:$CTR1"
eq "the old flow keeps the old name; the same 5-tuple's new packets, the new one" \
	"$(flow 5000 | tr '\n' ' ')" "300:$NSC:$CTR1 200:$NSC:$CTR2 "
eq "stats: the first container's packets stay its own, none of the second's" \
	"$(stats_of "$CTR1" dst_packets)" "$P1B"
eq "stats: the second container's, its own" "$(stats_of "$CTR2" dst_packets)" $((P2 + 200))
# the dropped flow (the datagrams died in the containers, NO_SOCKET): one
# key for both captures, its address held by both in the interval, each
# with drops counted: both, oldest first; a generation that held it with
# no drop (none here, a podman netns before its name at worst) left out
eq "heavy --dropped: the flow of both captures names both containers" \
	"$("$BLOOMTAP" -j heavy --dropped -n 100 "$VH" | python3 -c '
import json, sys
print([f["dst_workload"] for f in json.load(sys.stdin) if f["sport"] == 5000])')" \
	"['$CTR1 or $CTR2']"
eq "/metrics: the second container's series, its own" \
	"$(wlm dst "workload=\"$CTR2\",container=\"$CTR2\"")" $((P2 + 200))
eq "/metrics: the first, retired, has no series any more" "$(wl_own)" \
	"$(printf '%s\n' "$NSC" "$CTR2" | sort | tr '\n' ' ' | sed 's/ $//')"
# the cap: metrics-workloads = 1 (a reload): one of the two keeps its
# series, the other's packets from then on go to the overflow series
echo "metrics-workloads = 1" > "$WORK/agent.conf"
kill -HUP "$AGENT"
one_own() { [ "$(wl_own | wc -w)" = 1 ]; }
wait_for "/metrics: one workload keeps a series of its own (cap 1)" 30 one_own
eq "/metrics: one generation left out by the cap" "$(left_out)" 1
O=$(( $(wlm src 'overflow="true"') + $(wlm dst 'overflow="true"') ))
send 5001 50
overflow() { echo $(( $(wlm src 'overflow="true"') + $(wlm dst 'overflow="true"') - O )); }
eq "/metrics: the overflow series counted the 50 of the one left out" "$(overflow)" 50
eq "/metrics: and counts them once (scraped again)" "$(overflow)" 50
# the left-out one retired between two scrapes: its last packets still
# the overflow's (the client's namespace, the older id, kept its series)
eq "/metrics: the client's namespace kept its series, the container is the overflow's" \
	"$(wl_own)" "$NSC"
send 5001 30
check "the second container removed" podman rm -f -t 0 "$CTR2"
gone() { [ -z "$(table "$CIP")" ]; }
wait_for "the table no longer names $CIP" 30 gone
eq "/metrics: a retired overflow generation's last 30 counted" "$(overflow)" 80
H=$(curl -s -m 5 "127.0.0.1:$PORT/api/v1/heavy?iface=$VH&n=100")
eq "the API's heavy flows name both" "$(echo "$H" | python3 -c '
import json, sys
print(sorted(f["dst_workload"] for f in json.load(sys.stdin)
             if f["sport"] == 5000 and f["interval"] == "current"))')" "['$CTR1', '$CTR2']"

# workloads = off: the agent killed (SIGKILL: its table left in force),
# then started again without it: the table is turned off, new packets are
# named nowhere, the old flows keep their names
kill -9 "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
"$BLOOMTAP" run --direction both --listen "127.0.0.1:$PORT" --archive "$WORK/arch" \
	--interval 3600 --workloads off "$VH" >> "$WORK/agent.log" 2>&1 &
AGENT=$!
wait_for "the agent (workloads off) answers /healthz" 30 curl -sf -m 5 "127.0.0.1:$PORT/healthz"
send 5002 100
eq "workloads off: new packets named nowhere" "$(flow 5002)" "100:None:None"
check "workloads IFACE: an empty table, said so" grep -q "no address in the workload table" \
	<("$BLOOMTAP" workloads "$VH")
eq "workloads off: the old flows keep their names" "$(flow 5000 | tr '\n' ' ')" \
	"300:$NSC:$CTR1 200:$NSC:$CTR2 "
eq "workloads off: trace still names each capture's container" \
	"$(names_of "$WORK/one.pcap") / $(names_of "$WORK/two.pcap")" \
	"300 True:$NSC:$CTR1 / 200 True:$NSC:$CTR2"
check "the agents logged no error" bash -c "! grep -i 'error' '$WORK/agent.log'"
expect_fail "workloads: a bad value is refused" "workloads" \
	"$BLOOMTAP" run --workloads sometimes --check "$VH"
expect_fail "workloads IFACE --root: refused" "not an instance's table" \
	"$BLOOMTAP" workloads "$VH" --root /
expect_fail "workloads of no instance: refused" "btwa-none" "$BLOOMTAP" workloads "btwa-none$ID"
# IPFIX: the interval ended by heavy --flip (the agent stopped: the
# instance's intervals are its own then) as the agent exports it; the
# workloads' enterprise elements (32473/1, 32473/2) decoded from the raw
# bytes (tests/live/ipfix_check.py workloads)
kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
check "heavy --flip --ipfix-file" "$BLOOMTAP" heavy --flip --ipfix-file "$WORK/flows.ipfix" "$VH" -n 1
python3 "$TOP/tests/live/ipfix_check.py" workloads "$WORK/flows.ipfix" > "$WORK/ipfix.txt"
eq "IPFIX: each flow of the 5-tuple carries its workloads as they were" \
	"$(grep '^5000 ' "$WORK/ipfix.txt" | tr '\n' ' ')" \
	"5000 200 $NSC $CTR2 5000 300 $NSC $CTR1 5000 500 - - dropped "
# (the 500 died in the containers, NO_SOCKET: a dropped flow, unnamed)
eq "IPFIX: a flow named nowhere carries empty names" \
	"$(grep '^5002 ' "$WORK/ipfix.txt")" "5002 100 - -"
summary
[ "$FAIL" = 0 ]
