#!/usr/bin/env bash
# bloomtap attached to a veth in a network namespace, real ICMP, UDP and TCP
# sent from its peer: stats must count exactly what the peer transmitted;
# then the error paths of attach; then detach leaves nothing behind.
source "$(dirname "$0")/../lib/lib.sh"
need_root "integration"

ID=$$
NSA=bt-it-a-$ID NSB=bt-it-b-$ID
VA=btia$ID VB=btib$ID
PIN=/sys/fs/bpf/bloomtap

cleanup() {
	in_ns "$NSB" "$BLOOMTAP" detach "$VB" >/dev/null 2>&1
	in_ns "$NSA" "$BLOOMTAP" detach "$VA" >/dev/null 2>&1
	rm -rf "$PIN/$VB" "$PIN/$VA" "$PIN/it-replay-$ID" /sys/fs/bpf/bt-it-pass-$ID
	cleanup_netns
}
trap cleanup EXIT INT TERM

echo "integration: veth $VA ($NSA) -> $VB ($NSB)"
veth_pair "$NSA" "$VA" "$NSB" "$VB" 0 || { fail "namespaces"; summary; exit 1; }
# static neighbours: no ARP on the wire either
MAC_A=$(ip -n "$NSA" -br link show "$VA" | awk '{print $3}')
MAC_B=$(ip -n "$NSB" -br link show "$VB" | awk '{print $3}')
ip -n "$NSA" neigh replace 198.18.0.2 lladdr "$MAC_B" dev "$VA" nud permanent
ip -n "$NSB" neigh replace 198.18.0.1 lladdr "$MAC_A" dev "$VB" nud permanent

# ---- attach errors, before anything is attached ----
expect_fail "attach: no such interface" "no such interface" in_ns "$NSB" "$BLOOMTAP" attach nosuchif0
expect_fail "attach: bad --mode" "must be one of" in_ns "$NSB" "$BLOOMTAP" attach --mode turbo "$VB"
expect_fail "stats: unknown instance" "no bloomtap instance 'nope-$ID'" "$BLOOMTAP" stats --instance nope-$ID
# the binary and the capture copied where nobody can read them: the
# checkout's path (and ../shared's modes) are the machine's, not the test's
NR=$(mktemp -d)
chmod 755 "$NR"
install -m 755 "$BLOOMTAP" "$NR/bloomtap"
install -m 644 "$PCAPS/dnscap__dns.pcap" "$NR/dns.pcap"
expect_fail "not root: clear message" "needs root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$NR/bloomtap" replay "$NR/dns.pcap"
rm -rf "$NR"

# ip netns exec gives the command a private /sys: pins made there vanish.
# Refused, with the way that works, and nothing left attached
expect_fail "attach under ip netns exec: refused, says to use nsenter" \
	"nsenter --net=/var/run/netns/NAME bloomtap ... instead" ip netns exec "$NSB" "$BLOOMTAP" attach "$VB"
check "and nothing attached" bash -c "! ip -n $NSB link show $VB | grep -q xdp"
check "attach $VB (native)" in_ns "$NSB" "$BLOOMTAP" attach --mode native --bytes 400 "$VB"
expect_fail "attach twice: already attached" "already has bloomtap attached" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
expect_fail "attach under ip netns exec over a live instance: refused, never --force advice" \
	"nsenter --net=/var/run/netns/NAME" ip netns exec "$NSB" "$BLOOMTAP" attach "$VB"
# bloomtap's program where its pins cannot be seen (a bpffs of its own)
OUT=$(unshare -m bash -c "mount -t bpf bpffs /sys/fs/bpf && nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' attach '$VB'" 2>&1); RC=$?
check "bloomtap's own program, pins not visible: refused (exit $RC), no --force advice" bash -c \
	"[ $RC -ne 0 ] && grep -q \"already runs bloomtap's program\" <<<\"\$0\" && ! grep -q -- '--force' <<<\"\$0\"" "$OUT"
