#!/usr/bin/env bash
# The README's first lab (its five-minute tour), run line for line as it
# stands, with its names made unique to this run (namespaces, interfaces,
# the archive) and B pointed at the build under test: every line must
# succeed, and the lab must show what the README says it shows.
source "$(dirname "$0")/../lib/lib.sh"
need_root "first lab"

TMP=$(mktemp -d)
N=fl$$
cleanup() {
	ip netns del "$N-a" 2>/dev/null; ip netns del "$N-b" 2>/dev/null
	"$BLOOMTAP" detach --instance "${N}vb" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# the block between the markers, its names made unique
readme_block first-lab |
	sed -e "s|^B=.*|B=$BLOOMTAP|" -e "s|lab-va|${N}va|g" -e "s|lab-vb|${N}vb|g" \
	    -e "s|lab-a|$N-a|g" -e "s|lab-b|$N-b|g" -e "s|/tmp/lab-archive|$TMP/archive|g" > "$TMP/lab.sh"
check "the README's first lab has its lines ($(wc -l < "$TMP/lab.sh"))" test "$(wc -l < "$TMP/lab.sh")" -ge 10
check "no ip netns exec in it" bash -c "! grep -q 'ip netns exec' '$TMP/lab.sh'"
cd "$TOP" || exit 1
# bounded: a line that waits for a state that never comes (the agent's
# HTTP) would wait for ever, as it would for a reader of the README
timeout 120 bash -e "$TMP/lab.sh" > "$TMP/out" 2>&1
RC=$?
eq "every line of the first lab succeeded (exit)" "$RC" 0
[ $RC -eq 0 ] || sed 's/^/        /' "$TMP/out" | tail -20
check "stats: 5 ICMP packets" grep -qE '^  icmp +5$' "$TMP/out"
check "heavy: the ping flow" grep -q "198.18.0.1" "$TMP/out"
check "windows: a window holding digests" grep -qE 'window +0 +current' "$TMP/out"
check "trace: the capture's 5 packets seen, each at its own time" bash -c \
	"grep -q '^5 IP packets: 5 seen, 0 not seen' '$TMP/out' && grep -q \"each packet's capture time +- 2 s\" '$TMP/out'"
check "the agent's metrics, from its namespace" grep -q "^bloomtap_packets_total{interface=\"${N}vb\",direction=\"ingress\"} [1-9]" "$TMP/out"
check "nothing left: namespaces" bash -c "! ip netns list | grep -q '^$N-'"
check "nothing left: pins" test ! -e "/sys/fs/bpf/bloomtap/${N}vb"
summary
[ $FAIL -eq 0 ]
