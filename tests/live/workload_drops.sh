#!/usr/bin/env bash
# Drops followed into a workload's namespace: a client namespace -> the
# node (the host's namespace, where podman's bridge lives) -> a podman
# container (runc, an image imported from busybox-static) on a podman
# network of 198.18.X.0/24. The agent runs in the host's namespace on the
# node's end of the client's veth (IF_H); the node forwards. N UDP
# datagrams to a closed port of the container die there as NO_SOCKET, N
# to a port an nft rule inside the container's namespace drops die as
# NETFILTER_DROP: the instance counts each, and trace of the client's
# capture says each was dropped here with its reason. Datagrams the
# instance never saw, dropped in the container (sent from the host itself,
# and from another container), are not its own: workload_not_seen. The
# container is started after the agent: its loop registers the device.
# Pins in a bpffs of the test's own (a mount namespace); every container,
# network, namespace and sysctl touched is put back on exit.
source "$(dirname "$0")/../lib/lib.sh"
need_root "workload_drops"
need_podman "workload_drops"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "workload_drops: this kernel has no BTF (tp_btf needs it)"
command -v nft >/dev/null || { fail "nft is missing (make deps installs nftables)"; summary; exit 1; }
if [ -z "$BT_WLD_INNER" ]; then
	exec unshare --mount --propagation private env BT_WLD_INNER=1 bash "$0" "$@"
fi
mount -t bpf bpffs /sys/fs/bpf || { fail "a bpffs of the test's own"; summary; exit 1; }

ID=$$ N=40 PORT=$((9600 + ID % 300))
CN=$((100 + ID % 50)) PN=$((150 + ID % 50))	# the client's /24, the podman network's
NS_C=bt-wdc-$ID NS_H=bt-wdh-$ID	# the client; the host's namespace, by name
IF_C=btwdc$ID IF_H=btwdh$ID
IMG=localhost/btwd-test:$ID NET=btwd-$ID SUB=198.18.$PN.0/24
CTR=btwd-c-$ID CTR2=btwd-o-$ID
CLOSED=7001 FILTERED=7002
LAB="python3 $TOP/tests/live/drops_lab.py"
WORK=$(mktemp -d /tmp/bt-wldrops.XXXXXX)
AGENT=
FWD=$(cat /proc/sys/net/ipv4/ip_forward)
export BLOOMTAP

cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	"$BLOOMTAP" detach $IF_H >/dev/null 2>&1
	podman rm -f -t 0 "$CTR" "$CTR2" >/dev/null 2>&1
	podman network rm -f "$NET" >/dev/null 2>&1
	podman rmi -f "$IMG" >/dev/null 2>&1
	ip link del $IF_H 2>/dev/null
	ip netns del $NS_H 2>/dev/null	# the name only: the host's namespace stays
	cleanup_netns
	sysctl -qw net.ipv4.ip_forward="$FWD"
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# the client, joined to the host's namespace; the host's namespace named
# for in_ns (ip netns attach: a name, no new namespace)
netns_add $NS_C
ip netns attach $NS_H $$ || { fail "naming the host's namespace"; summary; exit 1; }
ip link add $IF_C netns $NS_C type veth peer name $IF_H || { fail "lab"; summary; exit 1; }
ip -n $NS_C addr add 198.18.$CN.1/24 dev $IF_C
ip addr add 198.18.$CN.2/24 dev $IF_H
ip -n $NS_C link set $IF_C up
ip link set $IF_H up
ip -n $NS_C route add $SUB via 198.18.$CN.2
sysctl -qw net.ipv4.ip_forward=1

# the image: busybox-static and the link the containers run
mkdir -p "$WORK/img/bin"
cp /bin/busybox "$WORK/img/bin/"
ln -s busybox "$WORK/img/bin/sleep"
tar -C "$WORK/img" -cf "$WORK/img.tar" . &&
	podman import -q --change 'ENV=PATH=/bin' "$WORK/img.tar" "$IMG" >/dev/null ||
	{ fail "podman import of busybox-static"; summary; exit 1; }
check "podman network on $SUB" podman network create --subnet "$SUB" "$NET"

"$BLOOMTAP" run --listen 127.0.0.1:$PORT --archive "$WORK/archive" $IF_H > "$WORK/agent.log" 2>&1 &
AGENT=$!
wait_for "the agent answers /healthz" 30 curl -sf -m 5 "127.0.0.1:$PORT/healthz" &&
	ok "the agent answers /healthz"