check "the live instance is untouched" bash -c "ip -n $NSB link show $VB | grep -q 'name bloomtap_xdp' && test -e $PIN/$VB"
check "pins are root-only (0700)" test "$(stat -c %a "$PIN/$VB")" = 700
eq "status lists the instance, attached" "$(in_ns "$NSB" "$BLOOMTAP" -j status | python3 -c '
import json, sys; print([i["state"] for i in json.load(sys.stdin) if i["name"] == sys.argv[1]])' "$VB")" "['attached']"

# ---- traffic: counted exactly ----
# (sysfs shows the namespace it was mounted in: ask ip for the counters)
tx() { ip -n "$NSA" -s -j link show "$VA" | json_get "[0]['stats64']['tx']['$1']"; }
P0=$(tx packets) B0=$(tx bytes)
in_ns "$NSA" ping -q -c 5 -i 0.05 -W 1 198.18.0.2 >/dev/null
in_ns "$NSA" bash -c 'for i in $(seq 1 20); do echo "datagram $i" > /dev/udp/198.18.0.2/9000; done'
in_ns "$NSB" timeout 30 nc -l 198.18.0.2 8080 >/dev/null &
NC=$!
wait_for "nc listens" 30 listening "$NSB" t 8080
head -c 200000 /dev/urandom | in_ns "$NSA" timeout 30 nc -N 198.18.0.2 8080
wait $NC
# the last frames of the close cross the veth: poll until bloomtap's count
# stops short of VA's no more (asserted below)
counted_all() { [ "$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')" = "$(tx packets)" ]; }
poll_until 10 counted_all
P1=$(tx packets) B1=$(tx bytes)
SENT=$((P1 - P0)) SENT_BYTES=$((B1 - B0))
STATS=$("$BLOOMTAP" -j stats --instance "$VB")
get() { json_get "[\"$1\"]" <<<"$STATS"; }
eq "packets counted = packets $VA sent" "$(get packets)" "$SENT"
# veth counts bytes after the Ethernet header; XDP sees whole frames
eq "bytes counted = bytes $VA sent + 14 per frame" "$(get bytes)" "$((SENT_BYTES + 14 * SENT))"
eq "icmp = 5 echo requests" "$(get icmp)" 5
eq "udp = 20 datagrams" "$(get udp)" 20
eq "tcp = the rest" "$(get tcp)" "$((SENT - 25))"
check "tcp carried the 200 kB (> 100 segments)" test "$(get tcp)" -gt 100
eq "ipv4 = all" "$(get ipv4)" "$SENT"
eq "nothing else" "$(get ipv6)/$(get l3_other)/$(get malformed)/$(get truncated)" "0/0/0/0"
# heavy at >= 400 bytes: the TCP transfer and the 5 pings (one ICMP echo
# flow, 490 bytes); each UDP datagram came from its own port (56 bytes)
HEAVY=$("$BLOOMTAP" -j heavy --instance "$VB" | python3 -c 'import json,sys; print(" ".join(sorted("%s:%s>%s:%s/%s" % (f["src"], f["sport"], f["dst"], f["dport"], f["proto"]) for f in json.load(sys.stdin) if f["interval"] == "current")))')
check "heavy on a live interface: the TCP flow" grep -q "198.18.0.1:[0-9]*>198.18.0.2:8080/6" <<<"$HEAVY"
check "heavy on a live interface: the ping flow" grep -q "198.18.0.1:8>198.18.0.2:0/1" <<<"$HEAVY"
eq "heavy on a live interface: nothing else" "$(wc -w <<<"$HEAVY")" 2
check "plain stats names match JSON keys" bash -c "'$BLOOMTAP' stats --instance '$VB' | grep -qE '^  tcp +$(get tcp)\$'"

