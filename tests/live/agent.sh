#!/usr/bin/env bash
# The agent (bloomtap run) on a veth in a namespace: bad values refused
# before anything is attached; /metrics valid for promtool and scraped by a
# real Prometheus whose query API then returns bloomtap's series; the JSON
# API and its refusals; restart without loss; SIGHUP; --detach-on-exit.
source "$(dirname "$0")/../lib/lib.sh"
need_root "agent"

ID=$$
NSA=bt-ag-a-$ID NSB=bt-ag-b-$ID
VA=btaa$ID VB=btab$ID
PORT=9477
TMP=$(mktemp -d)
AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "$PROM" ] && kill "$PROM" 2>/dev/null && wait "$PROM" 2>/dev/null
	"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

veth_pair "$NSA" "$VA" "$NSB" "$VB" 8 || { fail "namespaces"; summary; exit 1; }
inb() { in_ns "$NSB" "$@"; }
get() { inb curl -s -m 5 "$@"; }

# ---- bad values: clear errors, nothing attached ----
expect_fail "no interface" "name at least one interface" inb "$BLOOMTAP" run
expect_fail "unknown interface" "no such interface" inb "$BLOOMTAP" run nosuch0
# the agent's own interface, asked for from the wrong namespace: the hint
expect_fail "run IFACE from another namespace: the nsenter hint, as attach gives it" \
	"in another network namespace, run bloomtap there with nsenter --net=/var/run/netns/NAME" \
	"$BLOOMTAP" run "$VB"
expect_fail "bad --listen" "give ADDR:PORT" inb "$BLOOMTAP" run --listen nowhere "$VB"
expect_fail "bad --interval" "out of range" inb "$BLOOMTAP" run --interval 0 "$VB"
printf 'interval = 1\nbogus = 3\n' > "$TMP/bad.conf"
expect_fail "unknown key in the config file: named with its FILE:LINE, and run's help pointed to" \
	"bad.conf:2: unknown option '--bogus' (see bloomtap run --help)" inb "$BLOOMTAP" run --config "$TMP/bad.conf" "$VB"
printf 'interval\nwindow = 1\n' > "$TMP/bad3.conf"
expect_fail "an option without its value: its own line, not the next line's name" \
	"bad3.conf:1: --interval needs a value" inb "$BLOOMTAP" run --config "$TMP/bad3.conf" "$VB"
printf 'window-bits = 5000\n' > "$TMP/bad2.conf"
expect_fail "bad value in the config file" "not a power of two" inb "$BLOOMTAP" run --config "$TMP/bad2.conf" "$VB"
check "nothing attached after the refusals" test ! -e "/sys/fs/bpf/bloomtap/$VB"
# the archive has a budget unless told otherwise, and --check says which
check "run --check: the archive's default budget (1 GiB)" bash -c \
	"nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' run --check '$VB' | grep -q 'archive /var/lib/bloomtap/archive (at most 1024.0 MiB)'"
check "run --check: --archive-max-bytes 0, no budget" bash -c \
	"nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' run --check --archive-max-bytes 0 '$VB' | grep -q '(no budget)'"

# ---- running ----
echo "# no users, no TLS: served as without one" > "$TMP/web.yml"
cat > "$TMP/agent.conf" <<CONF
# bloomtap run configuration
interface = $VB
interval = 2
window = 0.5
windows = 8
archive = $TMP/archive
archive-flush = 1
listen = 127.0.0.1:$PORT
web-config = $TMP/web.yml
CONF
# nsenter execs bloomtap: $! is the agent itself, which signals must reach
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" > "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
eq "/healthz" "$(get 127.0.0.1:$PORT/healthz)" "ok"
in_ns "$NSA" ping -q -c 5 -i 0.05 198.18.8.2 >/dev/null
get "127.0.0.1:$PORT/metrics" > "$TMP/metrics.txt"
check "promtool check metrics" bash -c "promtool check metrics < '$TMP/metrics.txt'"
check "per-interface counters" grep -q "^bloomtap_packets_total{interface=\"$VB\",direction=\"ingress\"} [1-9]" "$TMP/metrics.txt"
check "one HELP and TYPE per family" bash -c "[ \$(grep -c '^# TYPE bloomtap_l4_packets_total' '$TMP/metrics.txt') = 1 ]"
check "archive gauge" grep -q "^bloomtap_archive_bytes [0-9]" "$TMP/metrics.txt"
# every family the agent exports is in the manual's metrics table
# (docs/operating.md), and every family it names is exported (IPFIX's and
# the classes' come with collectors and lists: the manual names them,
# agent.sh's agent has neither, and ipfix.sh and watch.sh scrape them)
eq "the manual's metrics and the agent's, the same families" "$(python3 - "$TMP/metrics.txt" "$TOP/docs/operating.md" <<'PY'
import re, sys
exported = set(re.findall(r"^# TYPE (bloomtap_\w+)", open(sys.argv[1]).read(), re.M))
readme = open(sys.argv[2]).read()
table = readme[readme.index("| metric |"):]
table = table[:table.index("\n\n")]
named = set(re.findall(r"`(bloomtap_\w+)", table))
elsewhere = {m for m in named if m.startswith(("bloomtap_ipfix_", "bloomtap_class_"))}
print(sorted(exported - named), sorted(named - exported - elsewhere))
PY
)" "[] []"
# the gauges show the last complete interval (2 s): the pings above may
# have left it by now (promtool and the checks above take seconds beside
# two CPU hogs), so each try pings again, and an interval with pings comes
# whatever the machine's speed; windows are archived meanwhile (flush 1 s)
gauges_show_pings() {
	in_ns "$NSA" ping -q -c 2 -i 0.05 198.18.8.2 >/dev/null
	get "127.0.0.1:$PORT/metrics" | grep -q "bloomtap_heavy_flow_bytes{interface=\"$VB\",direction=\"ingress\",rank=\"1\""
}
wait_for "heavy flows of the last interval as gauges (the pings)" 30 gauges_show_pings &&
	ok "heavy flows of the last interval as gauges (the pings)"
