#!/usr/bin/env bash
# The tool's surface: --help everywhere, errors that say what to do and exit
# non-zero, JSON shapes, replay of good and bad captures, the demo.
source "$(dirname "$0")/../lib/lib.sh"
need_root "cli"

ID=$$
INST=cli-$ID
TMP=$(mktemp -d)
NS=bt-cli-$ID
cleanup() {
	"$BLOOMTAP" detach --instance "$INST" >/dev/null 2>&1
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

for c in attach detach status stats heavy trace drops windows archive replay watch demo kernel; do
	check "$c --help" bash -c "'$BLOOMTAP' $c --help | grep -q '^Usage: bloomtap $c'"
done
check "bloomtap --help lists the commands" bash -c "'$BLOOMTAP' --help | grep -q replay"
# kernel: every feature answered on this kernel (root can ask), and every
# program loaded with its verifier's figures, at most half the million
# instructions (the stack's limit, counted per call chain, is checked by
# loading on Linux 6.1: make test's kernels suite)
if [ "$(id -u)" = 0 ]; then
	eq "kernel -j --verifier: features, programs within the verifier's limits" "$("$BLOOMTAP" -j kernel --verifier | python3 -c '
import json, sys
d = json.load(sys.stdin)
bad = [f["name"] for f in d["features"] if f["present"] is None or (f["required"] and not f["present"])]
progs = {p["program"]: p for p in d["programs"]}
for p in progs.values():
    if p["processed"] * 2 > p["limit"]:
        bad.append("%s processed %d" % (p["program"], p["processed"]))
want = {"bloomtap_xdp", "bloomtap_xdp_mb", "bloomtap_drop", "bloomtap_drops"}
print(" ".join(bad) or ("ok" if want <= set(progs) else "programs: %s" % sorted(progs)))')" ok
fi
expect_fail "unknown command" "unknown or ambiguous command" "$BLOOMTAP" frobnicate
expect_fail "ambiguous prefix" "unknown or ambiguous command" "$BLOOMTAP" st
check "unique prefix works (stat -> status)" "$BLOOMTAP" statu
expect_fail "unknown option" "unknown option '--bogus'" "$BLOOMTAP" stats --bogus
expect_fail "a bad number names the option as typed" "heavy: -n needs a whole number, not 'abc'" \
	"$BLOOMTAP" heavy -n abc
for c in heavy drops; do
	expect_fail "$c --interval 0.5: says whole seconds" "$c: --interval needs whole seconds, not '0.5'" \
		"$BLOOMTAP" $c --interval 0.5
done
expect_fail "drops --reasons --host: one answer at a time, not one left out" \
	"drops: --reasons, --host and --pcap are answers of their own" \
	"$BLOOMTAP" drops --reasons --host
expect_fail "status extra: takes no arguments, names it" "status takes no arguments (got 'extra'" \
	"$BLOOMTAP" status extra
expect_fail "errors are JSON with -j" '{"error":' "$BLOOMTAP" -j stats --instance nope-$ID
# an interface that does not exist is a runtime error (1), not a usage
# error (2), for every command that takes one
: > "$TMP/empty.list"
for c in "attach" "detach" "detach --force" "stats" "heavy" "heavy --flip" "heavy --interval 1" \
	"drops" "windows" "windows --rotate" "windows --every 1" "watch show" "watch test 10.0.0.1" \
	"watch set 10.0.0.1 x" "watch clear" "watch load $TMP/empty.list" "run" "run --check"; do
	"$BLOOMTAP" $c btno$ID >/dev/null 2>&1
	eq "$c on an unknown interface: exit 1" "$?" 1
done

# ---- replay: bad inputs first ----
expect_fail "replay: missing file" "cannot read as a capture file" "$BLOOMTAP" replay "$TMP/nope.pcap"
# a missing file: a failure (1), trace's too (its 1 says that some
# packets were not seen or that the trace failed: stderr says which)
"$BLOOMTAP" replay "$TMP/nope.pcap" >/dev/null 2>&1
eq "replay: missing file: exit 1" "$?" 1
"$BLOOMTAP" trace --instance "$INST" "$TMP/nope.pcap" >/dev/null 2>&1
eq "trace: missing file: exit 1" "$?" 1
# an interface and --instance both: the command line's error (2); an
# instance that does not exist: a failure (1)
for cmd in heavy stats windows drops workloads; do
	"$BLOOMTAP" $cmd "$INST" --instance "$INST" >/dev/null 2>&1
	eq "$cmd IFACE --instance NAME: a usage error, exit 2" "$?" 2
	"$BLOOMTAP" $cmd "nosuch-$ID" >/dev/null 2>&1
	eq "$cmd of no instance: exit 1" "$?" 1
done
# trace the same, with a capture to trace; an archive it cannot read is a
# failure too, and a file that is not a capture a bad input (2)
"$BLOOMTAP" trace "$INST" --instance "$INST" "$PCAPS/dnscap__dns.pcap" >/dev/null 2>&1
eq "trace IFACE --instance NAME: a usage error, exit 2" "$?" 2
"$BLOOMTAP" trace --instance "nosuch-$ID" "$PCAPS/dnscap__dns.pcap" >/dev/null 2>&1
eq "trace of no instance: exit 1" "$?" 1
"$BLOOMTAP" trace --archive "$TMP/nosuch" "$PCAPS/dnscap__dns.pcap" >/dev/null 2>&1
eq "trace of an archive it cannot read: exit 1" "$?" 1
head -c 4000 /dev/urandom > "$TMP/garbage.pcap"
"$BLOOMTAP" trace --archive "$TMP" "$TMP/garbage.pcap" >/dev/null 2>&1
eq "trace of a file that is not a capture: a usage error, exit 2" "$?" 2
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
KEYS=$(python3 -c 'import json,sys; print(" ".join(k for k in json.load(sys.stdin) if k not in ("instance", "direction", "workloads")))' <<<"$STATS")
eq "stats -j: direction" "$(json_get '["direction"]' <<<"$STATS")" ingress
eq "stats -j keys = plain names" "$KEYS" "$("$BLOOMTAP" stats --instance "$INST" | awk 'NR>1{print $1}' | tr '\n' ' ' | sed 's/ $//')"
eq "stats -j: workloads, none in a replay" "$(json_get '["workloads"]' <<<"$STATS")" "[]"
FLOWS=$("$BLOOMTAP" -j replay --reset --flows --instance "$INST" "$PCAPS/dnscap__dns6.pcap" 2>/dev/null)
eq "replay --flows -j: flows" "$(json_get '.__len__()' <<<"$FLOWS")" 2
eq "replay --flows -j: fields" "$(json_get '[0].keys().__len__()' <<<"$FLOWS")/$(json_get '[0]["proto"]' <<<"$FLOWS")" "7/17"
check "replay of Linux cooked capture" bash -c "'$BLOOMTAP' replay --reset --instance '$INST' '$PCAPS/$(awk -F'\t' '$5 ~ /LINUX_SLL/ {print $1; exit}' "$PCAPS/MANIFEST.tsv")' | grep -q LINUX_SLL"
check "replay of pcapng" "$BLOOMTAP" replay --reset --instance "$INST" "$PCAPS/libpcap__rarp_req_reply.pcapng"

# ---- heavy: sizing errors, JSON shape, intervals ----
G=$PCAPS/ndpi__gnutella.pcap
expect_fail "sketch width must be a power of two" "not a power of two" "$BLOOMTAP" replay --reset --instance "$INST" --width 1000 "$G"
expect_fail "one CPU's sketch of an interval is one BPF array value: at most 2^25 cells" \
	"too large: one CPU's interval holds at most 33554432 cells" \
	"$BLOOMTAP" replay --reset --instance "$INST" --width 16777216 --depth 4 "$G"
check "a sketch setting refused under --reset leaves the instance it would replace" \
	test -d "/sys/fs/bpf/bloomtap/$INST"
expect_fail "epsilon and delta past the largest sketch: the width they need named" \
	"need 1e+08 cells a counter" "$BLOOMTAP" replay --reset --instance "$INST" --epsilon 1e-5 --delta 1e-3 "$G"
expect_fail "epsilon and width exclude each other" "not both" "$BLOOMTAP" replay --reset --instance "$INST" --epsilon 0.001 --width 1024 "$G"
expect_fail "one threshold only" "one of --fraction" "$BLOOMTAP" replay --reset --instance "$INST" --fraction 0.01 --bytes 5 "$G"
expect_fail "fraction out of range" "out of range" "$BLOOMTAP" replay --reset --instance "$INST" --fraction 2 "$G"
expect_fail "heavy --count needs --interval" "needs --interval" "$BLOOMTAP" heavy --instance "$INST" --count 2
# w = 1 / (E P) = 10^4, to a power of two; 4 x 2^14 cells in 2^13 lines of 10
check "replay with --epsilon/--delta sizing" bash -c "'$BLOOMTAP' -v replay --reset --instance '$INST' --epsilon 0.001 --delta 0.1 '$G' 2>&1 | grep -q 'sketch 4 x 20480 per CPU and interval (8192 lines'"
# an existing instance's maps have its sizes: another size is refused,
# never ignored, and nothing is replayed; the same size given goes on
PK=$(json_get '["packets"]' < <("$BLOOMTAP" -j stats --instance "$INST"))
expect_fail "replay into an existing instance with other sizes: refused, each named" \
	"--depth 3 (kept: 4), --windows 8 (kept: 256)" \
	"$BLOOMTAP" replay --instance "$INST" --depth 3 --windows 8 "$G"
eq "a refused replay counts nothing" "$(json_get '["packets"]' < <("$BLOOMTAP" -j stats --instance "$INST"))" "$PK"
check "replay into it with its own sizes given goes on" \
	"$BLOOMTAP" replay --instance "$INST" --depth 4 --windows 256 "$G"
check "replay for heavy" "$BLOOMTAP" replay --reset --instance "$INST" "$G"
HJ=$("$BLOOMTAP" -j heavy --instance "$INST" -n 3)
eq "heavy -j: 3 flows of the current interval" "$(json_get '.__len__()' <<<"$HJ")" 3
eq "heavy -j: fields" "$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)[0])))' <<<"$HJ")" \
	"bytes direction dport dst dst_class dst_workload error_bytes error_packets error_probability exact_bytes exact_packets interval interval_bytes interval_packets interval_start lost_nominations packets proto sport src src_class src_workload"
eq "heavy -j: the interval's packets and bytes are the counters'" \
	"$(python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["interval_packets"], d["interval_bytes"])' <<<"$HJ")" \
	"$("$BLOOMTAP" -j stats --instance "$INST" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["packets"], d["bytes"])')"
eq "heavy -j: top flow" "$(json_get '[0]["src"]' <<<"$HJ"):$(json_get '[0]["sport"]' <<<"$HJ")/$(json_get '[0]["interval"]' <<<"$HJ")" "69.118.162.229:46906/current"
eq "heavy -j: the bound's chance, 1/e" "$(json_get '[0]["error_probability"]' <<<"$HJ" | cut -c1-6)" 0.3678
check "heavy: the text gives the bound's chance" bash -c "'$BLOOMTAP' heavy --instance '$INST' -n 1 | grep -qF \"packets (a flow's by more: chance at most 0.37)\""
check "heavy -n 2 says how many more" bash -c "'$BLOOMTAP' heavy --instance '$INST' -n 2 | grep -q 'more (-n)'"
check "heavy --by packets" bash -c "'$BLOOMTAP' -j heavy --instance '$INST' --by packets -n 1 | grep -q '\"packets\":1683'"
check "heavy --flip ends the interval" "$BLOOMTAP" heavy --instance "$INST" --flip
HJ=$("$BLOOMTAP" -j heavy --instance "$INST" -n 1000)
eq "after --flip: flows are in the last interval" "$(python3 -c 'import json,sys; print(sorted({f["interval"] for f in json.load(sys.stdin)}))' <<<"$HJ")" "['last']"
check "replay --key src counts by source" "$BLOOMTAP" replay --reset --instance "$INST" --key src "$G"
eq "--key src: top source, other fields zero" "$("$BLOOMTAP" -j heavy --instance "$INST" -n 1 | python3 -c 'import json,sys; f=json.load(sys.stdin)[0]; print(f["src"], f["dst"], f["sport"], f["proto"])')" "69.118.162.229 :: 0 0"
check "replay: 937 flows, all heavy (--packets 1), into 256 flow-memory slots" \
	"$BLOOMTAP" replay --reset --instance "$INST" --flow-memory 256 --packets 1 "$G"
check "a full flow memory: heavy says flows may be missing" bash -c \
	"'$BLOOMTAP' heavy --instance '$INST' | grep -q 'nominations lost to a full flow memory: heavy flows may be missing'"
check "a full flow memory: heavy -j says so on stderr" bash -c \
	"'$BLOOMTAP' -j heavy --instance '$INST' 2>&1 >/dev/null | grep -q 'nominations lost to a full flow memory'"
check "a full flow memory: lost_nominations in heavy -j" bash -c \
	"'$BLOOMTAP' -j heavy --instance '$INST' 2>/dev/null | python3 -c 'import json,sys; sys.exit(not json.load(sys.stdin)[0][\"lost_nominations\"] > 0)'"
check "a full flow memory: stats counts it" bash -c \
	"'$BLOOMTAP' -j stats --instance '$INST' | python3 -c 'import json,sys; sys.exit(not json.load(sys.stdin)[\"flow_memory_full\"] > 0)'"
check "replay --fraction 0.0001: the flow memory grows to 4/f slots (65,536)" bash -c \
	"'$BLOOMTAP' replay --reset --instance '$INST' --fraction 0.0001 '$G' >/dev/null 2>&1 &&
	 bpftool -j map show pinned /sys/fs/bpf/bloomtap/'$INST'/fm | grep -q '\"bytes_value\":4194304'"
check "replay --fraction 0.0001 --flow-memory 1024: warns that flows may be refused" bash -c \
	"'$BLOOMTAP' replay --reset --instance '$INST' --fraction 0.0001 --flow-memory 1024 '$G' 2>&1 |
	 grep -q 'flow-memory 1024 is below 40000 slots'"

# ---- -j: stdout holds exactly one JSON document, whatever went wrong ----
# every command of bloomtap --help with a bad input (one past option
# parsing where there is one), and the inputs found to print two
one_doc() { "$@" 2>/dev/null | python3 -c 'import json,sys; json.load(sys.stdin)'; }
declare -A BAD=(
	[attach]="nosuch-$ID" [detach]="--instance nope-$ID" [status]="extra"
	[stats]="--instance nope-$ID" [heavy]="--instance $INST --count 2"
	[trace]="--instance $INST --hex zz" [drops]="--instance nope-$ID"
	[windows]="--instance $INST --rotate --every 0" [archive]="$TMP/nope-dir"
	[replay]="$TMP/nope.pcap" [run]="--check nosuch-$ID" [watch]="show --instance nope-$ID"
	[demo]="extra" [kernel]="extra" [workloads]="extra"
)
for c in $("$BLOOMTAP" --help | awk '/^Commands:/ {f = 1; next} f && NF {print $1} f && !NF {exit}'); do
	if [ -z "${BAD[$c]:-}" ]; then fail "-j $c: no bad input in this test's table"; continue; fi
	# shellcheck disable=SC2086 # the table's inputs are words
	check "-j $c ${BAD[$c]}: one JSON document on stdout" one_doc "$BLOOMTAP" -j $c ${BAD[$c]}
done
for args in "trace --instance $INST --hex 00" "trace --instance $INST $TMP/cut.pcap" "watch" "" \
	"run --check --listen 127.0.0.1:9 lo" "run --check --interval 0 lo"; do
	# shellcheck disable=SC2086
	check "-j $args: one JSON document on stdout" one_doc "$BLOOMTAP" -j $args
done
expect_fail "-j trace --hex zz: the error is the document" '{"error":"trace: not hex bytes' \
	bash -c "'$BLOOMTAP' -j trace --instance '$INST' --hex zz 2>/dev/null"
eq "-j run --check: the verdict as JSON" "$("$BLOOMTAP" -j run --check --listen 127.0.0.1:9 lo 2>/dev/null |
	json_get '["configuration"], d["interfaces"]')" "('ok', ['lo'])"

