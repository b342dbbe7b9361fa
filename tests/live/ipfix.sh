#!/usr/bin/env bash
# IPFIX export against real collectors. The agent runs on a veth in a
# namespace and exports every interval's heavy flows to nfacctd (pmacct),
# to nfcapd (nfdump; started after the agent, so it can decode only once
# templates are sent again), over TCP to a listener, and to a port where
# nobody listens; tshark captures the export. IPv4 and IPv6 heavy flows of
# known sizes (tests/live/ipfix_traffic.py). What each collector decoded must
# equal what /api/v1/heavy (heavy -j) said about the same interval, field
# by field (tests/live/ipfix_check.py); tshark also checks sequence numbers,
# message sizes, template refresh and the options records. Then heavy
# --flip --ipfix-file, and a key mode's template.
source "$(dirname "$0")/../lib/lib.sh"
need_root "ipfix"
for t in nfacctd nfcapd nfdump tshark nc; do
	command -v $t >/dev/null || { fail "$t is not installed (make deps installs it)"; summary; exit 1; }
done

ID=$$
NSA=bt-ix-a-$ID NSB=bt-ix-b-$ID
VA=btixa$ID VB=btixb$ID
PORT=9479 ACCT=4801 CAPD=4802 TCP=4803 DEAD=4804
TMP=$(mktemp -d)
INST=ipfix-$ID
PIDS=()
CHECK="python3 $TOP/tests/live/ipfix_check.py"
# SIGTERM, then SIGKILL after 3 s: nfacctd's core waits forever for its
# print plugin on SIGTERM (pmacct 1.7.7 here); the plugin has written every
# second by then
stop_pids() {
	local p i
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for i in $(seq 30); do
		local alive=0
		for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	PIDS=()
}
cleanup() {
	stop_pids
	[ -s "$TMP/example/nfcapd.pid" ] && kill "$(cat "$TMP/example/nfcapd.pid")" 2>/dev/null
	"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
	"$BLOOMTAP" detach --instance "$INST" >/dev/null 2>&1
	"$BLOOMTAP" detach --instance "$INST-src" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
# nsenter execs the program: $! is the daemon itself, which signals reach
bg_b() { nsenter --net=/var/run/netns/"$NSB" "$@" & PIDS+=($!); }
# the agent's answer to /api/v1/heavy?n=N every S seconds into FILE, and
# when each was asked and answered (ms, CLOCK_REALTIME) into FILE.t, until
# POLLER is killed; and its HTTP up
agent_up() { wait_for "the agent answers" 30 in_ns "$NSB" curl -s "127.0.0.1:$PORT/healthz"; }
poll_heavy() {	# N S FILE
	( while :; do
		t0=$(date +%s%3N)
		in_ns "$NSB" curl -s -m 2 "127.0.0.1:$PORT/api/v1/heavy?n=$1" && echo "$t0 $(date +%s%3N)" >&3
		echo
		sleep "$2"
	done > "$3" 3> "$3.t" 2>/dev/null ) &
	POLLER=$!
}

# ---- bad values ----
expect_fail "--ipfix: a bad port" "the port is 1..65535" "$BLOOMTAP" run --check --ipfix 127.0.0.1:99999 lo
expect_fail "--ipfix: IPv6 without brackets" "goes in brackets" "$BLOOMTAP" run --check --ipfix ::1:4739 lo
expect_fail "--ipfix: more than 4 collectors" "at most 4 collectors" "$BLOOMTAP" run --check \
	--ipfix a:1,b:2,c:3,d:4,e:5 lo
expect_fail "heavy --ipfix-file without --interval or --flip" "needs --interval or --flip" \
	"$BLOOMTAP" heavy --ipfix-file "$TMP/x" lo

veth_pair "$NSA" "$VA" "$NSB" "$VB" 14 || { fail "namespaces"; summary; exit 1; }
MAC=$(ip -n "$NSB" -j link show "$VB" | json_get '[0]["address"]')
IFX=$(ip -n "$NSB" -j link show "$VB" | json_get '[0]["ifindex"]')
FIELDS="--ifindex=$IFX --period-ms=2000 --both-families"

# ---- the collectors, the capture, the agent ----
cat > "$TMP/nfacctd.conf" <<EOF
daemonize: false
nfacctd_ip: 127.0.0.1
nfacctd_port: $ACCT
timestamps_utc: true
plugins: print[p]
aggregate[p]: src_host, dst_host, src_port, dst_port, proto, in_iface, timestamp_start, timestamp_end
print_output[p]: json
print_output_file[p]: $TMP/nfacctd.json
print_output_file_append[p]: true
print_refresh_time[p]: 1
EOF
bg_b nfacctd -f "$TMP/nfacctd.conf" > "$TMP/nfacctd.log" 2>&1
bg_b python3 "$TOP/tests/lib/capture.py" lo "$TMP/export.pcap" 0 \
	"port:$ACCT,port:$CAPD,port:$TCP,port:$DEAD" > "$TMP/capture.out"
bg_b nc -l 127.0.0.1 "$TCP" > "$TMP/tcp.ipfix"
capture_ready "$TMP/capture.out"
wait_for "nfacctd listens" 30 listening "$NSB" u "$ACCT"
wait_for "nc listens" 30 listening "$NSB" t "$TCP"
bg_b "$BLOOMTAP" run "$VB" --interval 2 --listen "127.0.0.1:$PORT" --archive "$TMP/archive" \
	--ipfix "127.0.0.1:$ACCT,127.0.0.1:$CAPD,tcp:127.0.0.1:$TCP,127.0.0.1:$DEAD" \
	--ipfix-template-refresh 1 > "$TMP/agent.log" 2>&1
AGENT=${PIDS[-1]}
agent_up
poll_heavy 100000 0.25 "$TMP/heavy.jsonl"	# what heavy -j says, four times an interval

# ended R: heavy -j showed round R's first heavy flow in an ended interval
ended() { grep -q "\"sport\":$((10000 + 100 * $1)),[^}]*\"interval\":\"last\"" "$TMP/heavy.jsonl"; }
# decoded R: nfacctd printed round R's first heavy flow (so it was exported)
decoded() { grep -q "\"port_src\": *$((10000 + 100 * $1))," "$TMP/nfacctd.json"; }
# fresh R: round R's flows have left the last interval, so an interval has
# just begun: a round sent now falls in one interval whole, however slow
# the machine (sent_sizes compares each flow's one record with what was
# sent; a round sent at a random time straddled a boundary beside two CPU
# hogs, 140 of a flow's 300 packets in one interval). Round 9 (never
# compared with what was sent) sets the pace before round 1.
fresh() { ! in_ns "$NSB" curl -s -m 2 "127.0.0.1:$PORT/api/v1/heavy?n=100000" |
	grep -q "\"sport\":$((10000 + 100 * $1)),[^}]*\"interval\":\"last\""; }
round() {	# R: sent at the start of an interval (after round PREV left it)
	wait_for "round $2's flows leave the last interval" 30 fresh "$2"
	in_ns "$NSA" python3 "$TOP/tests/live/ipfix_traffic.py" "$VA" "$MAC" 14 "$1" >/dev/null
}
in_ns "$NSA" python3 "$TOP/tests/live/ipfix_traffic.py" "$VA" "$MAC" 14 9 >/dev/null
wait_for "round 9's interval ends" 30 ended 9
round 1 9
wait_for "round 1's interval ends" 30 ended 1
mkdir -p "$TMP/nf"
bg_b nfcapd -w "$TMP/nf" -p "$CAPD" -b 127.0.0.1 -t 3600 > "$TMP/nfcapd.log" 2>&1
NFCAPD=${PIDS[-1]}
wait_for "nfcapd listens" 30 listening "$NSB" u "$CAPD"
round 2 1
wait_for "round 2's interval ends" 30 ended 2
round 3 2
wait_for "round 3's interval ends" 30 ended 3
wait_for "nfacctd printed round 3" 30 decoded 3
in_ns "$NSB" curl -s "127.0.0.1:$PORT/metrics" > "$TMP/metrics.txt"
kill "$POLLER"; wait "$POLLER" 2>/dev/null
check "promtool check metrics (with the IPFIX families)" bash -c "promtool check metrics < '$TMP/metrics.txt'"
check "messages sent to nfacctd counted" grep -q \
	"^bloomtap_ipfix_messages_total{collector=\"udp:127.0.0.1:$ACCT\"} [1-9]" "$TMP/metrics.txt"
check "nobody at udp:$DEAD: errors counted" grep -q \
	"^bloomtap_ipfix_errors_total{collector=\"udp:127.0.0.1:$DEAD\"} [1-9]" "$TMP/metrics.txt"
check "nfacctd: no error" grep -q \
	"^bloomtap_ipfix_errors_total{collector=\"udp:127.0.0.1:$ACCT\"} 0$" "$TMP/metrics.txt"
check "the failing collector logged" grep -q "IPFIX to udp:127.0.0.1:$DEAD" "$TMP/agent.log"
# an order, not a time: the failing collector's errors began with the first
# export, and the intervals of rounds 2 and 3 ended after it (waited above)
check "intervals kept ending beside the failing collector (rounds 1, 2, 3 each in an ended interval)" \
	bash -c "$(declare -f ended); TMP='$TMP'; ended 1 && ended 2 && ended 3"

# the collectors flush what they hold when stopped
kill "$AGENT"; wait "$AGENT"
eq "the agent stops cleanly (exit status; under ASan, no leak)" "$?" 0
stop_pids
check "nfacctd (pmacct) decodes every heavy flow of every interval as heavy -j, IPv4 and IPv6, bytes and packets" \
	$CHECK nfacctd "$TMP/heavy.jsonl" "$TMP/nfacctd.json" $FIELDS --rounds=1,2,3
TZ=UTC nfdump -r "$(ls "$TMP"/nf/nfcapd.2* 2>/dev/null | head -1)" -o json > "$TMP/nfdump.json" 2>"$TMP/nfdump.err"
check "nfcapd (nfdump), started after the agent, decodes from a template refresh on: every flow as heavy -j (packets; it does not read element 352)" \
	$CHECK nfdump "$TMP/heavy.jsonl" "$TMP/nfdump.json" --late $FIELDS --rounds=3
check "tshark: the UDP stream to nfacctd (records, sequence numbers, sizes, options records)" \
	$CHECK tshark "$TMP/heavy.jsonl" "$TMP/export.pcap" --port=$ACCT $FIELDS --rounds=1,2,3
check "tshark: the TCP stream" $CHECK tshark "$TMP/heavy.jsonl" "$TMP/export.pcap" --port=$TCP $FIELDS --rounds=1,2,3
TPL=$(tshark -r "$TMP/export.pcap" -d udp.port==$ACCT,cflow -Y "udp.dstport==$ACCT && cflow.template_id" 2>/dev/null | wc -l)
# sent again: more than the first (how many follows the run's length)
check "templates sent again over UDP (refresh 1 s): $TPL template messages" test "$TPL" -ge 2

# ---- a collector that stops reading, one that is not there (TCP) ----
# Every flow heavy (--packets 1), 20,000 flows a burst: the flow memory's
# 16,384 flows an interval, about 0.8 MB of IPFIX, to a TCP listener that
# never reads. Once the socket's buffers and bloomtap's 1 MiB are full,
# messages are dropped and counted; intervals keep ending on time.
"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
SLOW=4806 NOTCP=4807
bg_b python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
c, _ = s.accept(); time.sleep(600)' "$SLOW"
wait_for "the slow collector listens" 30 listening "$NSB" t "$SLOW"
bg_b "$BLOOMTAP" run "$VB" --interval 0.5 --packets 1 --listen "127.0.0.1:$PORT" \
	--archive "$TMP/archive2" --ipfix "tcp:127.0.0.1:$SLOW,tcp:127.0.0.1:$NOTCP" > "$TMP/agent2.log" 2>&1
AGENT=${PIDS[-1]}
agent_up
poll_heavy 1 0.1 "$TMP/heavy2.jsonl"
FLOWGEN=${FLOWGEN:-$TOP/${BT_BUILD:-.output}/tests/flowgen}
[ -x "$FLOWGEN" ] || FLOWGEN=$TOP/.output/tests/flowgen
metric() { in_ns "$NSB" curl -s "127.0.0.1:$PORT/metrics" | awk -v m="$1{collector=\"$2\"}" '$1 == m { print $2 }'; }
burst() { in_ns "$NSA" "$FLOWGEN" "$VA" "$MAC" 198.18.14.2 20000 0 0 64 >/dev/null; }
# bursts until the collector's buffers are full and messages are dropped
dropping() { burst; [ "$(metric bloomtap_ipfix_errors_total "tcp:127.0.0.1:$SLOW")" -gt 0 ]; }
wait_for "messages to the collector that stopped reading dropped" 120 dropping
intervals() { python3 "$TOP/tests/live/ipfix_check.py" intervals "$TMP/heavy2.jsonl"; }
# then the loop goes on: three more intervals end while it is stuck
N0=$(intervals)
more_intervals() { burst; [ "$(intervals)" -ge $((N0 + 3)) ]; }
wait_for "intervals end while the collector does not read" 60 more_intervals &&
	ok "intervals kept ending while the collector did not read ($N0 -> $(intervals))"
in_ns "$NSB" curl -s "127.0.0.1:$PORT/metrics" > "$TMP/metrics2.txt"
kill "$POLLER"; wait "$POLLER" 2>/dev/null
metric() { awk -v m="$1{collector=\"$2\"}" '$1 == m { print $2 }' "$TMP/metrics2.txt"; }
SENT=$(metric bloomtap_ipfix_records_total "tcp:127.0.0.1:$SLOW")
DROPPED=$(metric bloomtap_ipfix_errors_total "tcp:127.0.0.1:$SLOW")
check "a collector that stops reading: records went out until its buffers filled ($SENT)" \
	test "${SENT:-0}" -gt 16384
check "then messages were dropped and counted ($DROPPED)" test "${DROPPED:-0}" -gt 0
check "a TCP collector that is not there: counted" test "$(metric bloomtap_ipfix_errors_total "tcp:127.0.0.1:$NOTCP")" -gt 0
check "both logged" bash -c "grep -q 'IPFIX to tcp:127.0.0.1:$SLOW' '$TMP/agent2.log' && grep -q 'IPFIX to tcp:127.0.0.1:$NOTCP' '$TMP/agent2.log'"
kill "$AGENT"; wait "$AGENT"
eq "the agent stops at once, its collector still not reading" "$?" 0
stop_pids

# ---- the TCP backlog's account: a message counts as sent once its last
# byte is in the socket; the backlog left at exit is flushed for at most
# 2 s, the rest counted as not sent. A collector that reads nothing until
# the agent stops gets exactly what the agent's closing line says it sent
# (before, a message counted as sent when it entered the backlog, and the
# backlog was dropped silently at exit). ----
"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
BACK=4808
bg_b python3 -c '
import os, socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
c, _ = s.accept()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
with open(sys.argv[3], "wb") as out:
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        out.write(b)' "$BACK" "$TMP/go" "$TMP/stream.bin"
COLLECTOR=${PIDS[-1]}
wait_for "the collector that reads later listens" 30 listening "$NSB" t "$BACK"
bg_b "$BLOOMTAP" run "$VB" --interval 0.5 --packets 1 --listen "127.0.0.1:$PORT" \
	--archive "$TMP/archive3" --ipfix "tcp:127.0.0.1:$BACK" > "$TMP/agent3.log" 2>&1
AGENT=${PIDS[-1]}
agent_up
metric() { in_ns "$NSB" curl -s "127.0.0.1:$PORT/metrics" | awk -v m="$1{collector=\"$2\"}" '$1 == m { print $2 }'; }
# bursts until bloomtap's own backlog is full (messages past it dropped):
# a backlog is there at exit
dropping() { burst; [ "$(metric bloomtap_ipfix_errors_total "tcp:127.0.0.1:$BACK")" -gt 0 ]; }
wait_for "a full backlog to the collector that does not read yet" 120 dropping
touch "$TMP/go"
kill -TERM "$AGENT"; wait "$AGENT"
wait "$COLLECTOR"
LINE=$(grep -o "IPFIX to tcp:127.0.0.1:$BACK: .*" "$TMP/agent3.log" | tail -1)
echo "        $LINE"
SAID=$(sed -n 's/.*: \([0-9]*\) messages (\([0-9]*\) records) sent.*/\1 \2/p' <<<"$LINE")
GOT=$(python3 "$TOP/tests/live/ipfix_check.py" stream-count "$TMP/stream.bin")
check "the closing line gives the account ($SAID)" test -n "$SAID"
eq "what the collector got, messages and records: what the agent says it sent" "$GOT" "$SAID"
check "the backlog was there to flush: over 1 MB received" test "$(stat -c %s "$TMP/stream.bin")" -gt 1000000
stop_pids

# ---- the interface deleted and made again under the agent: the records
# after it carry the new interface's index (they kept the old one until a
# restart), and the interval counted on the old one ends when it goes, its
# records with the old index (the interval went on, and its records got
# the new index when it ended: a run beside two CPU hogs met it). Intervals
# of 10 s, against the agent's look at its interfaces once a second: round
# 5 is sent as an interval begins (round 4 seen ended), then counted and its
# interface made again well within that interval, so an agent that ended
# it only on time would give round 5 the new index ----
"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
RE=4810
bg_b python3 "$TOP/tests/lib/capture.py" lo "$TMP/re.pcap" 0 "port:$RE" > "$TMP/re-capture.out"
# a collector that takes the datagrams (none would make every other send
# fail: a connected UDP socket reports the port unreachable)
bg_b python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", int(sys.argv[1])))
while True: s.recv(65535)' "$RE"
capture_ready "$TMP/re-capture.out"
wait_for "the collector listens" 30 listening "$NSB" u "$RE"
bg_b "$BLOOMTAP" run "$VB" --interval 10 --listen "127.0.0.1:$PORT" --archive "$TMP/archive3" \
	--ipfix "127.0.0.1:$RE" > "$TMP/agent3.log" 2>&1
AGENT=${PIDS[-1]}
agent_up
poll_heavy 100000 0.1 "$TMP/heavy3.jsonl"
ended() { grep -q "\"sport\":$((10000 + 100 * $1)),[^}]*\"interval\":\"last\"" "$TMP/heavy3.jsonl"; }
OLD=$(ip -n "$NSB" -j link show "$VB" | json_get '[0]["ifindex"]')
in_ns "$NSA" python3 "$TOP/tests/live/ipfix_traffic.py" "$VA" "$MAC" 14 4 >/dev/null
wait_for "round 4's interval ends" 40 ended 4
in_ns "$NSA" python3 "$TOP/tests/live/ipfix_traffic.py" "$VA" "$MAC" 14 5 >/dev/null
# round 5's heavy flows counted whole (3 a family: 300, 200 and 100
# packets), in whichever interval; the newest whole answer
counted() {
	tail -n 2 "$TMP/heavy3.jsonl" | head -n 1 | python3 -c 'import json, sys
n = sum(x["packets"] for x in json.load(sys.stdin) if x["sport"] // 100 == int(sys.argv[1]))
sys.exit(n != 1200)' "$((100 + $1))"
}
wait_for "round 5 counted" 30 counted 5
ip -n "$NSB" link del "$VB"
ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB"
ip -n "$NSA" link set "$VA" up; ip -n "$NSB" link set "$VB" up
NEW=$(ip -n "$NSB" -j link show "$VB" | json_get '[0]["ifindex"]')
MAC=$(ip -n "$NSB" -j link show "$VB" | json_get '[0]["address"]')
wait_for "the agent attached again" 30 grep -q "attached again, to the interface made again" "$TMP/agent3.log"
in_ns "$NSA" python3 "$TOP/tests/live/ipfix_traffic.py" "$VA" "$MAC" 14 6 >/dev/null
wait_for "round 6's interval ends" 40 ended 6
# its records exported: the capture holds them (tshark reads what is written)
exported6() { tshark -r "$TMP/re.pcap" -d "udp.port==$RE,cflow" -T fields -e cflow.srcport 2>/dev/null | tr ',' '\n' | grep -qx 10600; }
wait_for "round 6's records exported" 30 exported6
kill "$POLLER"; wait "$POLLER" 2>/dev/null
eq "ingressInterface: round 5 the old index ($OLD), round 6 the new ($NEW)" "$(tshark -r "$TMP/re.pcap" -d "udp.port==$RE,cflow" \
	-T fields -e cflow.srcport -e cflow.inputint 2>/dev/null | python3 -c '
import sys
seen = {}
for line in sys.stdin:
    ports, ifs = (line.rstrip("\n").split("\t") + [""])[:2]
    for p, i in zip(ports.split(","), ifs.split(",")):
        if p in ("10500", "10600"):
            seen.setdefault(p, set()).add(i)
print(sorted(seen.get("10500", [])), sorted(seen.get("10600", [])))')" "['$OLD'] ['$NEW']"
stop_pids

# ---- a collector's name is resolved at each (re)connect and each of its
# addresses tried in turn: a name that is ::1 first, then 127.0.0.1 (a
# hosts file of the test's own, bind-mounted in a mount namespace of the
# agent's own), a TCP collector on 127.0.0.1 only. With the first address
# only, the agent tried ::1 forever. ----
NAMED=4811
printf '::1 btcollector\n127.0.0.1 btcollector\n' > "$TMP/hosts"
# ::1 usable (a resolver puts an address it has no source for last)
in_ns "$NSB" sysctl -qw net.ipv6.conf.lo.disable_ipv6=0
eq "the name's first address is ::1" "$(nsenter --net=/var/run/netns/"$NSB" unshare -m sh -c \
	'mount --bind "$1" /etc/hosts &&
	 python3 -c "import socket; print(socket.getaddrinfo(\"btcollector\", 1, 0, socket.SOCK_STREAM)[0][4][0])"' \
	_ "$TMP/hosts")" "::1"
bg_b python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
c, _ = s.accept()
print("accepted", flush=True)
head = c.recv(2)
print("version %d" % int.from_bytes(head, "big"), flush=True)
c.recv(65535)' "$NAMED" > "$TMP/named.out"
wait_for "the named collector listens" 30 listening "$NSB" t "$NAMED"
nsenter --net=/var/run/netns/"$NSB" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift &&
	exec "$@"' _ "$TMP/hosts" "$BLOOMTAP" run "$VB" --interval 0.5 --listen "127.0.0.1:$PORT" \
	--archive "$TMP/archive4" --ipfix "tcp:btcollector:$NAMED" > "$TMP/agent4.log" 2>&1 &
PIDS+=($!)
agent_up
wait_for "the collector on the name's second address gets IPFIX" 30 grep -qx 'version 10' "$TMP/named.out" &&
	ok "the collector on the name's second address gets IPFIX (::1 refused, 127.0.0.1 taken)"
stop_pids
"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1

# ---- heavy --interval --ipfix-file: an interval without the agent ----
check "replay a capture" "$BLOOMTAP" replay --instance "$INST" "$PCAPS/pcapplusplus__tls2.pcap"
check "heavy --interval 1 --count 1 --ipfix-file" "$BLOOMTAP" heavy --instance "$INST" --interval 1 \
	--count 1 --ipfix-file "$TMP/file.ipfix"
"$BLOOMTAP" -j heavy --instance "$INST" -n 100000 > "$TMP/file-heavy.jsonl"
check "the file holds whole messages" $CHECK pcap "$TMP/file.ipfix" "$TMP/file.pcap"
check "tshark decodes the file as heavy -j's last interval" \
	$CHECK tshark "$TMP/file-heavy.jsonl" "$TMP/file.pcap" --ifindex=0 --both-families

# ---- a key mode leaves its masked fields out of the template ----
check "replay into an instance keyed by source" "$BLOOMTAP" replay --key src --instance "$INST-src" \
	"$PCAPS/pcapplusplus__tls2.pcap"
check "heavy --flip --ipfix-file (key src)" "$BLOOMTAP" heavy --instance "$INST-src" --flip \
	--ipfix-file "$TMP/src.ipfix"
$CHECK pcap "$TMP/src.ipfix" "$TMP/src.pcap" >/dev/null
eq "key src: the records carry the source address, counts, times and interface only" "$(
	tshark -r "$TMP/src.pcap" -d udp.port==4739,cflow -T json 2>/dev/null | python3 -c '
import json, sys
names = set()
for p in json.load(sys.stdin):
    c = p["_source"]["layers"]["cflow"]
    for k, s in c.items():
        if k.startswith("Set ") and "Template" not in k:
            for fk, f in s.items():
                if fk.startswith("Flow ") and "cflow.packets" in f:
                    names |= set(f) | set(f.get("cflow.timedelta_tree", {}))
print(" ".join(sorted(n for n in names if not n.endswith("_tree"))))')" \
	"cflow.abstimeend cflow.abstimestart cflow.direction cflow.inputint cflow.layer2_octet_delta_count cflow.packets cflow.srcaddr cflow.srcaddrv6 cflow.timedelta"

# ---- docs/operating.md's worked example with nfdump, line for line, as
# firstlab.sh runs the README's: eth0, the paths and the port made the
# lab's, the agent's archive and HTTP the test's (the page's defaults are
# the host's), bloomtap the build's; the agent, which the page leaves in the foreground, in the
# background until its first interval (10 s, as the page says) is out ----
"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
# the pair was made again above, without its addresses
ip -n "$NSA" addr replace 198.18.14.1/24 dev "$VA"
ip -n "$NSB" addr replace 198.18.14.2/24 dev "$VB"
EX=$TMP/example
mkdir -p "$EX/nfdump"
sed -n '/^<!-- nfdump-example -->$/,/^<!-- \/nfdump-example -->$/p' "$TOP/docs/operating.md" |
	grep -v '^<!--\|^```' | sed -e "s|eth0|$VB|g" -e "s|/var/cache/nfdump|$EX/nfdump|g" \
	-e "s|/run/nfcapd.pid|$EX/nfcapd.pid|g" -e "s|4739|4809|g" \
	-e "s|--ipfix|--archive $EX/archive --listen 127.0.0.1:$PORT --ipfix|" \
	-e "s|^bloomtap |$BLOOMTAP |" > "$EX/lines"
eq "the page's example: its four lines" "$(wc -l < "$EX/lines")" 4
line() { sed -n "$1p" "$EX/lines"; }
check "line 1, the collector (nfcapd -D)" in_ns "$NSB" bash -ec "$(line 1)"
wait_for "nfcapd's PID file" 30 test -s "$EX/nfcapd.pid"
nsenter --net=/var/run/netns/"$NSB" bash -c "exec $(line 2)" > "$EX/agent.log" 2>&1 &
EXAGENT=$!
PIDS+=($EXAGENT)
agent_up
in_ns "$NSA" ping -q -c 10 -i 0.05 198.18.14.2 >/dev/null
exported() { [ "$(in_ns "$NSB" curl -s "127.0.0.1:$PORT/metrics" |
	awk '$1 ~ /^bloomtap_ipfix_records_total/ {s += $2} END {print s + 0}')" -gt 0 ]; }
wait_for "line 2, the exporter: its first interval out" 30 exported && ok "line 2: the first interval exported"
kill "$EXAGENT"; wait "$EXAGENT" 2>/dev/null
NFPID=$(cat "$EX/nfcapd.pid")
check "line 3, the collector stopped (kill -TERM)" in_ns "$NSB" bash -ec "$(line 3)"
wait_for "nfcapd gone" 30 bash -c "! kill -0 $NFPID 2>/dev/null"
in_ns "$NSB" bash -ec "$(line 4)" > "$EX/nfdump.out" 2>&1
check "line 4, nfdump -R: the ping flow, ICMP from 198.18.14.1 on $VB's index" \
	grep -qE "ICMP +198\.18\.14\.1:0 +-> +198\.18\.14\.2:[0-9.]+ +[0-9]+ +[0-9]+" "$EX/nfdump.out"
sed 's/^/        nfdump: /' "$EX/nfdump.out" | head -5

summary
[ "$FAIL" = 0 ]