wait_for "windows sealed into the archive" 30 bash -c "ls '$TMP/archive'/*.btw" &&
	ok "windows sealed into the archive"
# flows to list: the pings above may have left both intervals by now (2 s
# each: a run beside two CPU hogs met an empty answer), so ping again and
# ask until the flow is there
in_ns "$NSA" ping -q -c 3 -i 0.05 198.18.8.2 >/dev/null
heavy_listed() {
	H=$(get "127.0.0.1:$PORT/api/v1/heavy") &&
		python3 -c 'import json, sys; sys.exit(not json.load(sys.stdin))' <<<"$H"
}
wait_for "/api/v1/heavy lists the pings" 30 heavy_listed
eq "/api/v1/heavy: heavy -j's fields" "$(python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)[0]))' <<<"$H")" \
	"['bytes', 'direction', 'dport', 'dst', 'dst_class', 'dst_workload', 'error_bytes', 'error_packets', 'error_probability', 'exact_bytes', 'exact_packets', 'interval', 'interval_bytes', 'interval_packets', 'interval_start', 'lost_nominations', 'packets', 'proto', 'sport', 'src', 'src_class', 'src_workload']"
# a packet that passed, captured at B, traced through the API
in_ns "$NSB" timeout 30 python3 "$TOP/tests/lib/capture.py" "$VB" "$TMP/got.pcap" 3 icmp-echo > "$TMP/cap.out" &
TS=$!; capture_ready "$TMP/cap.out"
in_ns "$NSA" ping -q -c 3 -i 0.05 198.18.8.2 >/dev/null
wait $TS
T=$(inb curl -s -m 5 -X POST --data-binary "@$TMP/got.pcap" "127.0.0.1:$PORT/api/v1/trace")
eq "/api/v1/trace (pcap): every packet seen" "$(python3 -c 'import json,sys; print({p["seen"] for p in json.load(sys.stdin)})' <<<"$T")" "{True}"
# the windows that held those pings leave the ring of 8 windows of 0.5 s
# within seconds: 'trace IFACE FILE' without --archive then finds them in
# the archive the agent recorded in the instance
from_archive() {
	TA=$(inb "$BLOOMTAP" -j trace "$VB" "$TMP/got.pcap") || return 1
	python3 -c 'import json,sys; d = json.load(sys.stdin)
sys.exit(not all(p["seen"] and all(w["source"] == "archive" for w in p["windows"]) for p in d))' <<<"$TA"
}
wait_for "trace IFACE FILE without --archive: seen, in the agent's archive" 60 from_archive &&
	ok "trace IFACE FILE without --archive: seen, in the agent's archive, once the ring left them"
eq "its JSON names the archive searched" \
	"$(python3 -c 'import json,sys; print({p["archive"] for p in json.load(sys.stdin)})' <<<"$TA")" \
	"{'$(realpath "$TMP/archive")'}"
check "its summary says so" bash -c "nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' trace '$VB' '$TMP/got.pcap' |
	grep -q 'the live ring and the archive $(realpath "$TMP/archive")'"
check "trace --agents with one agent needs no --topology" \
	inb "$BLOOMTAP" trace --agents "b=127.0.0.1:$PORT" "$TMP/got.pcap"
OUT=$(inb "$BLOOMTAP" trace --agents "b=127.0.0.1:$PORT,c=127.0.0.1:1" "$TMP/got.pcap" 2>&1)
check "with two and none, the order is inferred and said so" \
	grep -q "^order inferred (no --topology)" <<<"$OUT"
check "... and the one that did not answer named" \
	grep -q "^partial answer: 1 of 2 agents did not answer: c$" <<<"$OUT"
HEX=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); n=int.from_bytes(d[32:36],"little"); print(d[40:40+n].hex())' "$TMP/got.pcap")
T=$(inb curl -s -m 5 -X POST --data "${HEX:0:36}ffff${HEX:40}" "127.0.0.1:$PORT/api/v1/trace")
eq "/api/v1/trace (hex): a packet never sent is not seen" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["seen"])' <<<"$T")" "False"

# refusals: 4xx with a JSON error
code() { inb curl -s -o "$TMP/body" -w '%{http_code}' -m 5 "$@"; }
eq "unknown path: 404" "$(code 127.0.0.1:$PORT/nope)" 404
eq "wrong method: 405" "$(code -X DELETE 127.0.0.1:$PORT/metrics)" 405
eq "malformed hex: 400" "$(code -X POST --data 'xyz' 127.0.0.1:$PORT/api/v1/trace)" 400
# hex that holds no IP packet: 400 with the message the CLI gives (exit 2)
eq "hex of no IP packet: 400, as trace --hex exits 2" "$(code -X POST --data 'deadbeef' 127.0.0.1:$PORT/api/v1/trace)/$(
	inb "$BLOOMTAP" trace "$VB" --hex deadbeef >/dev/null 2>&1; echo $?)" "400/2"
