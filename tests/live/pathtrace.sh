#!/usr/bin/env bash
# trace --agents against agents whose answers the test chooses (small HTTP
# responders on loopback, in a namespace of the test's own): packets that
# took different paths are traced each on its own and grouped; an agent
# that does not answer is walked through; a topology file with a hub of
# many links and repeated names is read without harm; bad files are named.
source "$(dirname "$0")/../lib/lib.sh"
need_root "pathtrace"

ID=$$
NS=bt-pt-$ID
TMP=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
netns_add "$NS" || { fail "namespace"; summary; exit 1; }

# agent PORT SEEN: answers /api/v1/trace with one packet per character of
# SEEN (1 seen, 0 not). nsenter execs python: $! is the server itself.
agent() {
	nsenter --net=/var/run/netns/"$NS" python3 -c '
import http.server, json, sys
seen = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps([{"packet": i + 1, "seen": c == "1", "windows": [],
                            "windows_searched": 1, "fpr_combined": 0} for i, c in enumerate(seen)])
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.end_headers(); self.wfile.write(body.encode())
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$1" "$2" &
	PIDS+=($!)
}
# mkpcap FILE KIND...: a capture of Ethernet frames, one a KIND: ipN (a
# UDP datagram of IP ID N) or arp (not IP: its frame has a number, no
# answer of its own)
mkpcap() {
	python3 -c '
import struct, sys
f = open(sys.argv[1], "wb")
f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
eth = bytes(6) + bytes([2, 0, 0, 0, 0, 1])
for t, k in enumerate(sys.argv[2:]):
    if k == "arp":
        fr = eth + b"\x08\x06" + bytes.fromhex("0001080006040001") + bytes(20)
    else:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, int(k[2:]), 0, 64, 17, 0,
                         bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        fr = eth + b"\x08\x00" + ip + struct.pack("!HHHH", 54321, 53, 8, 0)
    f.write(struct.pack("<IIII", 1700000000 + t, 0, len(fr), len(fr)) + fr)' "$@"
}
mkpcap "$TMP/five.pcap" ip1 ip2 ip3 ip4 ip5
# victim side v; two branches b and c meet again at d; s hangs off b
agent 9601 11111	# v saw all 5
agent 9602 11100	# b: packets 1-3
agent 9603 00011	# c: packets 4-5
agent 9604 11111	# d: all
agent 9605 00001	# s: packet 5, off its path
for port in 9601 9602 9603 9604 9605; do wait_for "the stand-in agent on $port listens" 30 listening "$NS" t $port; done
cat > "$TMP/topo" <<TOPO
v: b c
b: d s
c: d
TOPO
LIST=v=127.0.0.1:9601,b=127.0.0.1:9602,c=127.0.0.1:9603,d=127.0.0.1:9604,s=127.0.0.1:9605
HEX=4500001c00010000401100000a0000010a000002d431003500080000
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/topo" --from v "$TMP/five.pcap" 2>&1); RC=$?
eq "two paths: exit 0" "$RC" 0
check "packets 1-3 came through b" grep -q "^3 packets: path (source side first): d -> b -> v$" <<<"$OUT"
check "packets 4-5 came through c" grep -q "^2 packets: path (source side first): d -> c -> v$" <<<"$OUT"
check "s saw packet 5 off its path: a false positive" grep -q "^s saw 1 packet off their path" <<<"$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$LIST" --topology "$TMP/topo" --from v "$TMP/five.pcap" 2>/dev/null)
eq "-j: paths with their packets" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(sorted((p["path"], p["packets"]) for p in d["paths"]), d["false_positives"])' <<<"$J")" \
	"[(['d', 'b', 'v'], [1, 2, 3]), (['d', 'c', 'v'], [4, 5])] [{'agent': 's', 'packets': 1}]"

# b does not answer: walked through, unknown; d still on both paths
kill "${PIDS[1]}"; wait "${PIDS[1]}" 2>/dev/null
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/topo" --from v "$TMP/five.pcap" 2>&1); RC=$?
eq "b down: exit 0" "$RC" 0
check "b down: packets 1-3 through b, unknown" grep -q "^3 packets: path (source side first): d -> b? -> v$" <<<"$OUT"
check "b down: named" grep -q "^b .*no answer: unknown" <<<"$OUT"
check "b down: s, behind b, is not walked to (it did not see packets 1-3)" \
	bash -c "! grep -q 's? \|-> s ' <<<\"\$0\"" "$OUT"

# the topology file: a hub linked to every agent many times over, and to
# itself; a line naming an unknown agent; an unknown agent before ':'
{ for i in $(seq 300); do echo 'v: b c d s v v b'; done; printf 'd:'; for i in $(seq 300); do printf ' v b c s'; done; echo; } > "$TMP/hub"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/hub" --from v "$TMP/five.pcap" 2>&1); RC=$?
check "a hub of 1,500 links (300 times each, itself too): read, no crash (exit $RC)" test "$RC" -le 1
printf 'v: b\nb: zz\n' > "$TMP/bad1"
expect_fail "unknown neighbour named with its line" "bad1:2: 'zz' is not one of the agents" \
	in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/bad1" --hex "$HEX"
