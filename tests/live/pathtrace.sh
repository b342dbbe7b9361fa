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
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/topo" --from v --hex "$HEX" 2>&1); RC=$?
eq "two paths: exit 0" "$RC" 0
check "packets 1-3 came through b" grep -q "^3 packets: path (source side first): d -> b -> v$" <<<"$OUT"
check "packets 4-5 came through c" grep -q "^2 packets: path (source side first): d -> c -> v$" <<<"$OUT"
check "s saw packet 5 off its path: a false positive" grep -q "^s saw 1 packet off their path" <<<"$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$LIST" --topology "$TMP/topo" --from v --hex "$HEX" 2>/dev/null)
eq "-j: paths with their packets" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(sorted((p["path"], p["packets"]) for p in d["paths"]), d["false_positives"])' <<<"$J")" \
	"[(['d', 'b', 'v'], [1, 2, 3]), (['d', 'c', 'v'], [4, 5])] [{'agent': 's', 'packets': 1}]"

# b does not answer: walked through, unknown; d still on both paths
kill "${PIDS[1]}"; wait "${PIDS[1]}" 2>/dev/null
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/topo" --from v --hex "$HEX" 2>&1); RC=$?
eq "b down: exit 0" "$RC" 0
check "b down: packets 1-3 through b, unknown" grep -q "^3 packets: path (source side first): d -> b? -> v$" <<<"$OUT"
check "b down: named" grep -q "^b .*no answer: unknown" <<<"$OUT"
check "b down: s, behind b, is not walked to (it did not see packets 1-3)" \
	bash -c "! grep -q 's? \|-> s ' <<<\"\$0\"" "$OUT"

# the topology file: a hub linked to every agent many times over, and to
# itself; a line naming an unknown agent; an unknown agent before ':'
{ for i in $(seq 300); do echo 'v: b c d s v v b'; done; printf 'd:'; for i in $(seq 300); do printf ' v b c s'; done; echo; } > "$TMP/hub"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$LIST" --topology "$TMP/hub" --from v --hex "$HEX" 2>&1); RC=$?
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
	in_ns "$NS" "$BLOOMTAP" trace --agents x=127.0.0.1:9610,y=http://127.0.0.1:9610 --user u --hex "$HEX"
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
# 30 agents (one responder), each answer 4 MiB: 120 MiB if all were held
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
http.server.ThreadingHTTPServer(("127.0.0.1", 9612), H).serve_forever()' &
PIDS+=($!)
wait_for "the responder of 4 MiB answers listens" 30 listening "$NS" t 9612
BIG=$(for i in $(seq 30); do printf 'b%d=127.0.0.1:9612,' "$i"; done)
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
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "v=127.0.0.1:9601$DOWN" --hex "$HEX" 2>"$TMP/err")
eq "7 of 8 down: 5 named on stderr" "$(grep -c '^bloomtap: warning: agent d[1-5]: ' "$TMP/err")" 5
check "... and the other 2 counted" grep -q "and 2 more agents did not answer" "$TMP/err"
check "... the answer names all 7" grep -q "^partial answer: 7 of 8 agents did not answer: d1 d2 d3 d4 d5 d6 d7$" <<<"$OUT"

# ---- the order of one path h1 -> r -> h2, each agent's windows its own ----
# canned PORT CODE BODYFILE [STATUSFILE]: answers the trace with CODE and
# BODYFILE's bytes, /api/v1/status with STATUSFILE's (none: 404)
canned() {
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
canned 9631 200 "$TMP/h1.json"; canned 9632 200 "$TMP/r.json"; canned 9633 200 "$TMP/h2.json"
for port in 9631 9632 9633; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
HOPS=h1=127.0.0.1:9631,r=127.0.0.1:9632,h2=127.0.0.1:9633
HEX2=$HEX,$HEX
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$HOPS" --hex "$HEX2" 2>&1)
check "no topology: the sender first, the overlapping windows' order not claimed" \
	grep -q "^1 packet: path (source side first): h1 (left) -> {h2, r}$" <<<"$OUT"
check "... no egress record: one step of unknown order, never a confident order" \
	grep -q "^1 packet: path (source side first): {h2, r, h1}$" <<<"$OUT"
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents "$HOPS" --hex "$HEX2" 2>/dev/null)
eq "-j: the steps the evidence orders" "$(python3 -c '
import json,sys; d=json.load(sys.stdin)
print(d["order"], [(p["steps"], p["walked_from"]) for p in d["paths"]])' <<<"$J")" \
	"inferred [([['h1'], ['h2', 'r']], 'inferred'), ([['h2', 'r', 'h1']], 'inferred')]"
printf 'h1: r\nr: h2\n' > "$TMP/hops"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents "$HOPS" --topology "$TMP/hops" --hex "$HEX2" 2>&1)
check "--topology, no --from: walked from where the packet left, sender first" \
	grep -q "^1 packet: path (source side first): h1 (left) -> r -> h2$" <<<"$OUT"
check "... no agent says it left: walked from the first agent, and said so" \
	grep -q "^walked from h1, the first agent" <<<"$OUT"

