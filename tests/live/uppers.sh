#!/usr/bin/env bash
# Drops behind a device stacked on the instance's interface:
# a bridge's local delivery, a VLAN sub-interface, a bond with the
# instance on its slave, a macvlan. Each receives the packet again and
# names itself in skb_iif, so a drop there belonged to no instance before.
# Lab: sender A -- B, the instance on B's end of the pair (IF_B), the
# address on the stacked device, nft in B dropping UDP to port 5001. For
# each kind: the instance counts every datagram sent as NETFILTER_DROP, and
# trace of each frame as sent says seen and dropped here. A bridge with a
# second instrumented port is shared: its drops go to the host's count,
# never to the wrong instance. The VLAN and macvlan are made after the
# agent attached (its loop picks them up); the bridge and the bond before
# a plain attach (attach does).
#
# This host's kernel has veth and bridge only: a kind whose module is
# missing is skipped, saying so; make test runs this suite in the 6.1
# guest too (tests/kernels), where Debian's kernel has them all.
source "$(dirname "$0")/../lib/lib.sh"
need_root "uppers"
if [ -z "$BT_UPPERS_INNER" ]; then
	exec unshare --mount --propagation private env BT_UPPERS_INNER=1 bash "$0" "$@"
fi
mount -t bpf bpffs /sys/fs/bpf || { fail "a bpffs of the test's own"; summary; exit 1; }
[ -r /sys/kernel/btf/vmlinux ] || skip_all "uppers: this kernel has no BTF (tp_btf needs it)"
command -v nft >/dev/null || { fail "nft is missing (make deps installs nftables)"; summary; exit 1; }

ID=$$ N=50 COUNT=50 PORT=9489
NS_A=bt-ua-$ID NS_B=bt-ub-$ID NS_C=bt-uc-$ID
IF_A=btua$ID IF_B=btub$ID IF_C=btuc$ID IF_BC=btubc$ID
BR=btubr$ID VL=btuv$ID BOND=btubo$ID MV=btum$ID MV1=btum1$ID
LAB="python3 $TOP/tests/live/drops_lab.py"
WORK=$(mktemp -d /tmp/bt-uppers.XXXXXX)
AGENT=
export BLOOMTAP

cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	in_ns $NS_B "$BLOOMTAP" detach $IF_B >/dev/null 2>&1
	in_ns $NS_B "$BLOOMTAP" detach $IF_BC >/dev/null 2>&1
	cleanup_netns
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

veth_pair $NS_A $IF_A $NS_B $IF_B $N || { fail "lab"; summary; exit 1; }
# C: a second pair into B, for a bridge's or a bond's port of no instance
netns_add $NS_C
ip link add $IF_C netns $NS_C type veth peer name $IF_BC netns $NS_B
ip -n $NS_C link set $IF_C up
ip -n $NS_B addr flush dev $IF_B	# the address goes on the stacked device
in_ns $NS_B nft -f - <<'NFT'
table inet btuppers {
	chain in {
		type filter hook input priority 0;
		udp dport 5001 drop
	}
}
NFT
MAC_A=$(ip -n $NS_A -j link show $IF_A | json_get '[0]["address"]')
mac_of() { ip -n $NS_B -j link show "$1" | json_get '[0]["address"]'; }
host_count() {	# the host's unattributed NETFILTER_DROP
	"$BLOOMTAP" -j drops --host | python3 -c '
import json, sys
print(sum(r["packets"] for r in json.load(sys.stdin)["unattributed"] if r["reason"] == "NETFILTER_DROP"))'
}
# not_seen: IF_B's drops on a shared stacked device of packets it never saw
not_seen() {
	in_ns $NS_B "$BLOOMTAP" -j drops $IF_B | json_get '["shared_not_seen"]'
}
# none_dropped INSTANCE NS PCAP: trace calls no packet of the capture dropped
none_dropped() {
	in_ns "$2" "$BLOOMTAP" -j trace "$1" "$3" | python3 -c '
import json, sys
res = json.load(sys.stdin)
bad = [p["packet"] for p in res if p.get("drops")]
print("dropped here: packets %s" % bad[:5] if bad else "%d packets, none dropped" % len(res))
sys.exit(1 if bad else 0)'
}
# stacked_state DEV: what drops -j says of DEV among IF_B's stacked devices
stacked_state() {
	in_ns $NS_B "$BLOOMTAP" -j drops $IF_B | python3 -c '
import json, sys
print(next((u["drops"] for u in json.load(sys.stdin)["stacked"] if u["name"] == sys.argv[1]), "absent"))' "$1"
}
export -f stacked_state json_get in_ns reason_count host_count not_seen
export NS_B IF_B