printf 'v: b\nnonsense here\n' > "$TMP/bad2"
expect_fail "a line without ':' named" "bad2:2: expected 'NAME: NEIGHBOUR ...'" \
	in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/bad2" --hex "$HEX"
expect_fail "an agent named twice" "'v' twice" \
	in_ns "$NS" "$BLOOMTAP" trace --agents "v=127.0.0.1:9601,v=127.0.0.1:9602" --topology "$TMP/topo" --hex "$HEX"

# ---- credentials never in clear text ----
# heard PORT|SOCKET FILE: answers every request as one packet seen, and
# keeps each request's head in FILE (what a listener on the way would read)
heard() {
	nsenter --net=/var/run/netns/"$NS" python3 -c '
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[2], "a") as f: f.write(self.requestline + "\n" + str(self.headers))
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        self.wfile.write(b"[{\"packet\": 1, \"seen\": true, \"windows\": []}]")
    do_GET = do_POST
    def address_string(self): return "client"
    def log_message(self, *a): pass
class U(socketserver.UnixStreamServer):
    def get_request(self): c, _ = self.socket.accept(); return c, ("local", 0)
if sys.argv[1].startswith("/"): U(sys.argv[1], H).serve_forever()
else: http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$@" &
	PIDS+=($!)
}
heard 9610 "$TMP/heard-tcp"
heard "$TMP/agent.sock" "$TMP/heard-unix"
wait_for "the listener on 9610 listens" 30 listening "$NS" t 9610
wait_for "the unix socket's agent listens" 30 test -S "$TMP/agent.sock"
export BLOOMTAP_PASSWORD=secret$ID
expect_fail "--user, every agent plain http: refused at the start" \
	"go only over HTTPS or a unix socket, and every agent is plain http" \
	in_ns "$NS" "$BLOOMTAP" trace --agents x=127.0.0.1:9610,y=http://127.0.0.1:9613 --user u --hex "$HEX"
expect_fail "no agent answered: those asked counted, those not apart, the error of one asked" \
	"no agent answered (1 asked, 2 not asked; z: $TMP/nosuch.sock: " \
	in_ns "$NS" "$BLOOMTAP" trace --agents x=127.0.0.1:9610,y=127.0.0.1:9613,z="$TMP/nosuch.sock" --user u --hex "$HEX"
OUT=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents u="$TMP/agent.sock",x=127.0.0.1:9610 --user u \
	--hex "$HEX" 2>"$TMP/err"); RC=$?
eq "--user, one agent on a unix socket, one plain http: the socket's asked (exit $RC)" \
	"$(json_get '["agents"]["u"]["packets_seen"]' <<<"$OUT")" 1
check "... the plain http one not asked, named with the URL asked" grep -q "agent x: http://127.0.0.1:9610: not asked: it is plain http" "$TMP/err"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents u="$TMP/agent.sock",x=127.0.0.1:9610 --user u --hex "$HEX" 2>/dev/null)
check "... and in the text table: not asked, not 'no answer'" \
	grep -q "^x .* not asked (plain http, credentials given)$" <<<"$OUT"
check "... the unix socket's agent had the credentials" grep -qi "^authorization: basic" "$TMP/heard-unix"
check "... the plain http listener heard no credentials at all" \
	bash -c '! grep -qi "^authorization" "$0" 2>/dev/null' "$TMP/heard-tcp"
OUT=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents x=127.0.0.1:9610 --hex "$HEX" 2>/dev/null)
eq "no credentials: plain http asked" "$(json_get '["agents"]["x"]["packets_seen"]' <<<"$OUT")" 1
unset BLOOMTAP_PASSWORD

# ---- an agent that answers at the deadline it was sent ----
nsenter --net=/var/run/netns/"$NS" python3 -c '
import http.server, sys, time, urllib.parse
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        dl = int(urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)["deadline_ms"][0])
        open(sys.argv[1], "w").write(str(dl))
        time.sleep(dl / 1000)
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        self.wfile.write(b"[{\"packet\": 1, \"seen\": true, \"windows\": []}]")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", 9611), H).serve_forever()' "$TMP/deadline" &
PIDS+=($!)
wait_for "the agent that takes its deadline listens" 30 listening "$NS" t 9611
OUT=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents late=127.0.0.1:9611 --agent-timeout 4000 \
	--timeout 20000 --hex "$HEX" 2>"$TMP/err"); RC=$?
eq "an agent that answers at its deadline: not cut off (exit $RC)" \
	"$(json_get '["agents"]["late"]["packets_seen"]' <<<"$OUT")" 1
eq "... its deadline_ms: --agent-timeout less a quarter, at most 1 s" "$(cat "$TMP/deadline")" 3000