# ---- under ip netns exec (a /sys of its own): every command that reads
# pins refuses as attach does, with the way that works; none says that
# there is no instance (the instance above is there, on the host's bpffs)
ip netns add "$NS"
for args in "status" "-j status" "stats --instance $INST" "stats" "heavy --instance $INST" \
	"drops --instance $INST" "windows --instance $INST" "watch show --instance $INST" \
	"trace --instance $INST --hex 00" "detach --instance $INST" "run --check lo" \
	"replay --instance $INST $PCAPS/dnscap__dns.pcap" "attach lo"; do
	# shellcheck disable=SC2086
	expect_fail "ip netns exec: $args refused, says to use nsenter" \
		"nsenter --net=/var/run/netns/NAME bloomtap ... instead" ip netns exec "$NS" "$BLOOMTAP" $args
done
check "ip netns exec: the instance is still there" "$BLOOMTAP" stats --instance "$INST"

# ---- the demo: runs, reports, and removes all it made ----
expect_fail "trace IFACE without a capture: a usage error that names what is missing" \
	"'lo' is an interface: give a capture FILE after it, or --hex BYTES" "$BLOOMTAP" trace lo
"$BLOOMTAP" trace lo >/dev/null 2>&1
eq "trace IFACE without a capture: exit 2" "$?" 2
# the time bounds: inside the clock's range (__u64 ns: 1970 to 2554), the
# range not empty; bad ones are usage errors that say the range
PKT=4500001c0000000040110000c6120001c612000200350035000c0000
expect_fail "trace --since -99999d: before 1970, refused with the clock's range" \
	"--since '-99999d' is outside the clock's range: from 0 (1970-01-01T00:00:00Z) to 18446744073" \
	"$BLOOMTAP" trace --instance "$INST" --since -99999d --hex $PKT