check "and the same message" bash -c "grep -q 'no IP packet that bloomtap records in the input' '$TMP/body' &&
	nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' trace '$VB' --hex deadbeef 2>&1 | grep -q 'no IP packet that bloomtap records in the input'"
# a time outside the clock's range (before 1970), and an empty range: 400,
# with the message trace gives
eq "?since=-99999d: 400" "$(code -X POST --data "$HEX" "127.0.0.1:$PORT/api/v1/trace?since=-99999d")" 400
check "and it says the clock's range" grep -q "since '-99999d' is outside the clock's range: from 0" "$TMP/body"
eq "?since=-1s&until=-2s: 400" "$(code -X POST --data "$HEX" "127.0.0.1:$PORT/api/v1/trace?since=-1s&until=-2s")" 400
check "and it says the range is empty" grep -q "since '-1s' is after until '-2s': the range is empty" "$TMP/body"
# until alone: the hour before it, as since alone is the hour before now
eq "?until=-2h alone: the hour before it, searched" \
	"$(code -X POST --data "$HEX" "127.0.0.1:$PORT/api/v1/trace?until=-2h")" 200
# a capture body that breaks off: 400, where, and no answers (a body is
# answered whole or not at all)
head -c -10 "$TMP/got.pcap" > "$TMP/cut.pcap"
eq "a capture body cut short: 400" \
	"$(code -X POST --data-binary "@$TMP/cut.pcap" 127.0.0.1:$PORT/api/v1/trace)" 400
check "and it says where it breaks off" grep -q "request body: capture breaks off after" "$TMP/body"
head -c 1100000 /dev/zero > "$TMP/big"
eq "oversized body: 413" "$(code -X POST --data-binary @$TMP/big 127.0.0.1:$PORT/api/v1/trace)" 413
check "errors are JSON" grep -q '"error"' "$TMP/body"
eq "unknown interface: 404" "$(code '127.0.0.1:'$PORT'/api/v1/heavy?iface=nope')" 404
eq "heavy ?n=5x: 400" "$(code '127.0.0.1:'$PORT'/api/v1/heavy?n=5x')" 400
# a parameter a route does not take: 400, named (it answered 200, and
# ?direction=egress gave the received flows)
eq "heavy ?bogus=1: 400" "$(code '127.0.0.1:'$PORT'/api/v1/heavy?bogus=1')" 400
check "the parameter named, and what the route takes" \
	grep -q "unknown parameter 'bogus' (/api/v1/heavy takes iface, n, direction)" "$TMP/body"
eq "drops ?n=5: 400 (drops takes iface alone)" "$(code '127.0.0.1:'$PORT'/api/v1/drops?n=5')" 400
eq "trace ?bogus=1: 400 before the body" "$(code -X POST --data 00 '127.0.0.1:'$PORT'/api/v1/trace?bogus=1')" 400
eq "metrics ?x=1: 400" "$(code '127.0.0.1:'$PORT'/metrics?x=1')" 400
# the deadline a fleet's client sends; who answers
eq "trace ?deadline_ms=5000: taken" "$(code -X POST --data 4500001c00010000401100000a0000010a000002d431003500080000 \
	'127.0.0.1:'$PORT'/api/v1/trace?deadline_ms=5000')" 200
eq "trace ?deadline_ms=0: 400" "$(code -X POST --data 00 '127.0.0.1:'$PORT'/api/v1/trace?deadline_ms=0')" 400
eq "status: the host and the instance" "$(code '127.0.0.1:'$PORT'/api/v1/status')" 200
eq "... named" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["host"] == sys.argv[2], len(d["instances"]) >= 1)' "$TMP/body" "$(hostname)")" "True True"
eq "heavy ?direction=egress on an interface attached for ingress: 400" \
	"$(code '127.0.0.1:'$PORT'/api/v1/heavy?direction=egress')" 400