# started after the agent: its loop gives the container's device to IF_H
check "a podman container on $SUB" podman run -d --name "$CTR" --network "$NET" "$IMG" sleep 600
check "another container on $SUB" podman run -d --name "$CTR2" --network "$NET" "$IMG" sleep 600
PID=$(podman inspect -f '{{.State.Pid}}' "$CTR" 2>/dev/null)
PID2=$(podman inspect -f '{{.State.Pid}}' "$CTR2" 2>/dev/null)
ADDR=$(podman inspect -f "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$CTR" 2>/dev/null)
in_ctr() { nsenter --net=/proc/$PID/ns/net "$@"; }
CINO=$(stat -L -c %i /proc/$PID/ns/net)
CIF=$(in_ctr ip -j link show eth0 | json_get '[0]["ifindex"]')
check "the container has an address on $SUB ($ADDR)" test "${ADDR%.*}" = "198.18.$PN"
in_ctr nft -f - <<NFT
table inet btwd {
	chain in {
		type filter hook input priority 0;
		udp dport $FILTERED counter drop
	}
}
NFT
# registered: (the container's namespace, its eth0) in IF_H's workload devices
registered() {
	"$BLOOMTAP" -j drops $IF_H | python3 -c '
import json, sys
d = json.load(sys.stdin)["workload_devices"]
sys.exit(0 if any(x["netns"] == int(sys.argv[1]) and x["ifindex"] == int(sys.argv[2])
                  for x in d["devices"]) else 1)' "$CINO" "$CIF"
}
wait_for "the agent gives the container's eth0 to IF_H's instance" 10 registered &&
	ok "the agent gives the container's eth0 to IF_H's instance"
unregistered() { ! registered; }
not_seen() { "$BLOOMTAP" -j drops $IF_H | json_get '["workload_not_seen"]'; }
not_seen_at_least() { [ "$(not_seen)" -ge "$1" ]; }

MAC_C=$(ip -n $NS_C -j link show $IF_C | json_get '[0]["address"]')
MAC_H=$(ip -j link show $IF_H | json_get '[0]["address"]')
# drop_names PCAP: trace's drops of the capture's packets, as
# "reason:in_workload:workload" counted ("40 NO_SOCKET:True:btwd-c-1")
drop_names() {
	"$BLOOMTAP" -j trace $IF_H "$1" | python3 -c '
import collections, json, sys
c = collections.Counter("%s:%s:%s" % (d["reason"], d["in_workload"], d["workload"])
                        for p in json.load(sys.stdin) for d in p.get("drops", []))
print(" ".join("%d %s" % (n, k) for k, n in sorted(c.items())))'
}
# sent DPORT TAG REASON [WHERE [LAB-OPTION...]]: N datagrams from the
# client to the container's DPORT, forwarded by the node: the instance
# counts each as REASON, and trace says each was seen and dropped here
# with it, in the container (WHERE "in", the default: named by it) or on
# the node ("node": in no workload)
sent() {
	local dport=$1 tag=$2 reason=$3 where=${4:-in} before after pcap=$WORK/$3.pcap
	shift 3; shift $(($# > 0))
	before=$(reason_count $IF_H $NS_H $reason)
	in_ns $NS_C $LAB send $IF_C "$MAC_C" "$MAC_H" "$pcap" $N 198.18.$CN.1 "$ADDR" $dport \
		--tag $tag "$@" >/dev/null
	poll_until 10 bash -c "[ \$(reason_count $IF_H $NS_H $reason) -ge $((before + N)) ]"
	after=$(reason_count $IF_H $NS_H $reason)
	eq "$reason ($where): the instance on $IF_H counts every one" $((after - before)) $N
	check "$reason ($where): trace of the client's capture says dropped here" \
		trace_says $IF_H $NS_H "$pcap" $reason
	# a heavy dropped flow (its key ends with the reason): the container's
	# address named by the table's history during the interval, wherever
	# it died
	eq "$reason ($where): heavy --dropped -j's flows to the container name it" \
		"$("$BLOOMTAP" -j heavy --dropped -n 1000 $IF_H | python3 -c '
import json, sys
print(sorted(set(f["dst_workload"] for f in json.load(sys.stdin)
                 if f["dst"] == sys.argv[1] and f["reason"] == sys.argv[2])))' "$ADDR" $reason)" \
		"['$CTR']"
	"$BLOOMTAP" heavy --dropped -n 1000 $IF_H > "$WORK/heavy-$reason.txt"
	check "$reason ($where): heavy --dropped (text) names it" \
		grep -qE "$ADDR:$dport udp $reason .* > $CTR\$" "$WORK/heavy-$reason.txt"
	if [ "$where" = in ]; then
		eq "$reason in the container: trace names it at each drop" "$(drop_names "$pcap")" \
			"$N $reason:True:$CTR"
		"$BLOOMTAP" trace $IF_H "$pcap" > "$WORK/$reason.txt"
		eq "$reason in the container: trace (text) names it" \
			"$(grep -c "(reason $reason, in workload $CTR)" "$WORK/$reason.txt")" $N
	else
		eq "$reason on the node: trace names no workload at its drops" \
			"$(drop_names "$pcap")" "$N $reason:False:None"
	fi
}
export -f reason_count in_ns
export IF_H NS_H
# the client knows the node's MAC: its first datagram is not held for ARP
ip -n $NS_C neigh replace 198.18.$CN.2 lladdr "$MAC_H" dev $IF_C nud permanent
sent $CLOSED 1 NO_SOCKET
sent $FILTERED 2 NETFILTER_DROP
# TTL 1: the node drops them itself (forwarding), in no workload
sent $CLOSED 3 IP_INHDR node --ttl 1
# drops by workload: the instance's drops of traffic to the container,
# wherever it died (the TTL ones on the node too), by the name its address
# had then; nothing as a source
wl_dropped() {	# the container's row of drops -j's workloads: "SRC_PKTS DST_PKTS"
	"$BLOOMTAP" -j drops $IF_H | python3 -c '
import json, sys
w = [x for x in json.load(sys.stdin)["workloads"] if x["workload"] == sys.argv[1]]
print("%d %d" % (w[0]["src_packets"], w[0]["dst_packets"]) if len(w) == 1 else len(w))' "$CTR"
}
eq "drops -j counts the instance's drops to the container by its name" "$(wl_dropped)" "0 $((3 * N))"
# the recorder's records carry the ids: each drop's packet comment (and
# custom option) names the workloads of its addresses
"$BLOOMTAP" drops --pcap "$WORK/drops.pcapng" $IF_H 2>/dev/null
eq "drops --pcap: each recorded drop names the client's namespace and the container" \
	"$(tshark -r "$WORK/drops.pcapng" -T fields -e frame.comment 2>/dev/null |
		grep -c ", workloads $NS_C > $CTR\$")" $((3 * N))
# the container's eth0 lies in its own namespace: its drops' interface
# block says which (the index alone names another device here)
eq "drops --pcap: the drops in the container on its eth0, by namespace" \
	"$(tshark -r "$WORK/drops.pcapng" -T fields -e frame.interface_name 2>/dev/null |
		sort | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ' ')" \
	"$N $IF_H $((2 * N)) ifindex $CIF in netns $CINO "