# drops_here KIND DEV SEND_IF DST SRC TAG: COUNT datagrams from A (on
# SEND_IF) to DST's port 5001, dropped by nft after DEV received them:
# IF_B's instance counts each, and trace says each was dropped here.
drops_here() {
	local kind=$1 dev=$2 sif=$3 dst=$4 src=$5 tag=$6 before after pcap=$WORK/$1.pcap
	before=$(reason_count $IF_B $NS_B NETFILTER_DROP)
	in_ns $NS_A $LAB send $sif "$MAC_A" "$(mac_of $dev)" "$pcap" $COUNT $src $dst 5001 \
		--tag $tag >/dev/null
	poll_until 10 bash -c "[ \$(reason_count $IF_B $NS_B NETFILTER_DROP) -ge $((before + COUNT)) ]"
	after=$(reason_count $IF_B $NS_B NETFILTER_DROP)
	eq "$kind: the instance on $IF_B counts every drop on $dev" $((after - before)) $COUNT
	check "$kind: trace says seen and dropped here (NETFILTER_DROP)" \
		trace_says $IF_B $NS_B "$pcap" NETFILTER_DROP
}

# can_make KIND: this kernel makes a device of KIND (its module loads;
# vlan and macvlan on IF_B), else WHY says why not
can_make() {
	local t=btut$ID
	case $1 in
	vlan) WHY=$(ip -n $NS_B link add link $IF_B name $t type vlan id 99 2>&1) ;;
	macvlan) WHY=$(ip -n $NS_B link add link $IF_B name $t type macvlan 2>&1) ;;
	*) WHY=$(ip -n $NS_B link add name $t type $1 2>&1) ;;
	esac && ip -n $NS_B link del $t
}
# skip_kind KIND CHECKS: a kind this kernel lacks, its checks skipped
skip_kind() {
	echo "  SKIP  uppers: $1: this kernel cannot make a $1 device (${WHY:-no module}); the 6.1 guest runs it"
	SKIP=$((SKIP + $2))
}

# In the kernels' guest (make test's 6.1 row, under emulation) only the
# kinds this host's kernel lacks: the bridge's checks are the host's
BRIDGE=yes
[ -n "${bt_kdir:-}" ] && BRIDGE=

# --- a bridge, made before attach, with a second port that has no
# instance (IF_BC, from C): the bridge also receives what the instance
# never saw, so its drops are the instance's by digest
if [ -n "$BRIDGE" ]; then
ip -n $NS_B link add $BR type bridge
ip -n $NS_B link set $IF_B master $BR
ip -n $NS_B link set $IF_BC master $BR
ip -n $NS_B link set $IF_BC up
ip -n $NS_B addr add 198.18.$N.2/24 dev $BR
ip -n $NS_B link set $BR up
check "attach on the bridge's port" in_ns $NS_B "$BLOOMTAP" attach $IF_B
eq "bridge with a port of no instance: its drops here if seen here" \
	"$(stacked_state $BR)" "here if seen here"
check "drops says the false-attribution rate by its formula" bash -c \
	"in_ns $NS_B $BLOOMTAP drops $IF_B | grep -q '1 - (1 - f_cur)(1 - f_prev) = '"
drops_here bridge $BR $IF_A 198.18.$N.2 198.18.$N.1 1
# the other port's datagrams, dropped by the same rule: never this instance's
before=$(not_seen) inst_before=$(reason_count $IF_B $NS_B NETFILTER_DROP)
MAC_C=$(ip -n $NS_C -j link show $IF_C | json_get '[0]["address"]')
in_ns $NS_C $LAB send $IF_C "$MAC_C" "$(mac_of $BR)" $WORK/other.pcap $COUNT \
	198.18.$N.3 198.18.$N.2 5001 --tag 6 >/dev/null