# ---- answers taken as they come: memory bounded by --parallel ----
# 30 agents (one responder on every loopback address: an agent listed
# twice is asked once), each answer 4 MiB: 120 MiB if all were held
nsenter --net=/var/run/netns/"$NS" python3 -c '
import http.server
body = b"[{\"packet\": 1, \"seen\": false}" + b" " * (4 << 20) + b"]"
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("0.0.0.0", 9612), H).serve_forever()' &
PIDS+=($!)
wait_for "the responder of 4 MiB answers listens" 30 listening "$NS" t 9612
BIG=$(for i in $(seq 30); do printf 'b%d=127.0.0.%d:9612,' "$i" "$i"; done)
in_ns "$NS" /usr/bin/time -f %M -o "$TMP/rss" "$BLOOMTAP" -j trace --agents "${BIG%,}" --parallel 2 \
	--timeout 120000 --agent-timeout 60000 --hex "$HEX" > "$TMP/big.json" 2>"$TMP/err"
RSS=$(tail -n 1 "$TMP/rss")	# after "Command exited with non-zero status 1": none saw it
eq "30 answers of 4 MiB, --parallel 2: each parsed" "$(json_get '["partial"]' < "$TMP/big.json")" False
echo "        measured: the client's peak RSS $RSS KiB for 30 answers of 4 MiB, 2 at once"
# (under ASan freed memory waits in its quarantine: the plain build's run
# is the measure)
if [ -z "$ASAN_OPTIONS" ]; then
	check "... peak RSS under 60 MiB (2 bodies of 4 MiB at once, not 30)" test "$RSS" -lt 61440
fi

# ---- more than 5 agents down: 5 named on stderr, the rest counted ----
DOWN=$(for i in $(seq 7); do printf ',d%d=127.0.0.1:%d' "$i" $((9620 + i)); done)
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "v=127.0.0.1:9601$DOWN" "$TMP/five.pcap" 2>"$TMP/err")
eq "7 of 8 down: 5 named on stderr" "$(grep -c '^bloomtap: warning: agent d[1-5]: ' "$TMP/err")" 5
check "... and the other 2 counted" grep -q "and 2 more agents did not answer" "$TMP/err"
check "... the answer names all 7" grep -q "^partial answer: 7 of 8 agents did not answer: d1 d2 d3 d4 d5 d6 d7$" <<<"$OUT"

# canned PORT BODYFILE [LOG [MODE]]: answers every trace with the text of
# BODYFILE, and keeps each request's line in LOG (/dev/null: none). MODE
# hang-status: its /api/v1/status never answers (an agent that is down,
# its port open); then:FILE: FILE made once it has answered; after:FILE:
# its answer only once FILE is there (the order of answers, not timing)
canned() {
	nsenter --net=/var/run/netns/"$NS" python3 -c '
import http.server, os, sys, threading, time
mode = sys.argv[4] if len(sys.argv) > 4 else ""
class H(http.server.BaseHTTPRequestHandler):
    def note(self):
        if len(sys.argv) > 3:
            with open(sys.argv[3], "a") as f: f.write(self.requestline + "\n")
    def do_GET(self):
        self.note()
        if mode == "hang-status": threading.Event().wait()
        self.send_response(200); self.end_headers(); self.wfile.write(b"{\"host\": \"h\"}")
    def do_POST(self):
        self.note()
        self.rfile.read(int(self.headers["Content-Length"]))
        body = open(sys.argv[2], "rb").read()
        while mode.startswith("after:") and not os.path.exists(mode[6:]): time.sleep(0.01)
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body); self.wfile.flush()
        if mode.startswith("then:"): open(mode[5:], "w").close()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.daemon_threads = True
s.serve_forever()' "$@" &
	PIDS+=($!)
}
SEEN1='[{"packet": 1, "seen": true, "windows": [], "archive_cut": null}]'
echo "$SEEN1" > "$TMP/seen1"

# ---- one agent's answer is not the measure of the others' ----
# evil answers at once for 3 packets, the 1 sent: it alone is not believed
python3 -c 'import json; print(json.dumps([{"packet": i, "seen": True, "windows": []} for i in (1, 2, 3)]))' > "$TMP/evil"
canned 9630 "$TMP/evil" /dev/null then:"$TMP/evil-done"
for port in 9631 9632 9633; do canned $port "$TMP/seen1" /dev/null after:"$TMP/evil-done"; done
for port in 9630 9631 9632 9633; do wait_for "the canned agent on $port listens" 30 listening "$NS" t $port; done
printf 'v: b\nb: c\nc: evil\n' > "$TMP/topo-evil"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents evil=127.0.0.1:9630,v=127.0.0.1:9631,b=127.0.0.1:9632,c=127.0.0.1:9633 \
	--topology "$TMP/topo-evil" --from v --hex "$HEX" 2>"$TMP/err"); RC=$?