eq "/api/v1/drops counts them the same" "$(curl -sf -m 5 "127.0.0.1:$PORT/api/v1/drops?iface=$IF_H" |
	python3 -c '
import json, sys
print([x["dst_packets"] for x in json.load(sys.stdin)["workloads"] if x["workload"] == sys.argv[1]])' \
	"$CTR")" "[$((3 * N))]"
# /metrics: the drops' series by workload, beside the traffic's
wl_metric() {	# FAMILY SIDE: its series of the container on IF_H
	curl -sf -m 5 "127.0.0.1:$PORT/metrics" | sed -n \
		"s/^$1{interface=\"$IF_H\",side=\"$2\",workload=\"$CTR\"[^}]*} //p"
}
eq "/metrics: bloomtap_workload_dropped_packets_total to the container" \
	"$(wl_metric bloomtap_workload_dropped_packets_total dst)" $((3 * N))
eq "  ... and from it none" "$(wl_metric bloomtap_workload_dropped_packets_total src)" 0
check "  ... its bytes: at least 28 a datagram" \
	test "$(wl_metric bloomtap_workload_dropped_bytes_total dst)" -ge $((3 * N * 28))
"$BLOOMTAP" drops $IF_H > "$WORK/drops.txt"
check "drops (text) lists them by workload" \
	grep -qE "^  $CTR +[0-9]+ +0 +0 +$((3 * N)) " "$WORK/drops.txt"
eq "the container's own nft rule dropped them" \
	"$(in_ctr nft -j list table inet btwd | python3 -c '
import json, sys
print(next(x["counter"]["packets"] for r in json.load(sys.stdin)["nftables"] if "rule" in r
           for x in r["rule"]["expr"] if "counter" in x))')" $N

# never seen by the instance: from the host itself, from another container
send_udp() {	# COUNT DST PORT, from the caller's namespace
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"btwd %d" % i, (sys.argv[2], int(sys.argv[3])))' "$@"
}
nosock=$(reason_count $IF_H $NS_H NO_SOCKET)
ns0=$(not_seen)
send_udp $N "$ADDR" $CLOSED
nsenter --net=/proc/$PID2/ns/net bash -c "$(declare -f send_udp); send_udp $N $ADDR $CLOSED"
poll_until 10 not_seen_at_least $((ns0 + 2 * N))
check "sent from the host and from another container: workload_not_seen, never the instance's" \
	test "$(not_seen)" -ge $((ns0 + 2 * N))
eq "... and its NO_SOCKET count stays" "$(reason_count $IF_H $NS_H NO_SOCKET)" "$nosock"
eq "... and so does the container's count of drops" "$(wl_dropped)" "0 $((3 * N))"
check "drops prints the workloads' devices with the false attribution formula" \
	bash -c "'$BLOOMTAP' drops $IF_H | grep -q \"workloads' devices.*1 - (1 - f_cur)(1 - f_prev) = \""

# the container gone: its device's entry goes with it
podman rm -f -t 0 "$CTR" >/dev/null 2>&1
wait_for "the container removed: its device is no longer IF_H's" 10 unregistered &&
	ok "the container removed: its device is no longer IF_H's"

kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
grep -iE "error|warn" "$WORK/agent.log" | sed 's/^/        agent: /' | head -5
summary
[ "$FAIL" = 0 ]