"$BLOOMTAP" trace --instance "$INST" --since -99999d --hex $PKT >/dev/null 2>&1
eq "trace --since -99999d: exit 2" "$?" 2
expect_fail "trace --until 1e30: past 2554, refused" "--until '1e30' is outside the clock's range" \
	"$BLOOMTAP" trace --instance "$INST" --until 1e30 --hex $PKT
expect_fail "trace --since 2600-01-01T00:00:00Z: refused" "outside the clock's range" \
	"$BLOOMTAP" trace --instance "$INST" --since 2600-01-01T00:00:00Z --hex $PKT
expect_fail "trace --since -1s --until -2s: an empty range, refused" \
	"--since '-1s' is after --until '-2s': the range is empty" \
	"$BLOOMTAP" trace --instance "$INST" --since -1s --until -2s --hex $PKT
"$BLOOMTAP" trace --instance "$INST" --since -1h --until -0s --hex $PKT >/dev/null 2>&1
check "trace --since -1h --until -0s: answered (exit $?, not 2)" test $? -lt 2
# a capture that breaks off (a file, pcapng, a pipe, with --mss): the
# packets before the break answered, then the error on stderr, exit 2;
# with -j stdout stays one document, the array of those answered
head -c 3000 "$PCAPS/zeek__dce-rpc__kerberos445_auth.pcapng" > "$TMP/cut.pcapng"
# shellcheck disable=SC2086 # args are words
for args in "$TMP/cut.pcap" "$TMP/cut.pcapng" "--mss 1400 -"; do
	OUT=$("$BLOOMTAP" trace --instance "$INST" $args <"$TMP/cut.pcap" 2>"$TMP/cut.err")
	eq "trace $args, cut short: exit 2" "$?" 2
	check "trace $args, cut short: the packets before the break answered" \
		grep -q '^packet 1: ' <<<"$OUT"
	check "trace $args, cut short: then the error" grep -q 'capture breaks off after' "$TMP/cut.err"
	N=$("$BLOOMTAP" -j trace --instance "$INST" $args <"$TMP/cut.pcap" 2>/dev/null |
	    python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d) * isinstance(d, list))')
	check "trace -j $args, cut short: one array of the packets answered ($N)" test "${N:-0}" -gt 0
