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

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
