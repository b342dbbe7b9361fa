#!/usr/bin/env bash
# Interfaces of one name in two network namespaces: the pins are the host's
# (one bpffs), named after the interface, so an instance attached in the
# first must never be taken for the second's: attach, detach, status, the
# readers and the agent in the second refuse it (or mark it), naming the
# first namespace, and leave it as it was.
source "$(dirname "$0")/../lib/lib.sh"
need_root "netns"

ID=$$
NS1=bt-ns1-$ID NS2=bt-ns2-$ID
IF=btn$ID
TMP=$(mktemp -d)
cleanup() {
	"$BLOOMTAP" detach --instance "$IF" >/dev/null 2>&1
	"$BLOOMTAP" detach --instance "nsr-$ID" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# namespace NS, veth IF -- ${IF}p inside it, 198.18.N.1/24 and .2/24
lab() {
	netns_add "$1" &&
		ip -n "$1" link add "$IF" type veth peer name "${IF}p" &&
		ip -n "$1" addr add "198.18.$2.1/24" dev "$IF" &&
		ip -n "$1" addr add "198.18.$2.2/24" dev "${IF}p" &&
		ip -n "$1" link set "$IF" up && ip -n "$1" link set "${IF}p" up
}
lab "$NS1" 40 && lab "$NS2" 41 || { fail "namespaces"; summary; exit 1; }
INO1=$(stat -L -c %i /var/run/netns/"$NS1")
INO2=$(stat -L -c %i /var/run/netns/"$NS2")
xdp_on() { ip -n "$1" -j link show "$IF" | python3 -c 'import json,sys; print("xdp" in json.load(sys.stdin)[0])'; }
st() { status_field "$1" "$IF" "$2"; }

check "attach in the first namespace" in_ns "$NS1" "$BLOOMTAP" attach "$IF"
eq "status there: attached, here" "$(st "$NS1" state) $(st "$NS1" here)" "attached True"
eq "status there: the namespace's inode" "$(st "$NS1" netns)" "$INO1"

# ---- the second namespace, its own $IF ----
OUT=$(in_ns "$NS2" "$BLOOMTAP" attach "$IF" 2>&1); RC=$?
eq "attach in the second: refused, exit 1" "$RC" 1
check "it names the other namespace and where to detach it" grep -qF \
	"already has bloomtap attached (instance $IF) in another network namespace: the instance belongs to interface $IF of another network namespace (net:[$INO1]; this process is in net:[$INO2]), and this namespace has another device named $IF" <<<"$OUT"
check "and how to enter it" grep -qF "nsenter --net=/var/run/netns/$NS1 bloomtap detach $IF" <<<"$OUT"
eq "the second's $IF has no XDP program" "$(xdp_on "$NS2")" False

for f in "" "--force"; do
	OUT=$(in_ns "$NS2" "$BLOOMTAP" detach $f "$IF" 2>&1); RC=$?
	eq "detach $f in the second: refused, exit 1" "$RC" 1
	check "detach $f: says whose it is, and the way by name" bash -c \
		"grep -qF \"instance '$IF' belongs to interface $IF of another network namespace (net:[$INO1]\" <<<\"\$0\" &&
		 grep -qF \"'bloomtap detach --instance $IF' removes it from here\" <<<\"\$0\"" "$OUT"
done
check "the first's instance is still pinned" test -e /sys/fs/bpf/bloomtap/"$IF"/meta -a \
	-e /sys/fs/bpf/bloomtap/"$IF"/link
eq "and its program is still on the first's $IF" "$(xdp_on "$NS1")" True

eq "status in the second: another namespace's" "$(st "$NS2" state) $(st "$NS2" here) $(st "$NS2" netns)" \
	"other netns False $INO1"
check "status's text says so" bash -c "nsenter --net=/var/run/netns/$NS2 '$BLOOMTAP' status |
	grep '^$IF ' | grep -q 'other netns .*of another network namespace, net:\[$INO1\]'"

# every reader of an IFACE refuses it, exit 1 (a runtime error, trace's
# too: 2 is a usage error)
for c in stats heavy drops windows workloads "watch show" \
	"trace --hex 45000014000000004001000000000000c612280100"; do
	OUT=$(in_ns "$NS2" "$BLOOMTAP" $c "$IF" 2>&1); RC=$?
	check "$c $IF in the second: refused, exit $RC" bash -c "[ $RC -eq 1 ] &&
		grep -qF \"instance '$IF' belongs to interface $IF of another network namespace\" <<<\"\$0\" &&
		grep -qF 'name it with --instance NAME' <<<\"\$0\"" "$OUT"
done
check "stats --instance $IF in the second reads it (named)" in_ns "$NS2" "$BLOOMTAP" stats --instance "$IF"
check "stats $IF in the first reads it" in_ns "$NS1" "$BLOOMTAP" stats "$IF"
OUT=$(in_ns "$NS2" "$BLOOMTAP" run "$IF" --check 2>&1); RC=$?
check "run --check in the second: refused, exit $RC" bash -c "[ $RC -eq 1 ] &&
	grep -qF \"instance '$IF' belongs to interface $IF of another network namespace\" <<<\"\$0\"" "$OUT"
OUT=$(timeout 20 nsenter --net=/var/run/netns/"$NS2" "$BLOOMTAP" run "$IF" --listen 127.0.0.1:19479 \
	--archive "$TMP/arch" 2>&1); RC=$?
eq "the agent in the second: refused at start, exit 1" "$RC" 1
eq "and the first's program is still on its $IF" "$(xdp_on "$NS1")" True
check "run --check in the first: configuration OK" bash -c \
	"nsenter --net=/var/run/netns/$NS1 '$BLOOMTAP' run '$IF' --check | grep -q 'configuration OK'"

# ---- kept by detach --keep-maps in the first: the second's attach must
# not take its counters over ----
check "detach --keep-maps in the first" in_ns "$NS1" "$BLOOMTAP" detach --keep-maps "$IF"
expect_fail "attach in the second of the kept instance: refused" \
	"instance $IF, not attached, belongs to interface $IF of another network namespace (net:[$INO1]" \
	in_ns "$NS2" "$BLOOMTAP" attach "$IF"
check "the kept instance is left as it was" test -e /sys/fs/bpf/bloomtap/"$IF"/meta
check "the first attaches it again" in_ns "$NS1" "$BLOOMTAP" attach "$IF"

# ---- a replay instance is nobody's namespace's ----
check "replay an instance" in_ns "$NS1" "$BLOOMTAP" replay --instance "nsr-$ID" "$PCAPS/dnscap__dns.pcap"
eq "status in the second: a replay instance is here" "$(status_field "$NS2" "nsr-$ID" here)" True
check "stats --instance in the second" in_ns "$NS2" "$BLOOMTAP" stats --instance "nsr-$ID"

# ---- detached in the first, the second's $IF is its own to attach ----
check "detach in the first" in_ns "$NS1" "$BLOOMTAP" detach "$IF"
check "attach in the second now" in_ns "$NS2" "$BLOOMTAP" attach "$IF"
eq "status in the second: attached here" "$(st "$NS2" state) $(st "$NS2" here) $(st "$NS2" netns)" \
	"attached True $INO2"
check "detach in the second" in_ns "$NS2" "$BLOOMTAP" detach "$IF"
check "no pins left" test ! -e /sys/fs/bpf/bloomtap/"$IF"

summary
[ "$FAIL" -eq 0 ]