done
OUT=$("$BLOOMTAP" demo --duration 1 2>&1)
DB=$(sed -n 's/^demo: namespaces .* -> \(btdb-[0-9]*\) .*/\1/p' <<<"$OUT")
check "demo names its lab after its PID ($DB)" test -n "$DB"
check "demo reports what bloomtap saw" grep -q "bloomtap saw on $DB" <<<"$OUT"
# its last words: the nft-dropped packets in a pcapng of a directory of
# its own (mkdtemp, not a name from its PID), and tshark's one-line
# summary of the last of them, as tshark prints it
PCAPNG=$(sed -n 's/^tshark -r \(.*\) (the last):$/\1/p' <<<"$OUT")
check "demo: the recorded drops in a private directory ($PCAPNG)" \
	bash -c '[[ "$0" =~ ^/tmp/bloomtap-demo-[A-Za-z0-9]{6}/drops\.pcapng$ ]] && [ -s "$0" ]' "$PCAPNG"
eq "demo: tshark's one-line summary of a dropped packet" \
	"$(grep -A1 '(the last):$' <<<"$OUT" | tail -1)" "$(tshark -r "$PCAPNG" 2>/dev/null | tail -1)"
[ -n "$PCAPNG" ] && rm -rf "$(dirname "$PCAPNG")"
check "demo: bloomtap heavy found exactly the heavy flows" grep -q "bloomtap found exactly those" <<<"$OUT"
check "demo: the packet it sent is seen, with its window" bash -c "grep -A1 'a packet the demo sent' <<<\"\$0\" | grep -q 'seen in 1 window'" "$OUT"
check "demo: the packet nobody sent is not seen" bash -c "grep -A1 'a packet nobody sent' <<<\"\$0\" | grep -q 'not seen'" "$OUT"
check "demo: the kernel's drops of the flow nft drops, by reason" \
	grep -qE '^  NETFILTER_DROP +25 ' <<<"$OUT"