eq "an agent answering for 3 of 1 packets: exit 0" "$RC" 0
check "... the honest three walked: c -> b -> v" grep -q "^1 packet: path (source side first): c -> b -> v$" <<<"$OUT"
check "... it alone named, its answer not taken" grep -q "agent evil: .*answered for 3 packets, not the 1 sent" "$TMP/err"
check "... the answer partial, naming it alone" grep -q "^partial answer: 1 of 4 agents did not answer: evil$" <<<"$OUT"
python3 -c 'import json; print(json.dumps([{"packet": 7, "seen": True, "windows": []}]))' > "$TMP/evil"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents evil=127.0.0.1:9630,v=127.0.0.1:9631 --hex "$HEX" 2>"$TMP/err")
check "an agent answering for a packet not sent (7): named" grep -q "agent evil: .*answered for packet 7 not sent" "$TMP/err"

# ---- an archive search cut off at its deadline: unknown, not "not seen" ----
echo '[{"packet": 1, "seen": false, "windows": [], "archive_cut": "2026-12-01T10:00:00.000Z"}]' > "$TMP/cut"
canned 9634 "$TMP/cut"
wait_for "the cut-off agent listens" 30 listening "$NS" t 9634
printf 'c: b\nb: a\n' > "$TMP/topo-abc"
ABC=a=127.0.0.1:9631,b=127.0.0.1:9634,c=127.0.0.1:9632
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$ABC" --topology "$TMP/topo-abc" --from c --hex "$HEX" 2>&1); RC=$?
eq "b's search cut off: exit 0" "$RC" 0
check "... walked through it, unknown: a -> b? -> c" grep -q "^1 packet: path (source side first): a -> b? -> c$" <<<"$OUT"
check "... the answer partial, naming b" grep -q "^partial answer: 1 agent cut off its archive search .*: b$" <<<"$OUT"
check "... a, which saw it, no false positive" bash -c '! grep -q "false positive" <<<"$0"' "$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$ABC" --topology "$TMP/topo-abc" --from c --hex "$HEX" 2>/dev/null)
eq "... -j: partial, cut_off b, b unknown on the path" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(d["partial"], d["cut_off"], [(p["path"], p["unknown"]) for p in d["paths"]], d["agents"]["b"]["packets_cut_off"])' <<<"$J")" \
	"True ['b'] [(['a', 'b', 'c'], ['b'])] 1"

# ---- damaged archive files of the packet's time: unknown, not "not seen" ----
echo '[{"packet": 1, "seen": false, "windows": [], "archive_cut": null, "archive_damaged": 2}]' \
	> "$TMP/damaged"
canned 9640 "$TMP/damaged"
wait_for "the agent with damaged files listens" 30 listening "$NS" t 9640
ADC=a=127.0.0.1:9631,b=127.0.0.1:9640,c=127.0.0.1:9632
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$ADC" --topology "$TMP/topo-abc" --from c --hex "$HEX" 2>&1); RC=$?
eq "b's archive files damaged: exit 0" "$RC" 0
check "... walked through it, unknown: a -> b? -> c" grep -q "^1 packet: path (source side first): a -> b? -> c$" <<<"$OUT"
check "... b's line says why" grep -q "^b .* saw 0 of 1 packet; damaged archive files of the time of 1: unknown there$" <<<"$OUT"
check "... the answer partial, naming b" grep -q "^partial answer: 1 agent could not read archive files (damaged) .*: b$" <<<"$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$ADC" --topology "$TMP/topo-abc" --from c --hex "$HEX" 2>/dev/null)
eq "... -j: partial, archive_damaged b, b unknown on the path, not cut off" "$(python3 -c '
import json,sys; d=json.load(sys.stdin); b=d["agents"]["b"]
print(d["partial"], d["archive_damaged"], d["cut_off"], [(p["path"], p["unknown"]) for p in d["paths"]],
      b["packets_archive_damaged"], b["packets_cut_off"])' <<<"$J")" \
	"True ['b'] [] [(['a', 'b', 'c'], ['b'])] 1 0"
# seen there, damaged files or not: a hop, not unknown
echo '[{"packet": 1, "seen": true, "windows": [], "archive_damaged": 2}]' > "$TMP/damaged"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$ADC" --topology "$TMP/topo-abc" --from c --hex "$HEX" 2>/dev/null)
eq "... seen by b in spite of them: not partial, b known" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(d["partial"], d["archive_damaged"], [(p["path"], p["unknown"]) for p in d["paths"]])' <<<"$J")" \
	"False [] [(['a', 'b', 'c'], [])]"

# ---- no agent answers: a failure (1), not the command line's (2) ----
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents a=127.0.0.1:1 --hex "$HEX" 2>&1); RC=$?
eq "no agent answered: exit 1" "$RC" 1
check "... and it says so" grep -q "no agent answered (1 asked" <<<"$OUT"

# ---- a capture with a frame that is not IP, and a repeat ----
# frames: 1 ARP, 2 ip1, 3 ip2, 4 ip1 again: the agents answer for 2, 3
# and 4 (4 the same as 2); x dropped 2, so it dropped 4 too
mkpcap "$TMP/arp.pcap" arp ip1 ip2 ip1
echo '[{"packet": 2, "seen": true, "windows": []}, {"packet": 3, "seen": true, "windows": []},
       {"packet": 4, "seen": true, "same_as": 2}]' > "$TMP/arp-v"