# ---- two agents that give one hostname ----
echo '{"host": "vm", "instance": "bloomtap"}' > "$TMP/vm.status"
canned 9634 200 "$TMP/h1.json" "$TMP/vm.status"; canned 9635 200 "$TMP/r.json" "$TMP/vm.status"
for port in 9634 9635; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
J=$(in_ns "$NS" "$BLOOMTAP" -j trace --agents 127.0.0.1:9635,127.0.0.1:9634 --hex "$HEX2" 2>/dev/null)
eq "one hostname: each gets its HOST:PORT, none bare" \
	"$(python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["agents"]))' <<<"$J")" \
	"['vm@127.0.0.1:9634', 'vm@127.0.0.1:9635']"
printf 'vm@127.0.0.1:9634: vm@127.0.0.1:9635\n' > "$TMP/vms"
OUT=$(in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9634,127.0.0.1:9635 --topology "$TMP/vms" \
	--hex "$HEX2" 2>&1)
check "... a topology file names them (NAME ends at ': ')" \
	grep -q "^1 packet: path (source side first): vm@127.0.0.1:9634 (left) -> vm@127.0.0.1:9635$" <<<"$OUT"
eq "... the table's columns line up for long names" \
	"$(grep ' saw [0-9]* of ' <<<"$OUT" | awk '{print index($0, " saw ")}' | sort -u | wc -l)" 1

# ---- what agents send, printed safely; errors name the URL asked ----
printf '404 page not found\n' > "$TMP/404"	# Go's net/http's, as a proxy might answer
canned 9636 404 "$TMP/404"
printf '{"host": "evil\\u001b[2Jname"}' > "$TMP/evil.status"
canned 9637 200 "$TMP/h1.json" "$TMP/evil.status"
for port in 9636 9637; do wait_for "the stand-in on $port listens" 30 listening "$NS" t $port; done
in_ns "$NS" "$BLOOMTAP" trace --agents e=127.0.0.1:9636,127.0.0.1:9637 --hex "$HEX2" >"$TMP/out" 2>"$TMP/err"
check "an error body's newline escaped, not printed raw" \
	grep -q '^bloomtap: warning: agent e: http://127.0.0.1:9636: HTTP 404 404 page not found\\x0a; walked through as unknown$' "$TMP/err"
check "... a name's escape sequence escaped (no ESC byte in the answer)" \
	bash -c '! grep -q $'"'"'\x1b'"'"' "$0" && grep -q "^evil\\\\x1b\[2Jname " "$0"' "$TMP/out"

# ---- credentials and certificates: one clear error each ----
canned 9638 401 /dev/null
wait_for "the stand-in asking for credentials listens" 30 listening "$NS" t 9638
expect_fail "HTTP 401 with no credentials sent: asks for them" \
	"HTTP 401: the agent asks for credentials (give --user" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9638 --hex "$HEX"
export BLOOMTAP_PASSWORD=secret$ID
expect_fail "--netrc missing: a start-up error naming it" "trace: --netrc $TMP/nosuch: No such file" \
	in_ns "$NS" "$BLOOMTAP" trace --agents "$TMP/agent.sock" --netrc "$TMP/nosuch" --hex "$HEX"
expect_fail "--cacert missing: one error naming it" "trace: --cacert $TMP/nosuch.crt: No such file" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9638 --cacert "$TMP/nosuch.crt" --user u --hex "$HEX"
echo "not a certificate" > "$TMP/junk.crt"
expect_fail "--cacert not PEM: one error naming it" "trace: --cacert $TMP/junk.crt: not a PEM certificate" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9638 --cacert "$TMP/junk.crt" --user u --hex "$HEX"
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
s = http.server.HTTPServer(("127.0.0.1", 9639), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain(sys.argv[1], sys.argv[2])
s.socket = c.wrap_socket(s.socket, server_side=True); s.serve_forever()' "$TMP/a.crt" "$TMP/a.key" &
PIDS+=($!)
wait_for "the HTTPS stand-in listens" 30 listening "$NS" t 9639
expect_fail "a wrong --tls-server-name blamed on the name, not the CA" \
	"https://127.0.0.1:9639: its certificate is for 'a', not 'nothere' (--tls-server-name)" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9639 --cacert "$TMP/a.crt" --tls-server-name nothere --user u --hex "$HEX"
printf 'machine other login u password p\n' > "$TMP/netrc"
chmod 644 "$TMP/netrc"
expect_fail "a netrc with no line for the host (no port): said so" "HTTP 401: no netrc line for a login u in $TMP/netrc" \
	in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9639 --cacert "$TMP/a.crt" --tls-server-name a --user u --netrc "$TMP/netrc" --hex "$HEX"
in_ns "$NS" "$BLOOMTAP" trace --agents 127.0.0.1:9639 --cacert "$TMP/a.crt" --tls-server-name a \
	--netrc "$TMP/netrc" --hex "$HEX" >/dev/null 2>"$TMP/err"
check "... a netrc others can read: warned" grep -q "warning: --netrc $TMP/netrc can be read by others (mode 644)" "$TMP/err"
unset BLOOMTAP_PASSWORD

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