poll_until 10 bash -c "[ \$(not_seen) -ge $((before + COUNT)) ]"
eq "the other port's drops: shared_not_seen counts each" $(($(not_seen) - before)) $COUNT
eq "the other port's drops: none counted as the instance's" \
	$(($(reason_count $IF_B $NS_B NETFILTER_DROP) - inst_before)) 0
check "the other port's packets: trace says none dropped here" \
	none_dropped $IF_B $NS_B $WORK/other.pcap

# GRO'd TCP segments from the instance's port (gro on, released at once
# through a throttled tbf, as in drops.sh), dropped by nft on the
# bridge's local input: the instance's by the first segment's digest,
# never "not seen"
in_ns $NS_B nft add rule inet btuppers in tcp dport 5010 drop
in_ns $NS_B ethtool -K $IF_B gro on >/dev/null
before=$(reason_count $IF_B $NS_B NETFILTER_DROP) ns_before=$(not_seen)
gro_before=$(in_ns $NS_B "$BLOOMTAP" -j drops $IF_B | json_get '["gro_skbs"]')
in_ns $NS_A tc qdisc add dev $IF_A root tbf rate 1kbit burst 1600 latency 100s
in_ns $NS_A $LAB send $IF_A "$MAC_A" "$(mac_of $BR)" $WORK/gro1.pcap 11 198.18.$N.1 \
	198.18.$N.2 5010 --tcp --size 600 --tag 11 >/dev/null
in_ns $NS_A tc qdisc change dev $IF_A root tbf rate 10gbit burst 1mb latency 1s
in_ns $NS_A $LAB send $IF_A "$MAC_A" "$(mac_of $BR)" $WORK/gro2.pcap 1 198.18.$N.1 \
	198.18.$N.2 5010 --tcp --size 600 --tag 11 --start 11 >/dev/null
in_ns $NS_A tc qdisc del dev $IF_A root
mergecap -a -F pcap -w $WORK/gro.pcap $WORK/gro1.pcap $WORK/gro2.pcap
poll_until 10 bash -c "[ \$(reason_count $IF_B $NS_B NETFILTER_DROP) -ge $((before + 12)) ]"
eq "bridge, GRO: the instance counts the 12 segments" \
	$(($(reason_count $IF_B $NS_B NETFILTER_DROP) - before)) 12
eq "bridge, GRO: none of them not seen" $(($(not_seen) - ns_before)) 0
gro=$(($(in_ns $NS_B "$BLOOMTAP" -j drops $IF_B | json_get '["gro_skbs"]') - gro_before))
check "bridge, GRO: merged skbs were met ($gro)" test "$gro" -gt 0
check "bridge, GRO: trace of each segment says dropped here" \
	trace_says $IF_B $NS_B $WORK/gro.pcap NETFILTER_DROP
in_ns $NS_B ethtool -K $IF_B gro off >/dev/null

# a second instance on that port: the bridge's drops could be either's
check "attach on a second port" in_ns $NS_B "$BLOOMTAP" attach $IF_BC
eq "bridge with two instrumented ports: shared, the host counts" \
	"$(stacked_state $BR)" "host (shared with another instance)"
before=$(host_count) inst_before=$(reason_count $IF_B $NS_B NETFILTER_DROP)
in_ns $NS_A $LAB send $IF_A "$MAC_A" "$(mac_of $BR)" $WORK/shared.pcap $COUNT \
	198.18.$N.1 198.18.$N.2 5001 --tag 2 >/dev/null
poll_until 10 bash -c "[ \$(host_count) -ge $((before + COUNT)) ]"
eq "shared: every drop in the host's count" $(($(host_count) - before)) $COUNT
eq "shared: none given to either instance" \
	$(($(reason_count $IF_B $NS_B NETFILTER_DROP) - inst_before)) 0
check "detach of the second port's instance" in_ns $NS_B "$BLOOMTAP" detach $IF_BC
eq "the bridge is the first instance's again, by digest" "$(stacked_state $BR)" \
	"here if seen here"
ip -n $NS_B link set $IF_B nomaster
ip -n $NS_B link del $BR
check "detach" in_ns $NS_B "$BLOOMTAP" detach $IF_B
else
	echo "  SKIP  uppers: the bridge's checks: run on the host's kernel (this is the kernels' guest)"
	SKIP=$((SKIP + 19))