# ---- someone else's program: refused unless --force ----
check "load a foreign XDP program" bpftool prog load "$TOP/.output/tests/xdp_pass.bpf.o" /sys/fs/bpf/bt-it-pass-$ID
check "attach it to $VA" in_ns "$NSA" bpftool net attach xdpdrv pinned /sys/fs/bpf/bt-it-pass-$ID dev "$VA"
expect_fail "attach over a foreign program: refused" "add --force" in_ns "$NSA" "$BLOOMTAP" attach "$VA"
check "attach --force replaces it" in_ns "$NSA" "$BLOOMTAP" attach --force "$VA"
check "$VA now runs bloomtap_xdp" bash -c "ip -n $NSA link show $VA | grep -q 'name bloomtap_xdp'"
check "detach $VA" in_ns "$NSA" "$BLOOMTAP" detach "$VA"
rm -f /sys/fs/bpf/bt-it-pass-$ID

# ---- detach: --keep-maps keeps counters, reattach continues them ----
check "detach --keep-maps" in_ns "$NSB" "$BLOOMTAP" detach --keep-maps "$VB"
eq "counters kept after detach" "$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')" "$SENT"
check "attach again reuses the kept maps" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
eq "counters continue" "$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')" "$SENT"
check "detach" in_ns "$NSB" "$BLOOMTAP" detach "$VB"
check "no pins left" test ! -e "$PIN/$VB"
check "no XDP program left on $VB" bash -c "! ip -n $NSB link show $VB | grep -q xdp"

# ---- skb (generic) mode and segmentation: a TCP transfer of 20 MB. In
# native mode veth makes the sender segment, so bloomtap counts the wire's
# packets; in skb mode the generic hook sees the stack's aggregates (GSO,
# GRO), one "packet" for many segments, exactly what the peer sent as skbs,
# the bytes exact (docs/datapath.md, "skb (generic) mode") ----
check "attach in skb mode" in_ns "$NSB" "$BLOOMTAP" attach --mode skb "$VB"
txs() { ip -n "$NSA" -s -j link show "$VA" | python3 -c 'import json,sys; s=json.load(sys.stdin)[0]["stats64"]["tx"]; print(s["packets"], s["bytes"])'; }
read -r TP0 TB0 <<<"$(txs)"
now() { "$BLOOMTAP" -j stats --instance "$VB" | json_get "[\"$1\"]"; }
P0=$(now packets); B0=$(now bytes)
in_ns "$NSB" timeout 30 nc -l 198.18.0.2 5002 >/dev/null &
NCL=$!
wait_for "nc listens" 30 listening "$NSB" t 5002
head -c 20000000 /dev/zero | in_ns "$NSA" timeout 30 nc -N 198.18.0.2 5002
wait $NCL 2>/dev/null
skbs_counted() { [ $(( $(now packets) - P0 )) = $(( $(txs | cut -d' ' -f1) - TP0 )) ]; }
poll_until 10 skbs_counted
read -r TP1 TB1 <<<"$(txs)"
P1=$(now packets); B1=$(now bytes)
DP=$((P1 - P0)) DTP=$((TP1 - TP0))
echo "        skb mode: bloomtap $DP packets, $((B1 - B0)) bytes; the peer sent $DTP skbs, $((TB1 - TB0)) bytes"
eq "skb mode: one packet an skb the peer sent" "$DP" "$DTP"
eq "skb mode: the bytes exact (the skbs' lengths, as the peer counts them)" "$((B1 - B0))" "$((TB1 - TB0))"
check "skb mode: aggregates, several segments each (mean $(( (B1 - B0) / (DP ? DP : 1) )) bytes)" \
	test $(( (B1 - B0) / (DP ? DP : 1) )) -gt 3000
check "detach" in_ns "$NSB" "$BLOOMTAP" detach "$VB"

# ---- bpffs missing: mounted by the tool (in a private mount namespace) ----
check "bpffs absent: bloomtap mounts it" unshare -m bash -c \
	"umount /sys/fs/bpf 2>/dev/null; '$BLOOMTAP' replay --instance it-replay-$ID '$PCAPS/dnscap__dns6.pcap' 2>&1 | grep -q 'mounted bpffs'"

cleanup
trap - EXIT
check "no namespace left" bash -c "! ip netns list | grep -q 'bt-it-.-$ID'"
summary
[ $FAIL -eq 0 ]