echo '[{"packet": 2, "seen": true, "windows": [], "drops": [{"reason": "X"}]},
       {"packet": 3, "seen": false, "windows": []}, {"packet": 4, "seen": true, "same_as": 2}]' > "$TMP/arp-x"
canned 9635 "$TMP/arp-v"
canned 9636 "$TMP/arp-x"
for port in 9635 9636; do wait_for "the agent on $port listens" 30 listening "$NS" t $port; done
echo 'v: x' > "$TMP/topo-vx"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents v=127.0.0.1:9635,x=127.0.0.1:9636 --topology "$TMP/topo-vx" \
	--from v "$TMP/arp.pcap" 2>"$TMP/err")
eq "ARP first, a repeat: the packets by their numbers, the repeat dropped as its first" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(d["partial"], sorted((p["packets"], p.get("dropped_at")) for p in d["paths"]))' <<<"$J")" \
	"False [([2, 4], 'x'), ([3], None)]"

# ---- an agent whose status request gets no answer: no trace sent ----
canned 9637 "$TMP/seen1" "$TMP/hung-log" hang-status
wait_for "the agent whose status hangs listens" 30 listening "$NS" t 9637
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9637,v=127.0.0.1:9631 --parallel 1 \
	--agent-timeout 1000 --hex "$HEX" 2>"$TMP/err"); RC=$?
eq "status unanswered: the other walked (exit $RC)" "$RC" 0
check "... named, by its status request" grep -q "agent http://127.0.0.1:9637: no answer in time.*its status request, so not asked the trace" "$TMP/err"
eq "... and it was sent its status request alone, no trace" "$(cut -d' ' -f1,2 "$TMP/hung-log" | sed 's/?.*//' | tr '\n' ' ')" \
	"GET /api/v1/status "

# ---- an answer over the bound: said so ----
python3 -c 'import sys; sys.stdout.write("[" + " " * (9 << 20) + "]")' > "$TMP/huge"
canned 9638 "$TMP/huge"
wait_for "the agent of 9 MiB listens" 30 listening "$NS" t 9638
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents big=127.0.0.1:9638,v=127.0.0.1:9631 --hex "$HEX" 2>"$TMP/err")
check "an answer of 9 MiB: over the 8 MiB bound, said so" grep -q "agent big: .*its answer is over the 8 MiB an answer may take" "$TMP/err"

# ---- no proxy: the environment's is not used ----
OUT=$(in_ns "$NS" env http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 \
	"$BLOOMTAP" -j trace --agents v=127.0.0.1:9631 --hex "$HEX" 2>/dev/null)
eq "http_proxy to a closed port: the agent asked directly" "$(json_get '["agents"]["v"]["packets_seen"]' <<<"$OUT")" 1

# ---- Prometheus's targets with credentials: only a job's ----
export BLOOMTAP_PASSWORD=secret$ID
expect_fail "--agents-from-prometheus without ?job= and --user: refused, why said" \
	"with --user or --netrc, name the agents' job (URL?job=NAME)" \
	in_ns "$NS" "$BLOOMTAP" trace --agents-from-prometheus http://127.0.0.1:9639 --user u --hex "$HEX"

# ---- the order of one path h1 -> r -> h2, each agent's windows its own ----
# standin PORT CODE BODYFILE [STATUSFILE]: answers the trace with CODE and
# BODYFILE's bytes, /api/v1/status with STATUSFILE's (none: 404)
standin() {
	nsenter --net=/var/run/netns/"$NS" python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self, code, path):
        body = open(path, "rb").read() if path else b"404 page not found\n"
        self.send_response(code); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.answer(int(sys.argv[2]), sys.argv[3])
    def do_GET(self):
        self.answer(200 if len(sys.argv) > 4 else 404, sys.argv[4] if len(sys.argv) > 4 else None)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$@" &
	PIDS+=($!)
}
# win START END DIR: one window of 10:00:START-10:00:END on 2026-12-01
win() { printf '{"start": "2026-12-01T10:00:%sZ", "end": "2026-12-01T10:00:%sZ", "direction": "%s"}' "$@"; }
# packet 1 left h1 (egress); its windows start later than r's and h2's,
# each host's windows of 1 s starting at its own times. Packet 2: no
# egress record anywhere.
printf '[{"packet": 1, "seen": true, "windows": [%s]}, {"packet": 2, "seen": true, "windows": [%s]}]' \
	"$(win 05.500 06.500 egress)" "$(win 05.500 06.500 ingress)" > "$TMP/h1.json"
printf '[{"packet": 1, "seen": true, "windows": [%s]}, {"packet": 2, "seen": true, "windows": [%s]}]' \
	"$(win 05.300 06.300 ingress)" "$(win 05.300 06.300 ingress)" > "$TMP/r.json"
printf '[{"packet": 1, "seen": true, "windows": [%s]}, {"packet": 2, "seen": true, "windows": [%s]}]' \
	"$(win 05.100 06.100 ingress)" "$(win 05.100 06.100 ingress)" > "$TMP/h2.json"