fi

# --- a bond with the instance on its slave (enslaved first: a bond takes
# no slave with an XDP program), attached after
if can_make bond; then
	ip -n $NS_B link add $BOND type bond mode active-backup
	ip -n $NS_B link set $IF_B down
	ip -n $NS_B link set $IF_B master $BOND
	ip -n $NS_B addr add 198.18.$N.2/24 dev $BOND
	ip -n $NS_B link set $BOND up
	ip -n $NS_B link set $IF_B up
	check "bond: attach on the slave" in_ns $NS_B "$BLOOMTAP" attach $IF_B
	eq "bond: drops -j names it stacked, its drops here" "$(stacked_state $BOND)" here
	wait_for "bond: the slave is active" 10 bash -c \
		"ip -n $NS_B -d link show $BOND | grep -q 'active_slave $IF_B'"
	drops_here bond $BOND $IF_A 198.18.$N.2 198.18.$N.1 3
	check "bond: detach" in_ns $NS_B "$BLOOMTAP" detach $IF_B
	ip -n $NS_B link set $IF_B nomaster
	ip -n $NS_B link del $BOND
	ip -n $NS_B link set $IF_B up
	# a second slave of no instance (balance-rr: both deliver to the
	# bond): the bond's drops are the instance's by digest, never the
	# other slave's
	ip -n $NS_B link add $BOND type bond mode balance-rr
	ip -n $NS_B link set $IF_B down
	ip -n $NS_B link set $IF_BC down
	ip -n $NS_B link set $IF_B master $BOND
	ip -n $NS_B link set $IF_BC master $BOND
	ip -n $NS_B addr add 198.18.$N.2/24 dev $BOND
	ip -n $NS_B link set $BOND up
	ip -n $NS_B link set $IF_B up
	ip -n $NS_B link set $IF_BC up
	check "bond of two slaves: attach on one" in_ns $NS_B "$BLOOMTAP" attach $IF_B
	eq "bond with a slave of no instance: its drops here if seen here" \
		"$(stacked_state $BOND)" "here if seen here"
	drops_here bond-two $BOND $IF_A 198.18.$N.2 198.18.$N.1 8
	before=$(not_seen) inst_before=$(reason_count $IF_B $NS_B NETFILTER_DROP)
	MAC_C=$(ip -n $NS_C -j link show $IF_C | json_get '[0]["address"]')
	in_ns $NS_C $LAB send $IF_C "$MAC_C" "$(mac_of $BOND)" $WORK/bond-other.pcap $COUNT \
		198.18.$N.3 198.18.$N.2 5001 --tag 9 >/dev/null
	poll_until 10 bash -c "[ \$(not_seen) -ge $((before + COUNT)) ]"
	eq "the other slave's drops: shared_not_seen counts each" $(($(not_seen) - before)) $COUNT
	eq "the other slave's drops: none counted as the instance's" \
		$(($(reason_count $IF_B $NS_B NETFILTER_DROP) - inst_before)) 0
	check "bond of two slaves: detach" in_ns $NS_B "$BLOOMTAP" detach $IF_B
	ip -n $NS_B link set $IF_B nomaster
	ip -n $NS_B link set $IF_BC nomaster
	ip -n $NS_B link del $BOND
	ip -n $NS_B link set $IF_B up
else
	skip_kind bond 12
fi

# --- made after the agent attached: its loop gives them to the instance
ip -n $NS_B addr add 198.18.$N.2/24 dev $IF_B
nsenter --net=/var/run/netns/$NS_B "$BLOOMTAP" run --listen 127.0.0.1:$PORT \
	--archive "$WORK/archive" $IF_B > "$WORK/agent.log" 2>&1 &
AGENT=$!
wait_for "the agent answers /healthz" 30 in_ns $NS_B curl -sf -m 5 "127.0.0.1:$PORT/healthz" &&
	ok "the agent answers /healthz"

# a bridge made now (this host has bridges: the loop's refresh is checked
# here too), then taken away
if [ -n "$BRIDGE" ]; then
ip -n $NS_B link add $BR type bridge
ip -n $NS_B link set $IF_B master $BR
wait_for "bridge made after attach: the agent gives it to the instance" 10 \
	bash -c "[ \"\$(stacked_state $BR)\" = here ]" && ok "bridge made after attach: here"