check "and it says so" grep -q "does not record what it sends" "$TMP/body"
eq "heavy ?direction=sideways: 400" "$(code '127.0.0.1:'$PORT'/api/v1/heavy?direction=sideways')" 400
eq "heavy ?direction=ingress: 200" "$(code '127.0.0.1:'$PORT'/api/v1/heavy?direction=ingress')" 200
# five UDP flows (pings of any size are one flow: ICMP is keyed by type
# and code), so that ?n has more to cut than it keeps: shown by ?n=100.
# Sent again before each look: the heavy flows are the last and the
# current interval's, and a slow machine may pass two flips between looks
five_flows() { in_ns "$NSA" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(100):
    s.sendto(b"n" * 200, ("198.18.8.2", 9001 + i % 5))'; }
most() { get '127.0.0.1:'$PORT'/api/v1/heavy?n='$1 | python3 -c '
import collections, json, sys
c = collections.Counter(f["interval"] for f in json.load(sys.stdin))
print(max(c.values()) if c else 0)'; }
cut_to_2() { five_flows; local few=$(most 2) many=$(most 100); echo "$few $many" > "$TMP/most";
	[ "$many" -gt 2 ] && [ "$few" -eq 2 ]; }
wait_for "heavy ?n=2: at most 2 flows an interval, where ?n=100 gives more" 30 cut_to_2 &&
	ok "heavy ?n=2 and ?n=100, one after the other: $(cat "$TMP/most")"
# 100 requests a second, 100 at once: a client that asks faster meets 429.
# curl asks thousands a second here; batches until the first 429 (at most
# 10 of 300) keep a slow machine from passing or failing by its speed
URLS=(); for i in $(seq 300); do URLS+=("127.0.0.1:$PORT/healthz"); done
CODES=
for b in $(seq 10); do
	CODES=$(inb curl -s -w "\n%{http_code}\n" "${URLS[@]}" | grep -E "^[0-9]{3}$" | sort | uniq -c)
	grep -q " 429" <<<"$CODES" && break
done
check "a flood of requests meets 429 (rate bounded): $(echo $CODES)" grep -q " 429" <<<"$CODES"
# the flood emptied the client's bucket (a token every 20 ms): asked until
# the answer is not 429, the answer is the route's (a CI run under ASan
# asked within 20 ms of the flood's last refusal)
CODE=429 END=$((SECONDS + 30))
while [ "$CODE" = 429 ] && [ $SECONDS -lt $END ]; do
	CODE=$(inb curl -s -o /dev/null -w '%{http_code}' -X POST 127.0.0.1:$PORT/metrics)
done
eq "the API changes nothing: POST /metrics refused" "$CODE" 405
wait_for "the bucket refills" 30 bash -c "[ \$(nsenter --net=/var/run/netns/$NSB curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/healthz) = 200 ]"

# ---- detach while the agent keeps the instance: refused ----
expect_fail "detach while the agent keeps the instance: refused, says what to do" \
	"keeps instance '$VB': stop it first" inb "$BLOOMTAP" detach "$VB"
check "and the instance is still attached" bash -c "ip -n $NSB link show $VB | grep -q 'name bloomtap_xdp' && test -e /sys/fs/bpf/bloomtap/$VB"

# ---- a real Prometheus scrapes it ----
prometheus_start "$NSB" "127.0.0.1:$PORT" 127.0.0.1:9090 "$TMP/prom"
Q=
for i in $(seq 60); do
	Q=$(get '127.0.0.1:9090/api/v1/query?query=bloomtap_packets_total' 2>/dev/null)
	grep -q "\"interface\":\"$VB\"" <<<"$Q" && break
	sleep 0.5
done
check "Prometheus's query API returns bloomtap's series" grep -q "\"interface\":\"$VB\"" <<<"$Q"
kill $PROM; wait $PROM 2>/dev/null; PROM=

# ---- SIGHUP re-reads the file ----
ival() { get 127.0.0.1:$PORT/metrics | awk '$1 == "bloomtap_config_interval_seconds" {print $2}'; }
eq "the file's interval" "$(ival)" 2
sed -i 's/^interval = 2/interval = 3/' "$TMP/agent.conf"
sighup_then $AGENT "$TMP/agent.log"
check "SIGHUP: configuration re-read" grep -q "re-read .*interval 3 s" "$TMP/agent.log"
eq "SIGHUP: the new interval in force" "$(ival)" 3
# a bad file changes nothing, not even the lines before the bad one
cp "$TMP/agent.conf" "$TMP/good.conf"
printf 'interval = 4\nbogus = 3\n' >> "$TMP/agent.conf"
sighup_then $AGENT "$TMP/agent.log"
check "SIGHUP, a bad file: not applied, said so" grep -q "not applied, the previous settings stay" "$TMP/agent.log"
check "SIGHUP, a bad file: its FILE:LINE" grep -q "agent.conf:$(wc -l < "$TMP/agent.conf"): unknown option '--bogus'" "$TMP/agent.log"
check "SIGHUP, a bad file: which part was refused, and what stays in force" \
	grep -q "the file was refused (said above); in force: interval 3 s, window " "$TMP/agent.log"
eq "SIGHUP, a bad file: the interval before it stays" "$(ival)" 3
cp "$TMP/good.conf" "$TMP/agent.conf"
# no window in the file: the log names the one in force, the instance's
# (made with 0.5 s); a web config that no longer loads (a password in
# clear): refused with its reason, once, and the rest of the file applies
sed -i -e '/^window = /d' -e 's/^interval = 3/interval = 4/' "$TMP/agent.conf"
printf 'basic_auth_users:\n  prom: plaintext\n' > "$TMP/web.yml"
sighup_then $AGENT "$TMP/agent.log"
check "SIGHUP, no window set: the log names the window in force" \
	grep -q "re-read .*(interval 4 s, window 0.5 s)" "$TMP/agent.log"
eq "SIGHUP, a bad web config: the file's new interval applies" "$(ival)" 4
eq "SIGHUP, a bad web config: its reason logged once" \
	"$(grep -c "prom: not a bcrypt hash" "$TMP/agent.log")" 1
echo "# no users, no TLS: served as without one" > "$TMP/web.yml"
cp "$TMP/good.conf" "$TMP/agent.conf"
sighup_then $AGENT "$TMP/agent.log"
# IPFIX collectors named in the file: set up at SIGHUP; a bad one keeps them
echo "ipfix = 127.0.0.1:4830" >> "$TMP/agent.conf"
sighup_then $AGENT "$TMP/agent.log"
check "SIGHUP: a collector added" bash -c "curl_out=\$(nsenter --net=/var/run/netns/$NSB curl -s 127.0.0.1:$PORT/metrics); grep -q '^bloomtap_ipfix_messages_total{collector=\"udp:127.0.0.1:4830\"}' <<<\"\$curl_out\""
# a collector that stays in the list is kept as it is, its session and
# counters with it (it was closed and opened again: 24 messages, then 4)
sent() {	# COLLECTOR: its messages sent and not sent, together
	get 127.0.0.1:$PORT/metrics | awk -v c="collector=\"$1\"}" '
		/^bloomtap_ipfix_(messages|errors)_total\{/ && index($1, c) { s += $2 } END { print s + 0 }'
}
some_sent() { [ "$(sent udp:127.0.0.1:4830)" -gt 0 ]; }
wait_for "the collector's first interval ends" 30 some_sent
BEFORE=$(sent udp:127.0.0.1:4830)
sed -i 's/^ipfix = .*/ipfix = 127.0.0.1:4830,127.0.0.1:4831/' "$TMP/agent.conf"
sighup_then $AGENT "$TMP/agent.log"
AFTER=$(sent udp:127.0.0.1:4830)
check "SIGHUP, a collector added beside it: the one that stays keeps its counts ($BEFORE, then $AFTER)" \
	test "$AFTER" -ge "$BEFORE" -a "$BEFORE" -gt 0
check "and the new one is there" bash -c "curl_out=\$(nsenter --net=/var/run/netns/$NSB curl -s 127.0.0.1:$PORT/metrics); grep -q 'collector=\"udp:127.0.0.1:4831\"' <<<\"\$curl_out\""
sed -i 's/^ipfix = .*/ipfix = 127.0.0.1:99999/' "$TMP/agent.conf"
sighup_then $AGENT "$TMP/agent.log"
check "SIGHUP, a bad collector: said so" grep -q "the port is 1..65535" "$TMP/agent.log"
check "SIGHUP, a bad collector: the one before stays" bash -c "curl_out=\$(nsenter --net=/var/run/netns/$NSB curl -s 127.0.0.1:$PORT/metrics); grep -q 'collector=\"udp:127.0.0.1:4830\"' <<<\"\$curl_out\""
cp "$TMP/good.conf" "$TMP/agent.conf"

# ---- 1,000 SIGHUPs: memory stays flat (each reload kept its copy of the
# file's settings until exit) ----
hups() {	# N: SIGHUPs, each waited for (the agent folds SIGHUPs that come together)
	local n=$(grep -c 're-read' "$TMP/agent.log") end=$((SECONDS + 300)) want
	for i in $(seq "$1"); do
		want=$((n + i))
		kill -HUP "$AGENT"
		until [ "$(grep -c 're-read' "$TMP/agent.log")" -ge $want ]; do
			[ $SECONDS -ge $end ] && return 1
			sleep 0.005
		done
	done
}
anon_kb() { awk '/^RssAnon:/ {print $2}' /proc/$AGENT/status; }
# a file of 1,000 settings (a repeated option: the last wins), so that a
# reload that kept its copy would show: about 60 KB each
cp "$TMP/agent.conf" "$TMP/small.conf"
for i in $(seq 1000); do echo "top = 10"; done >> "$TMP/agent.conf"
check "100 SIGHUPs to warm up" hups 100
M0=$(anon_kb)
check "900 more" hups 900
M1=$(anon_kb)
echo "        anonymous memory after 100 SIGHUPs: $M0 kB, after 1,000: $M1 kB"
# (under ASan freed memory waits in its quarantine: the plain build's run
# is the measure)
if [ -z "$ASAN_OPTIONS" ]; then
	check "memory flat over 1,000 SIGHUPs: $((M1 - M0)) kB more after the last 900 (at most 256)" \
		test $((M1 - M0)) -le 256
fi
cp "$TMP/small.conf" "$TMP/agent.conf"

# ---- restart without loss ----
# intervals of 60 s from the flip still due (at most 3 s away), then heavy
# flows that no flip can move before the check
sed -i 's/^interval = 3/interval = 60/' "$TMP/agent.conf"
HUPPED=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
sighup_then $AGENT "$TMP/agent.log"
# the flip still due: a packet then lands in an interval that began after
# the SIGHUP (ISO times in UTC compare as strings)
flipped() {
	in_ns "$NSA" ping -q -c 1 198.18.8.2 >/dev/null
	get "127.0.0.1:$PORT/api/v1/heavy" | python3 -c '
import json, sys
sys.exit(not any(f["interval"] == "current" and (f["interval_start"] or "") > sys.argv[1]
                 for f in json.load(sys.stdin)))' "$HUPPED"
}
wait_for "the flip due before the 60 s interval" 30 flipped
in_ns "$NSA" ping -q -c 20 -i 0.02 198.18.8.2 >/dev/null
BEFORE=$(get 127.0.0.1:$PORT/metrics | awk -v i="$VB" '$1 == "bloomtap_packets_total{interface=\""i"\",direction=\"ingress\"}" {print $2}')
HBEFORE=$(get "127.0.0.1:$PORT/api/v1/heavy")
kill -TERM $AGENT; wait $AGENT; AGENT=
check "SIGTERM: still attached" bash -c "ip -n $NSB link show $VB | grep -q 'prog/xdp'"
in_ns "$NSA" ping -q -c 4 -i 0.05 198.18.8.2 >/dev/null	# counted while no agent runs
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" >> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
check "restart adopts the instance" grep -q "adopted the attached instance" "$TMP/agent.log"
AFTER=$(get 127.0.0.1:$PORT/metrics | awk -v i="$VB" '$1 == "bloomtap_packets_total{interface=\""i"\",direction=\"ingress\"}" {print $2}')
check "no counter lost across the restart ($BEFORE -> $AFTER, 4 pings between)" test "$AFTER" -ge $((BEFORE + 4))
# the current interval's heavy flows are all still there, none smaller
HAFTER=$(get "127.0.0.1:$PORT/api/v1/heavy")
eq "no heavy flow lost across the restart" "$(python3 -c '
import json, sys
key = lambda f: (f["src"], f["dst"], f["sport"], f["dport"], f["proto"])
before = [f for f in json.loads(sys.argv[1]) if f["interval"] == "current"]
after = {}
for f in json.loads(sys.argv[2]):
	after[key(f)] = max(after.get(key(f), 0), f["bytes"])
print(len(before) > 0 and all(after.get(key(f), -1) >= f["bytes"] for f in before))' "$HBEFORE" "$HAFTER")" True
T=$(inb curl -s -m 5 -X POST --data-binary "@$TMP/got.pcap" "127.0.0.1:$PORT/api/v1/trace")
eq "windows from before the restart still answer" "$(python3 -c 'import json,sys; print({p["seen"] for p in json.load(sys.stdin)})' <<<"$T")" "{True}"

# ---- the command line stays on top of the file, at start and reloads;
# --config=FILE is honoured ----
kill -TERM $AGENT; wait $AGENT; AGENT=
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config="$TMP/agent.conf" --interval 9 >> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
eq "--config=FILE read at start (its listen, its interface)" "$(get 127.0.0.1:$PORT/healthz)" "ok"
eq "the command line's interval over the file's" "$(ival)" 9
sighup_then $AGENT "$TMP/agent.log"
eq "and after SIGHUP too" "$(ival)" 9
# --check reads the file's listen and interface: both held by this agent,
# which it names (it failed on them, so a running agent's file could not
# be checked)
check "--config=FILE --check beside the agent: the file OK, the agent named as the holder" bash -c \
	"nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' run --config='$TMP/agent.conf' --check > '$TMP/check.out' 2>&1 &&
	 grep -q '^configuration OK' '$TMP/check.out' && grep -q 'held now by another bloomtap process (PID $AGENT' '$TMP/check.out'"
check "a second agent is refused, and makes nothing (no archive directory)" bash -c \
	"! nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' run --listen 127.0.0.1:$((PORT + 7)) \
	 --archive '$TMP/second-archive' '$VB' > '$TMP/second.out' 2>&1 &&
	 grep -q \"$VB: the instance is held\" '$TMP/second.out' && test ! -e '$TMP/second-archive'"

# ---- the interface deleted and made again, while the agent runs and
# while it does not: attached again, the instance kept ----
P0=$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')
remake() {
	ip -n "$NSB" link del "$VB"
	ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB"
	ip -n "$NSA" addr add 198.18.8.1/24 dev "$VA"; ip -n "$NSB" addr add 198.18.8.2/24 dev "$VB"
	ip -n "$NSA" link set "$VA" up; ip -n "$NSB" link set "$VB" up
}
remake
wait_for "the interface made again attached" 30 grep -q "attached again, to the interface made again" "$TMP/agent.log"
check "running: the new interface attached again (logged)" grep -q "attached again, to the interface made again" "$TMP/agent.log"
in_ns "$NSA" ping -q -c 5 -i 0.05 198.18.8.2 >/dev/null
P1=$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')
check "running: the new interface's packets counted, the old counts kept ($P0 -> $P1)" test "$P1" -ge $((P0 + 5))
kill -TERM $AGENT; wait $AGENT; AGENT=
remake
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" >> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
eq "stopped: the agent starts anyway (no EEXIST)" "$(get 127.0.0.1:$PORT/healthz)" "ok"
check "stopped: attached to the interface made since (logged)" grep -q "interface was made again since: attached to it" "$TMP/agent.log"
in_ns "$NSA" ping -q -c 5 -i 0.05 198.18.8.2 >/dev/null
P2=$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')
check "stopped: packets counted again ($P1 -> $P2)" test "$P2" -ge $((P1 + 5))

# ---- detach --force under the agent: it says so, once; /healthz fails;
# bloomtap_attached is 0 (it logged a failed re-attach every second and
# answered ok) ----
check "detach --force while the agent runs" inb "$BLOOMTAP" detach --force "$VB"
wait_for "/healthz answers 503" 30 bash -c "[ \$(nsenter --net=/var/run/netns/$NSB curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/healthz) = 503 ]" &&
	ok "/healthz answers 503 once detached"
eq "/healthz names the interface" "$(get 127.0.0.1:$PORT/healthz)" "$VB: detached"
eq "bloomtap_attached 0" "$(get 127.0.0.1:$PORT/metrics | awk -v i="$VB" '$1 == "bloomtap_attached{interface=\""i"\"}" {print $2}')" 0
eq "said once, no re-attach attempts" "$(grep -c "$VB: detached under the agent" "$TMP/agent.log")/$(grep -c 'could not attach' "$TMP/agent.log")" "1/0"
kill -TERM $AGENT; wait $AGENT; AGENT=
check "stopping: it does not claim the program stays attached" bash -c "tail -1 '$TMP/agent.log' | grep -q 'nothing is attached'"

# ---- --detach-on-exit ----
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" --detach-on-exit >> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
kill -TERM $AGENT; wait $AGENT; AGENT=
check "--detach-on-exit: detached" bash -c "! ip -n $NSB link show $VB | grep -q 'prog/xdp'"
check "--detach-on-exit: no pins" test ! -e "/sys/fs/bpf/bloomtap/$VB"
# detached under it, then stopped: said so, and no error (it logged
# "error: no bloomtap instance")
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" --detach-on-exit > "$TMP/doe.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
check "detach --force under an agent with --detach-on-exit" inb "$BLOOMTAP" detach --force "$VB"
wait_for "the agent sees it" 30 grep -q "$VB: detached under the agent" "$TMP/doe.log"
kill -TERM $AGENT; wait $AGENT; RC=$?; AGENT=
eq "then stopped: exit 0, 'detached already', no error but the detach's own" \
	"$RC/$(grep -c "$VB: detached already" "$TMP/doe.log")/$(grep -i error "$TMP/doe.log" | grep -vc "detached under the agent")" "0/1/0"

# ---- drop-suppress from the file: on an adopted instance, and on reload
# (it used to take effect only when the agent attached itself) ----
check "attached by hand, nothing suppressed" inb "$BLOOMTAP" attach "$VB" --drop-suppress none
suppressed() { inb "$BLOOMTAP" -j drops "$VB" |
	python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["suppressed"])) or "-")'; }
eq "nothing suppressed" "$(suppressed)" "-"
sed 's/^interface = .*/&\ndrop-suppress = NO_SOCKET/' "$TMP/agent.conf" > "$TMP/suppress.conf"
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/suppress.conf" >> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
eq "adopted: the file's drop-suppress applied" "$(suppressed)" "NO_SOCKET"
sed -i 's/^drop-suppress = .*/drop-suppress = OTHERHOST,NO_SOCKET/' "$TMP/suppress.conf"
sighup_then $AGENT "$TMP/agent.log"
eq "reloaded: the new list applied" "$(suppressed)" "NO_SOCKET OTHERHOST"
kill -TERM $AGENT; wait $AGENT; AGENT=

# ---- direction = both in the file over an instance attached for ingress
# (the one above): adopted as it is, which --check and the start say, with
# the way out; with --force, made anew with the file's directions ----
sed 's/^interface = .*/&\ndirection = both/' "$TMP/agent.conf" > "$TMP/both.conf"
OUT=$(inb "$BLOOMTAP" run --check --config "$TMP/both.conf" 2>&1)
check "run --check: the instance records ingress, the file asks both: said, with detach and --force" \
	bash -c "grep -q 'warning: $VB: the instance attached there records direction ingress, the configuration asks both: run would adopt it as it is' <<<\"\$0\" &&
		 grep -q \"'bloomtap detach $VB' before the agent starts, or start it with --force\" <<<\"\$0\"" "$OUT"
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/both.conf" > "$TMP/both.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
check "at start: warned, with the way out" grep -q \
	"warning: $VB: the instance attached there records direction ingress, the configuration asks both: adopted as it is .*'bloomtap detach $VB'.*--force" \
	"$TMP/both.log"
eq "adopted as it is" "$(status_field "$NSB" "$VB" direction)" ingress
kill -TERM $AGENT; wait $AGENT; AGENT=
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/both.conf" --force > "$TMP/both-force.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
eq "--force: made anew with the file's directions" "$(status_field "$NSB" "$VB" direction)" both
check "--force: said so" grep -q "the agent detaches it and attaches anew (--force" "$TMP/both-force.log"
kill -TERM $AGENT; wait $AGENT; AGENT=
OUT=$(inb "$BLOOMTAP" run --check --config "$TMP/both.conf" 2>&1)
check "run --check: the directions agree now, nothing said of them" bash -c \
	"! grep -q 'records direction' <<<\"\$0\"" "$OUT"
inb "$BLOOMTAP" detach "$VB" >/dev/null

# ---- /api/v1/drops reads the dropped flows' sketches under the agent's
# lock, as /api/v1/heavy does: a flip (which clears the idle interval of
# those sketches) held mid-way by the test's pause keeps the lock, and the
# request waits for it; /healthz, which takes no lock, answers meanwhile.
# Without the lock the request would read a sketch being cleared ----
BLOOMTAP_TEST_PAUSE=agent-flip:$TMP/go-flip nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" \
	run --config "$TMP/agent.conf" --interval 1 > "$TMP/pause.log" 2>&1 &
AGENT=$!
wait_for "a flip held (the test's pause)" 30 grep -q "paused at agent-flip" "$TMP/pause.log" &&
	ok "a flip held (the test's pause)"
eq "/healthz answers during the flip" "$(get -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/healthz)" 200
eq "/api/v1/drops waits for the flip (no answer in 2 s)" \
	"$(inb curl -s -m 2 -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/api/v1/drops)" 000
touch "$TMP/go-flip"
eq "and answers once the flip is done" \
	"$(get -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/api/v1/drops)" 200
kill -TERM $AGENT; wait $AGENT; AGENT=
inb "$BLOOMTAP" detach "$VB" >/dev/null

# ---- --direction both: /api/v1/heavy answers the sent flows too (it
# answered the received ones alone, whatever was asked), each interval
# with its direction; ?direction= picks ----
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" \
	--direction both > "$TMP/both.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers (--direction both)" 30 get "127.0.0.1:$PORT/healthz"
dirs_of() {	# QUERY: the directions of the flows listed, sorted
	get "127.0.0.1:$PORT/api/v1/heavy$1" | python3 -c 'import json, sys
print(" ".join(sorted({f["direction"] for f in json.load(sys.stdin)})))'
}
both_listed() {
	in_ns "$NSA" ping -q -c 2 -i 0.05 198.18.8.2 >/dev/null
	[ "$(dirs_of "")" = "egress ingress" ]
}
wait_for "both directions' heavy flows listed (pings in, replies out)" 30 both_listed &&
	ok "both directions' heavy flows listed by default (pings in, replies out)"
eq "?direction=egress: the sent flows alone" "$(dirs_of '?direction=egress')" egress
eq "?direction=ingress: the received flows alone" "$(dirs_of '?direction=ingress')" ingress
eq "?direction=both: both" "$(dirs_of '?direction=both')" "egress ingress"
eq "a reply sent is an egress flow from B" "$(get "127.0.0.1:$PORT/api/v1/heavy?direction=egress" |
	python3 -c 'import json, sys
print({f["src"] for f in json.load(sys.stdin) if f["proto"] in ("icmp", 1)})')" "{'198.18.8.2'}"
kill -TERM $AGENT; wait $AGENT; AGENT=
inb "$BLOOMTAP" detach "$VB" >/dev/null

# ---- --direction egress: what it receives is not recorded, and
# ?direction=ingress says so as the CLI does (it answered 200 [], as if
# nothing had come) ----
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" \
	--direction egress > "$TMP/egress.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers (--direction egress)" 30 get "127.0.0.1:$PORT/healthz"
eq "egress alone: heavy ?direction=ingress: 400" \
	"$(code '127.0.0.1:'$PORT'/api/v1/heavy?direction=ingress')" 400
check "in the CLI's words: records what it sends only" grep -q "records what it sends only" "$TMP/body"
eq "egress alone: heavy ?direction=both: 400" \
	"$(code '127.0.0.1:'$PORT'/api/v1/heavy?direction=both')" 400
eq "egress alone: heavy ?direction=egress: 200" \
	"$(code '127.0.0.1:'$PORT'/api/v1/heavy?direction=egress')" 200
eq "egress alone: heavy without direction: 200" "$(code '127.0.0.1:'$PORT'/api/v1/heavy')" 200
kill -TERM $AGENT; wait $AGENT; AGENT=
inb "$BLOOMTAP" detach "$VB" >/dev/null

# ---- the archive's disk full: a failed write is tried again a second
# later, not at every 10 ms turn (each try compressed up to 64 windows
# again, under the agent's lock). A 1 MiB tmpfs in a mount namespace of
# the agent's own, filled once it archives; windows of 0.2 s ----
mkdir -p "$TMP/full"
unshare --mount bash -c "mount -t tmpfs -o size=1m tmpfs '$TMP/full' &&
	exec nsenter --net=/var/run/netns/$NSB '$BLOOMTAP' run --config '$TMP/agent.conf' \
	--archive '$TMP/full/archive' --window 0.2 --archive-flush 0.2" > "$TMP/full.log" 2>&1 &
AGENT=$!
errors() { get "127.0.0.1:$PORT/metrics" | awk -v i="$VB" \
	'$1 == "bloomtap_archive_errors_total{interface=\""i"\"}" { print $2 }'; }
archived() { [ "$(get "127.0.0.1:$PORT/metrics" | awk -v i="$VB" \
	'$1 == "bloomtap_spie_windows_archived_total{interface=\""i"\"}" { print $2 }')" -gt 0 ] 2>/dev/null; }
wait_for "the agent archives into the small disk" 30 archived
# the disk filled from the agent's mount namespace
nsenter --mount --target "$AGENT" bash -c "head -c 2M /dev/zero > '$TMP/full/fill'" 2>/dev/null
failing() { [ "$(errors)" -gt 0 ] 2>/dev/null; }
wait_for "archive writes fail on the full disk" 30 failing
E0=$(errors) T0=$(date +%s%N)
in_ns "$NSA" ping -q -c 30 -i 0.1 198.18.8.2 >/dev/null	# 3 s of windows
E1=$(errors) T1=$(date +%s%N)
S=$(( (T1 - T0) / 1000000000 + 1 ))
check "failed writes over ${S} s: $((E1 - E0)), at most one a second (tried at every turn: 42 in 4 s, each compressing the windows again)" \
	test $((E1 - E0)) -le $((S + 2))
kill -TERM $AGENT; wait $AGENT; AGENT=
inb "$BLOOMTAP" detach "$VB" >/dev/null

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