standin 9651 200 "$TMP/h1.json"; standin 9652 200 "$TMP/r.json"; standin 9653 200 "$TMP/h2.json"
for port in 9651 9652 9653; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
HOPS=h1=127.0.0.1:9651,r=127.0.0.1:9652,h2=127.0.0.1:9653
# two IP packets, frames 1 and 2 of a capture: what the stand-ins answer for
python3 - "$HEX" "$TMP/two.pcap" <<'PY'
import struct, sys
ip = bytes.fromhex(sys.argv[1])
out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101)	# LINKTYPE_RAW
for p in (ip, ip[:-1] + bytes([ip[-1] ^ 1])):
    out += struct.pack("<IIII", 1764583200, 0, len(p), len(p)) + p
open(sys.argv[2], "wb").write(out)
PY
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$HOPS" "$TMP/two.pcap" 2>&1)
check "no topology: the sender first, the overlapping windows' order not claimed" \
	grep -q "^1 packet: path (source side first): h1 (left) -> {h2, r}$" <<<"$OUT"
check "... no egress record: one step of unknown order, never a confident order" \
	grep -q "^1 packet: path (source side first): {h1, h2, r}$" <<<"$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$HOPS" "$TMP/two.pcap" 2>/dev/null)
eq "-j: the steps the evidence orders" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(d["order"], [(p["steps"], p["walked_from"]) for p in d["paths"]])' <<<"$J")" \
	"inferred [([['h1'], ['h2', 'r']], 'inferred'), ([['h1', 'h2', 'r']], 'inferred')]"
printf 'h1: r\nr: h2\n' > "$TMP/hops"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$HOPS" --topology "$TMP/hops" "$TMP/two.pcap" 2>&1)
check "--topology, no --from: walked from where the packet left, sender first" \
	grep -q "^1 packet: path (source side first): h1 (left) -> r -> h2$" <<<"$OUT"
check "... no agent says it left: walked from the first agent, and said so" \
	grep -q "^walked from h1, the first agent" <<<"$OUT"

# ---- two agents that give one hostname ----
echo '{"host": "vm", "instance": "bloomtap"}' > "$TMP/vm.status"
standin 9654 200 "$TMP/h1.json" "$TMP/vm.status"; standin 9655 200 "$TMP/r.json" "$TMP/vm.status"
for port in 9654 9655; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents 127.0.0.1:9655,127.0.0.1:9654 "$TMP/two.pcap" 2>/dev/null)
eq "one hostname: each gets its HOST:PORT, none bare" \
	"$(python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["agents"]))' <<<"$J")" \
	"['vm@127.0.0.1:9654', 'vm@127.0.0.1:9655']"
# a hostname past the 63 bytes a name keeps: cut, and still each its own
LONG=$(printf 'h%.0s' $(seq 70))
echo "{\"host\": \"$LONG\", \"instance\": \"bloomtap\"}" > "$TMP/vm.status"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents 127.0.0.1:9655,127.0.0.1:9654 "$TMP/two.pcap" 2>/dev/null)
eq "one long hostname: cut, each with its HOST:PORT, two agents still" \
	"$(python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["agents"]))' <<<"$J")" \
	"['${LONG:0:59}@127.0.0.1:9654', '${LONG:0:59}@127.0.0.1:9655']"
echo '{"host": "vm", "instance": "bloomtap"}' > "$TMP/vm.status"
printf 'vm@127.0.0.1:9654: vm@127.0.0.1:9655\n' > "$TMP/vms"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9654,127.0.0.1:9655 --topology "$TMP/vms" \
	"$TMP/two.pcap" 2>&1)
check "... a topology file names them (NAME ends at ': ')" \
	grep -q "^1 packet: path (source side first): vm@127.0.0.1:9654 (left) -> vm@127.0.0.1:9655$" <<<"$OUT"
eq "... the table's columns line up for long names" \
	"$(grep ' saw [0-9]* of ' <<<"$OUT" | awk '{print index($0, " saw ")}' | sort -u | wc -l)" 1

# ---- what agents send, printed safely; errors name the URL asked ----
printf '404 page not found\n' > "$TMP/404"	# Go's net/http's, as a proxy might answer
standin 9656 404 "$TMP/404"
printf '{"host": "evil\\u001b[2Jname"}' > "$TMP/evil.status"
standin 9657 200 "$TMP/h1.json" "$TMP/evil.status"
for port in 9656 9657; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
in_ns "$NS" "$BLOOMTAP" trace --agents e=127.0.0.1:9656,127.0.0.1:9657 "$TMP/two.pcap" >"$TMP/out" 2>"$TMP/err"
check "an error body's newline escaped, not printed raw" \
	grep -q '^bloomtap: warning: agent e: http://127.0.0.1:9656: HTTP 404 404 page not found\\x0a; walked through as unknown$' "$TMP/err"
check "... a name's escape sequence escaped (no ESC byte in the answer)" \
	bash -c '! grep -q $'"'"'\x1b'"'"' "$0" && grep -q "^evil\\\\x1b\[2Jname " "$0"' "$TMP/out"