ip -n $NS_B link set $IF_B nomaster
ip -n $NS_B link del $BR
wait_for "bridge deleted: gone from the stacked devices" 10 \
	bash -c "[ \"\$(stacked_state $BR)\" = absent ]" && ok "bridge deleted: gone"
else
	SKIP=$((SKIP + 2))
fi

if can_make vlan; then
	ip -n $NS_A link add link $IF_A name $VL type vlan id 100
	ip -n $NS_B link add link $IF_B name $VL type vlan id 100
	ip -n $NS_A link set $VL up
	ip -n $NS_B addr add 198.18.51.2/24 dev $VL
	ip -n $NS_B link set $VL up
	wait_for "vlan: the agent gives the VLAN's drops to the instance" 10 \
		bash -c "[ \"\$(stacked_state $VL)\" = here ]" && ok "vlan: its drops here"
	drops_here vlan $VL $VL 198.18.51.2 198.18.51.1 4
	ip -n $NS_B link del $VL
	ip -n $NS_A link del $VL
	wait_for "vlan: gone from the stacked devices" 10 \
		bash -c "[ \"\$(stacked_state $VL)\" = absent ]" && ok "vlan: gone"
else
	skip_kind vlan 4
fi

# a macvlan in bridge mode takes its siblings' frames without the
# lower's receive, wherever they are: its drops are the instance's by
# digest, with no sibling in B too; one in vepa mode sends them out (they
# come back through the lower): its drops are the instance's outright
if can_make macvlan; then
	ip -n $NS_B link add link $IF_B name $MV type macvlan mode bridge
	ip -n $NS_B addr add 198.18.52.2/24 dev $MV
	ip -n $NS_B link set $MV up
	wait_for "macvlan, bridge mode: the agent gives its drops to the instance by digest" 10 \
		bash -c "[ \"\$(stacked_state $MV)\" = 'here if seen here' ]" &&
		ok "macvlan, bridge mode: its drops here if seen here"
	drops_here macvlan $MV $IF_A 198.18.52.2 198.18.52.1 5
	# its sibling moved to C: 20 datagrams from it to a closed port on MV
	ip -n $NS_B link add link $IF_B name $MV1 type macvlan mode bridge
	ip -n $NS_B link set $MV1 netns $NS_C
	ip -n $NS_C link set $MV1 up
	before=$(not_seen) inst_before=$(reason_count $IF_B $NS_B NO_SOCKET)
	in_ns $NS_C $LAB send $MV1 "$(ip -n $NS_C -j link show $MV1 | json_get '[0]["address"]')" \
		"$(mac_of $MV)" $WORK/sibling.pcap 20 198.18.52.3 198.18.52.2 5009 --tag 7 >/dev/null
	poll_until 10 bash -c "[ \$(not_seen) -ge $((before + 20)) ]"
	eq "macvlan, a sibling in another namespace: shared_not_seen counts its 20" \
		$(($(not_seen) - before)) 20
	eq "macvlan, a sibling in another namespace: no NO_SOCKET of the instance's" \
		$(($(reason_count $IF_B $NS_B NO_SOCKET) - inst_before)) 0
	check "macvlan, the sibling's datagrams: trace says none dropped here" \
		none_dropped $IF_B $NS_B $WORK/sibling.pcap
	ip -n $NS_C link del $MV1
	ip -n $NS_B link del $MV
	ip -n $NS_B link add link $IF_B name $MV type macvlan mode vepa
	ip -n $NS_B addr add 198.18.52.2/24 dev $MV
	ip -n $NS_B link set $MV up
	wait_for "macvlan, vepa mode: the agent gives its drops to the instance" 10 \
		bash -c "[ \"\$(stacked_state $MV)\" = here ]" && ok "macvlan, vepa mode: its drops here"
	drops_here macvlan-vepa $MV $IF_A 198.18.52.2 198.18.52.1 10
else
	skip_kind macvlan 9
fi

kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
grep -iE "error|warn" "$WORK/agent.log" | sed 's/^/        agent: /' | head -5
check "detach" in_ns $NS_B "$BLOOMTAP" detach $IF_B
check "no host program left (the last instance removed it)" \
	test ! -e /sys/fs/bpf/bloomtap_drops/link

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