check "demo: a packet of that flow was seen here, then dropped here, NETFILTER_DROP" \
	bash -c "grep -A3 'a packet of that flow' <<<\"\$0\" | grep -q 'dropped here: .*(reason NETFILTER_DROP)'" "$OUT"
check "demo counted UDP, TCP and ICMP" bash -c "grep -qE '^  udp +[1-9]' <<<\"\$0\" && grep -qE '^  tcp +[1-9]' <<<\"\$0\" && grep -qE '^  icmp +[1-9]' <<<\"\$0\"" "$OUT"
check "demo left no namespace" bash -c "! ip netns list | grep -qwE 'btdemo-[ab]-${DB#btdb-}'"
check "demo left no pins" test ! -e "/sys/fs/bpf/bloomtap/$DB"
# the heavy flows checked from outside, against what the demo sends (its
# --help and user/cmd/demo.c: 3 UDP flows from ports 10000-10002 to 5000 and one
# TCP transfer to 8080, all 198.18.0.1 -> .2; 200 light UDP flows and pings)
"$BLOOMTAP" -j demo --duration 1 > "$TMP/demo.json" 2>/dev/null
eq "demo -j: its heavy flows are the 3 UDP senders and the TCP transfer, nothing else" "$(python3 -c '
import json, sys
docs, dec, text = [], json.JSONDecoder(), open(sys.argv[1]).read()
i = 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    d, i = dec.raw_decode(text, i)
    docs.append(d)
