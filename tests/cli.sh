#!/usr/bin/env bash
# The tool's surface: --help everywhere, errors that say what to do and exit
# non-zero, JSON shapes, replay of good and bad captures, the demo.
source "$(dirname "$0")/lib.sh"
need_root "cli"

ID=$$
INST=cli-$ID
PCAPS=$TOP/../shared/data/pcaps
TMP=$(mktemp -d)
cleanup() { "$BLOOMTAP" detach --instance "$INST" >/dev/null 2>&1; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM

for c in attach detach status stats replay demo; do
	check "$c --help" bash -c "'$BLOOMTAP' $c --help | grep -q '^Usage: bloomtap $c'"
done
check "bloomtap --help lists the commands" bash -c "'$BLOOMTAP' --help | grep -q replay"
expect_fail "unknown command" "unknown or ambiguous command" "$BLOOMTAP" frobnicate
expect_fail "ambiguous prefix" "unknown or ambiguous command" "$BLOOMTAP" st
check "unique prefix works (stat -> status)" "$BLOOMTAP" statu
expect_fail "unknown option" "unknown option '--bogus'" "$BLOOMTAP" stats --bogus
expect_fail "errors are JSON with -j" '{"error":' "$BLOOMTAP" -j stats --instance nope-$ID

# ---- replay: bad inputs first ----
expect_fail "replay: missing file" "cannot read as a capture file" "$BLOOMTAP" replay "$TMP/nope.pcap"
head -c 4000 /dev/urandom > "$TMP/garbage.pcap"
expect_fail "replay: not a capture" "cannot read as a capture file" "$BLOOMTAP" replay --instance "$INST" "$TMP/garbage.pcap"
check "replay: nothing made for a bad file" test ! -e /sys/fs/bpf/bloomtap/$INST
head -c 10000 "$PCAPS/ndpi__gnutella.pcap" > "$TMP/cut.pcap"
expect_fail "replay: truncated capture" "capture breaks off after" "$BLOOMTAP" replay --instance "$INST" "$TMP/cut.pcap"
N=$("$BLOOMTAP" -j stats --instance "$INST" | json_get '["packets"]')
check "replay: packets before the cut were replayed ($N)" test "$N" -gt 0
expect_fail "replay: --flow-table out of range" "out of range" "$BLOOMTAP" replay --flow-table 5 "$PCAPS/dnscap__dns.pcap"

# ---- replay: good captures, JSON shapes ----
check "replay --reset" "$BLOOMTAP" replay --reset --instance "$INST" "$PCAPS/dnscap__dns.pcap"
STATS=$("$BLOOMTAP" -j stats --instance "$INST")
eq "stats -j: packets of dns.pcap" "$(json_get '["packets"]' <<<"$STATS")" 133
KEYS=$(python3 -c 'import json,sys; print(" ".join(k for k in json.load(sys.stdin) if k != "instance"))' <<<"$STATS")
eq "stats -j keys = plain names" "$KEYS" "$("$BLOOMTAP" stats --instance "$INST" | awk 'NR>1{print $1}' | tr '\n' ' ' | sed 's/ $//')"
FLOWS=$("$BLOOMTAP" -j replay --reset --flows --instance "$INST" "$PCAPS/dnscap__dns6.pcap" 2>/dev/null)
eq "replay --flows -j: flows" "$(json_get '.__len__()' <<<"$FLOWS")" 2
eq "replay --flows -j: fields" "$(json_get '[0].keys().__len__()' <<<"$FLOWS")/$(json_get '[0]["proto"]' <<<"$FLOWS")" "7/17"
check "replay of Linux cooked capture" bash -c "'$BLOOMTAP' replay --reset --instance '$INST' '$PCAPS/$(awk -F'\t' '$5 ~ /LINUX_SLL/ {print $1; exit}' "$PCAPS/MANIFEST.tsv")' | grep -q LINUX_SLL"
check "replay of pcapng" "$BLOOMTAP" replay --reset --instance "$INST" "$PCAPS/libpcap__rarp_req_reply.pcapng"

# ---- the demo: runs, reports, and removes all it made ----
OUT=$("$BLOOMTAP" demo --duration 1 2>&1)
check "demo reports what bloomtap saw" grep -q "bloomtap saw on btdemo-b" <<<"$OUT"
check "demo counted UDP, TCP and ICMP" bash -c "grep -qE '^  udp +[1-9]' <<<\"\$0\" && grep -qE '^  tcp +[1-9]' <<<\"\$0\" && grep -qE '^  icmp +[1-9]' <<<\"\$0\"" "$OUT"
check "demo left no namespace" bash -c "! ip netns list | grep -q btdemo"
check "demo left no pins" test ! -e /sys/fs/bpf/bloomtap/btdemo-b
"$BLOOMTAP" demo --duration 10 >/dev/null 2>&1 &
DEMO=$!
sleep 2; kill -INT $DEMO; wait $DEMO; RC=$?
eq "demo stops on Ctrl-C" "$RC" 130
check "Ctrl-C: no namespace left" bash -c "! ip netns list | grep -q btdemo"
check "Ctrl-C: no pins left" test ! -e /sys/fs/bpf/bloomtap/btdemo-b

summary
[ $FAIL -eq 0 ]