# ---- credentials and certificates: one clear error each ----
standin 9658 401 /dev/null
wait_for "the stand-in asking for credentials listens" 30 listening "$NS" t 9658
expect_fail "HTTP 401 with no credentials sent: asks for them" \
	"HTTP 401: the agent asks for credentials (give --user" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9658 --hex "$HEX"
export BLOOMTAP_PASSWORD=secret$ID
expect_fail "--netrc missing: a start-up error naming it" "trace: --netrc $TMP/nosuch: No such file" \
	in_ns "$NS" "$BLOOMTAP" trace --agents "$TMP/agent.sock" --netrc "$TMP/nosuch" --hex "$HEX"
expect_fail "--cacert missing: one error naming it" "trace: --cacert $TMP/nosuch.crt: No such file" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9658 --cacert "$TMP/nosuch.crt" --user u --hex "$HEX"
echo "not a certificate" > "$TMP/junk.crt"
expect_fail "--cacert not PEM: one error naming it" "trace: --cacert $TMP/junk.crt: not a PEM certificate" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9658 --cacert "$TMP/junk.crt" --user u --hex "$HEX"
# an HTTPS stand-in whose certificate is for the name 'a' (its CN, no
# alternative names), answering 401
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=a -days 1 -keyout "$TMP/a.key" -out "$TMP/a.crt" 2>/dev/null
nsenter --net=/var/run/netns/"$NS" python3 -c '
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(401); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 9659), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain(sys.argv[1], sys.argv[2])
s.socket = c.wrap_socket(s.socket, server_side=True); s.serve_forever()' "$TMP/a.crt" "$TMP/a.key" &
PIDS+=($!)
wait_for "the HTTPS stand-in listens" 30 listening "$NS" t 9659
expect_fail "a wrong --tls-server-name blamed on the name, not the CA" \
	"https://127.0.0.1:9659: its certificate is for 'a', not 'nothere' (--tls-server-name)" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9659 --cacert "$TMP/a.crt" --tls-server-name nothere --user u --hex "$HEX"
printf 'machine other login u password p\n' > "$TMP/netrc"
chmod 600 "$TMP/netrc"
expect_fail "a netrc with no line for the host (no port): said so" "HTTP 401: no netrc line for a login u in $TMP/netrc" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9659 --cacert "$TMP/a.crt" --tls-server-name a --user u --netrc "$TMP/netrc" --hex "$HEX"
chmod 644 "$TMP/netrc"
expect_fail "... a netrc others can read: refused, chmod 600 said" \
	"trace: --netrc $TMP/netrc: group or others may read or write it (mode 644): chmod 600 it" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9659 --cacert "$TMP/a.crt" --netrc "$TMP/netrc" --hex "$HEX"
chmod 620 "$TMP/netrc"
expect_fail "... one its group may write: refused" "(mode 620): chmod 600 it" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9659 --cacert "$TMP/a.crt" --netrc "$TMP/netrc" --hex "$HEX"
chmod 600 "$TMP/netrc"
chown nobody "$TMP/netrc"
expect_fail "... one another user owns (mode 600): refused" "trace: --netrc $TMP/netrc: owned by uid $(id -u nobody), not $(id -u) who runs trace" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9659 --cacert "$TMP/a.crt" --netrc "$TMP/netrc" --hex "$HEX"
unset BLOOMTAP_PASSWORD

# ---- a topology by the agents' own names, one of them down ----
# unnamed agents take their names from /api/v1/status; the one down
# (nothing listens on 9694) keeps its address, and the file names it r1
for n in h1 r2 h2; do echo "{\"host\": \"$n\", \"instance\": \"bloomtap\"}" > "$TMP/$n.status"; done
standin 9691 200 "$TMP/h1.json" "$TMP/h1.status"; standin 9692 200 "$TMP/r.json" "$TMP/r2.status"
standin 9693 200 "$TMP/h2.json" "$TMP/h2.status"
for port in 9691 9692 9693; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
printf 'h1: r1\nr1: r2\nr2: h2\n' > "$TMP/topo-h"
DOWN1=127.0.0.1:9691,127.0.0.1:9694,127.0.0.1:9692,127.0.0.1:9693
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$DOWN1" --topology "$TMP/topo-h" "$TMP/two.pcap" 2>"$TMP/err"); RC=$?
eq "a topology name of a down, unnamed agent: a trace all the same (exit $RC)" "$RC" 0
check "... r1 walked through as unknown" \
	grep -q "^1 packet: path (source side first): h1 (left) -> r1? -> r2 -> h2$" <<<"$OUT"
eq "... one warning naming r1, and why it could not be matched" \
	"$(grep -c "^bloomtap: warning: --topology $TMP/topo-h: r1 matches no agent that answered: walked through as unknown; 1 agent did not answer, so could not be asked its name" "$TMP/err")" 1
check "... the down agent in the table by its address, and counted alone" \
	grep -q "^partial answer: 1 of 4 agents did not answer: 127.0.0.1:9694$" <<<"$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$DOWN1" --topology "$TMP/topo-h" "$TMP/two.pcap" 2>/dev/null)