stats, heavy = docs[0], docs[1]
flows = sorted((f["proto"], f["sport"] if f["proto"] == 17 else 0, f["dport"], f["src"], f["dst"])
               for f in heavy)
udp_heavy = sum(f["packets"] for f in heavy if f["proto"] == 17)
print(flows, 0 < udp_heavy <= stats["udp"])' "$TMP/demo.json")" \
	"[(6, 0, 8080, '198.18.0.1', '198.18.0.2'), (17, 10000, 5000, '198.18.0.1', '198.18.0.2'), (17, 10001, 5000, '198.18.0.1', '198.18.0.2'), (17, 10002, 5000, '198.18.0.1', '198.18.0.2')] True"
# Ctrl-C once the demo is sending (its lab is up), not after a guessed time
"$BLOOMTAP" demo --duration 10 > "$TMP/demo.out" 2>&1 &
DEMO=$!
wait_for "the demo sends" 30 grep -q "^demo: sending" "$TMP/demo.out"
DB=$(sed -n 's/^demo: namespaces .* -> \(btdb-[0-9]*\) .*/\1/p' "$TMP/demo.out")
kill -INT $DEMO; wait $DEMO; RC=$?
eq "demo stops on Ctrl-C" "$RC" 130
check "Ctrl-C: no namespace left" bash -c "! ip netns list | grep -qwE 'btdemo-[ab]-${DB#btdb-}'"
check "Ctrl-C: no pins left ($DB)" test ! -e "/sys/fs/bpf/bloomtap/${DB:-btdb-none}"
# a demo killed outright leaves its lab; the next demo removes it (a file
# of its own: the background job may truncate a reused one after the poll
# has read the last demo's lines)
"$BLOOMTAP" demo --duration 10 > "$TMP/demo-killed.out" 2>&1 &
DEMO=$!
wait_for "the demo sends" 30 grep -q "^demo: sending" "$TMP/demo-killed.out"
DB=$(sed -n 's/^demo: namespaces .* -> \(btdb-[0-9]*\) .*/\1/p' "$TMP/demo-killed.out")
kill -9 $DEMO; wait $DEMO 2>/dev/null
check "SIGKILL: its lab is left ($DB)" test -e "/sys/fs/bpf/bloomtap/${DB:-btdb-none}"
"$BLOOMTAP" demo --duration 1 >/dev/null 2>&1
check "the next demo removed the killed one's lab (pins)" test ! -e "/sys/fs/bpf/bloomtap/${DB:-btdb-none}"
check "the next demo removed the killed one's lab (namespaces)" bash -c "! ip netns list | grep -qwE 'btdemo-[ab]-${DB#btdb-}'"
# one killed while it made its lab: only namespace A of a PID gone
true & DEAD=$!; wait $DEAD
ip netns add "btdemo-a-$DEAD"
"$BLOOMTAP" demo --duration 1 >/dev/null 2>&1
check "the next demo removed a half-made lab too" bash -c "! ip netns list | grep -qw 'btdemo-a-$DEAD'"
ip netns del "btdemo-a-$DEAD" 2>/dev/null

# One logger, whose lines carry their level: "<3>" when stderr is the
# journal (JOURNAL_STREAM names stderr's device:inode, as systemd sets it),
# "bloomtap: error:" elsewhere, even with the variable inherited
: > "$TMP/journal"
JS=$(stat -c '%d:%i' "$TMP/journal")
JOURNAL_STREAM=$JS "$BLOOMTAP" detach --instance bt-no-such-$$ 2>"$TMP/journal"
check "stderr the journal: an error line starts <3>" grep -q '^<3>no bloomtap instance' "$TMP/journal"
JOURNAL_STREAM=$JS "$BLOOMTAP" detach --instance bt-no-such-$$ 2>"$TMP/other"
check "stderr a file other than the variable's: the plain prefix" \
	grep -q '^bloomtap: error: no bloomtap instance' "$TMP/other"

summary
[ $FAIL -eq 0 ]