eq "... -j: r1 unmatched and unknown on the path, 4 agents" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(d["topology_unmatched"], sorted(d["agents"]), [p["unknown"] for p in d["paths"]][0])' <<<"$J")" \
	"['r1'] ['127.0.0.1:9694', 'h1', 'h2', 'r2'] ['r1']"
printf 'h1: r9\nr9: r2\nr2: h2\n' > "$TMP/topo-typo"
expect_fail "every agent answered: a name none has is an error that gives theirs" \
	"topo-typo:1: 'r9' is not one of the agents (they are named: h1, r2, h2)" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9691,127.0.0.1:9692,127.0.0.1:9693 \
	--topology "$TMP/topo-typo" "$TMP/two.pcap"
expect_fail "a down agent named NAME=: a name none has is still an error" \
	"topo-typo:1: 'r9' is not one of the agents" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9691,r1=127.0.0.1:9694,127.0.0.1:9692,127.0.0.1:9693 \
	--topology "$TMP/topo-typo" "$TMP/two.pcap"

# ---- no topology: a step's agents by name; the one that dropped it last ----
# three packets h1 (left) -> r1, r2, h2, their windows overlapping; 1 and
# 2 with the three in different orders of their windows' starts; 3
# dropped at h2 (nft)
mkpcap "$TMP/three.pcap" ip1 ip2 ip3
# step AGENT DIR START1 START2 START3 [REASON]: its answer, a window of
# 1 s from each start; REASON: packet 3 dropped there
step() {
	python3 -c '
import json, sys
a, d, s = sys.argv[1], sys.argv[2], sys.argv[3:6]
r = sys.argv[6] if len(sys.argv) > 6 else None
def w(t): return {"start": "2026-12-01T10:00:0%sZ" % t, "end": "2026-12-01T10:00:0%sZ" % ("%.3f" % (float(t) + 1)), "direction": d}
ans = [{"packet": i + 1, "seen": True, "windows": [w(t)]} for i, t in enumerate(s)]
if r: ans[2]["drops"] = [{"reason": r}]
open(a, "w").write(json.dumps(ans))' "$@"
}
step "$TMP/s-h1.json" egress 5.500 5.500 5.500
step "$TMP/s-r1.json" ingress 5.100 5.400 5.300
step "$TMP/s-r2.json" ingress 5.300 5.100 5.100
step "$TMP/s-h2.json" ingress 5.200 5.300 5.200 nft
standin 9695 200 "$TMP/s-h1.json"; standin 9696 200 "$TMP/s-r1.json"
standin 9697 200 "$TMP/s-r2.json"; standin 9698 200 "$TMP/s-h2.json"
for port in 9695 9696 9697 9698; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
STEPS=h1=127.0.0.1:9695,r1=127.0.0.1:9696,r2=127.0.0.1:9697,h2=127.0.0.1:9698
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$STEPS" "$TMP/three.pcap" 2>&1)
check "no topology: one set of agents in another order of times is one group, by name" \
	grep -q "^2 packets: path (source side first): h1 (left) -> {h2, r1, r2}$" <<<"$OUT"
check "... the agent that dropped it last, outside the braces" \
	grep -q "^1 packet: path (source side first): h1 (left) -> {r1, r2} -> h2  dropped at h2 (reason nft)$" <<<"$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$STEPS" "$TMP/three.pcap" 2>/dev/null)
eq "... -j: the steps so" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(sorted((p["packets"], p["steps"]) for p in d["paths"]))' <<<"$J")" \
	"[([1, 2], [['h1'], ['h2', 'r1', 'r2']]), ([3], [['h1'], ['r1', 'r2'], ['h2']])]"

# ---- an agent still answering this client's earlier trace (429) ----
printf '{"error":"a trace of this client'"'"'s is under way: one at a time"}' > "$TMP/busy"
standin 9699 429 "$TMP/busy"
wait_for "the busy stand-in listens" 30 listening "$NS" t 9699
expect_fail "429, a trace under way: the error says to retry" \
	"HTTP 429: it is still answering an earlier trace of this client: retry in a few seconds (or give --timeout longer than its work)" \
	in_ns "$NS" "$BLOOMTAP" trace --agents b=127.0.0.1:9699 --hex "$HEX"

# ---- one packet: "of 1 packet"; a name that does not resolve ----
agent 9690 1
wait_for "the stand-in agent on 9690 listens" 30 listening "$NS" t 9690
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents v=127.0.0.1:9690 --hex "$HEX" 2>&1)
check "saw 1 of 1 packet, singular" grep -Eq "^v +127.0.0.1:9690 +saw 1 of 1 packet$" <<<"$OUT"
expect_fail "--agents-from-dns, a name that does not resolve: said so, and which" \
	"--agents-from-dns nosuch-$ID.invalid:9477: 'nosuch-$ID.invalid' did not resolve" \
	in_ns "$NS" "$BLOOMTAP" trace --agents-from-dns "nosuch-$ID.invalid:9477" --hex "$HEX"

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
