#!/usr/bin/env bash
# trace across a fleet: N real agents (FLEET_N, default 50), each in its
# own namespace on one bridge (198.18.0.0/16 of 198.18.0.0/15) with a TLS
# web config and a user (the CA is the test's own), a real Prometheus
# scraping them over HTTPS, and trace --agents-from-prometheus finding
# them all, in parallel. Each agent is small: a ring of 16 windows of
# 64 Kibit (8 KiB each), sketches of 2 x 1024, 1,024 flow slots: about a
# MiB of maps, so 50 fit beside the other suites.
# The packet "crosses" agents r10..r14: sent from the bridge's side to a
# MAC no port has, it is flooded to exactly the ports whose flooding is
# on (theirs); the topology file is the chain r01 - r02 - ... - rN.
source "$(dirname "$0")/../lib/lib.sh"
need_root "fleet"

ID=$$
N=${FLEET_N:-50}	# at least 20: the path is r10..r14
# stopped besides r12, off the path: r30 and r40 of 50 (r06, r16 of 20)
S2=$((N * 4 / 5 - 10)) S3=$((N * 4 / 5))
R2=$(printf 'r%02d' $S2) R3=$(printf 'r%02d' $S3)
HUB=bt-fh-$ID
TMP=$(mktemp -d)
PIDS=()
PROM=
ifa() { echo "f${ID}a$1"; }	# agent i's interface (its instance's name: unique)
ifp() { echo "f${ID}p$1"; }	# its peer on the bridge
cleanup() {
	local p i
	for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "$PROM" ] && kill "$PROM" 2>/dev/null && wait "$PROM" 2>/dev/null
	for i in $(seq "$N"); do
		in_ns "bt-f$i-$ID" "$BLOOMTAP" detach "$(ifa "$i")" >/dev/null 2>&1
	done
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# ---- the bridge and the agents' namespaces ----
netns_add "$HUB" || { fail "namespace"; summary; exit 1; }
ip -n "$HUB" link add br0 type bridge
ip -n "$HUB" addr add 198.18.0.1/16 dev br0
ip -n "$HUB" link set br0 up
for i in $(seq "$N"); do
	ns=bt-f$i-$ID
	netns_add "$ns" || { fail "namespace $ns"; summary; exit 1; }
	ip link add "$(ifa "$i")" netns "$ns" type veth peer name "$(ifp "$i")" netns "$HUB"
	ip -n "$ns" addr add "198.18.1.$i/16" dev "$(ifa "$i")"
	ip -n "$ns" link set "$(ifa "$i")" up
	ip -n "$HUB" link set "$(ifp "$i")" master br0 up
	# unknown unicast reaches the path's ports alone
	[ "$i" -ge 10 ] && [ "$i" -le 14 ] || bridge -n "$HUB" link set dev "$(ifp "$i")" flood off
done

# ---- the CA, one certificate for every agent's address, a user ----
SANS=DNS:bloomtap-fleet,IP:198.18.0.1,$(for i in $(seq "$N"); do printf 'IP:198.18.1.%d,' "$i"; done)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=fleet-ca -keyout "$TMP/ca.key" -out "$TMP/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=agent \
	-keyout "$TMP/server.key" -out "$TMP/server.csr" 2>/dev/null
printf 'subjectAltName=%s\n' "${SANS%,}" > "$TMP/ext"
openssl x509 -req -in "$TMP/server.csr" -CA "$TMP/ca.crt" -CAkey "$TMP/ca.key" \
	-CAcreateserial -days 2 -extfile "$TMP/ext" -out "$TMP/server.crt" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=other-ca -keyout "$TMP/other.key" -out "$TMP/other.crt" 2>/dev/null
# a client certificate of the same CA, for the stand-in that requires one
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=trace-client \
	-keyout "$TMP/client.key" -out "$TMP/client.csr" 2>/dev/null
openssl x509 -req -in "$TMP/client.csr" -CA "$TMP/ca.crt" -CAkey "$TMP/ca.key" \
	-CAcreateserial -days 2 -out "$TMP/client.crt" 2>/dev/null
PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
# cost 4: 100 requests' bcrypts stay cheap on a shared machine
HASH=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 4)))' "$PASSWORD")
cat > "$TMP/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prom: '$HASH'
YML

# ---- the agents: each names itself (its own UTS namespace) rNN ----
for i in $(seq "$N"); do
	name=$(printf 'r%02d' "$i")
	mkdir -p "$TMP/a$i"
	unshare --uts sh -c 'hostname "$1"; shift; exec nsenter --net=/var/run/netns/"$@"' sh \
		"$name" "bt-f$i-$ID" "$BLOOMTAP" run --listen "198.18.1.$i:9477" \
		--web-config "$TMP/web.yml" --archive "$TMP/a$i" --detach-on-exit \
		--windows 16 --window-bits 65536 --width 1024 --depth 2 --flow-memory 1024 \
		--window 0.5 --interval 5 "$(ifa "$i")" > "$TMP/a$i/log" 2>&1 &
	PIDS+=($!)
done
up() { in_ns "$HUB" curl -sf -m 2 --cacert "$TMP/ca.crt" "https://198.18.1.$1:9477/healthz"; }
for i in $(seq "$N"); do
	wait_for "agent $i answers /healthz over TLS" 600 up "$i" || { cat "$TMP/a$i/log"; summary; exit 1; }
done
ok "$N agents answer over TLS"

# ---- Prometheus scrapes them over HTTPS, with the user ----
mkdir -p "$TMP/prom"
{
	printf 'global: { scrape_interval: 1s }\nscrape_configs:\n'
	printf '  - job_name: bloomtap\n    scheme: https\n'
	printf '    tls_config: { ca_file: %s }\n' "$TMP/ca.crt"
	printf '    basic_auth: { username: prom, password: "%s" }\n' "$PASSWORD"
	printf '    static_configs:\n'
	for i in $(seq "$N"); do
		# an instance label unlike the name the agent gives itself (rNN):
		# a name taken from the list, not from /api/v1/status, shows
		printf '      - { targets: ["198.18.1.%d:9477"], labels: { instance: prom-r%02d } }\n' "$i" "$i"
	done
	printf '  - job_name: other\n    static_configs: [ { targets: ["127.0.0.1:1"] } ]\n'
} > "$TMP/prom/prom.yml"
nsenter --net=/var/run/netns/"$HUB" prometheus --config.file="$TMP/prom/prom.yml" \
	--storage.tsdb.path="$TMP/prom/data" --web.listen-address=127.0.0.1:9090 \
	> "$TMP/prom/log" 2>&1 &
PROM=$!
all_up() {
	[ "$(in_ns "$HUB" curl -s -m 2 'http://127.0.0.1:9090/api/v1/targets?state=active' |
		python3 -c 'import json,sys; print(sum(t["health"] == "up" and t["labels"]["job"] == "bloomtap"
			for t in json.load(sys.stdin)["data"]["activeTargets"]))')" = "$N" ]
}
wait_for "Prometheus scrapes all $N agents over HTTPS" 120 all_up && ok "Prometheus scrapes all $N"

# ---- a packet that crossed r10..r14, and one never sent ----
# UDP 198.18.0.1 -> 198.18.2.1, to a MAC no port has (flooded)
PKT=$(python3 -c '
import struct, sys
def ck(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); return ~(s + (s >> 16)) & 0xffff
def pkt(tag):
    pay = b"fleet-" + tag.encode()
    udp = struct.pack("!HHHH", 40000, 9, 8 + len(pay), 0) + pay
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 7777, 0, 64, 17, 0,
                     bytes([198, 18, 0, 1]), bytes([198, 18, 2, 1]))
    ip = ip[:10] + struct.pack("!H", ck(ip)) + ip[12:]
    return ip + udp
print(pkt(sys.argv[1]).hex(), pkt(sys.argv[2]).hex())' "$ID" "never$ID")
SENT=${PKT% *}
NEVER=${PKT#* }
in_ns "$HUB" python3 -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("br0", 0))
s.send(bytes.fromhex("020000000099" + sys.argv[2].replace(":", "") + "0800" + sys.argv[1]))' \
	"$SENT" "$(ip -n "$HUB" -br link show br0 | awk '{print $3}')"
{ for i in $(seq "$N"); do printf 'r%02d: r%02d\n' "$i" $((i + 1)); done | head -n $((N - 1)); } > "$TMP/chain"
export BLOOMTAP_PASSWORD=$PASSWORD
PROMURL="http://127.0.0.1:9090?job=bloomtap"
fleet() { in_ns "$HUB" "$BLOOMTAP" "$@"; }
tr_prom() { fleet -j trace --agents-from-prometheus "$PROMURL" --cacert "$TMP/ca.crt" --user prom "$@"; }
path_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(" ".join(p["path"]) for p in d["paths"]), "| unknown", " ".join(d["unanswered"]), "| agents", len(d["agents"]))'; }
walked() { tr_prom --topology "$TMP/chain" --from r14 --hex "$SENT" 2>/dev/null | path_of | grep -q "^r10 r11 r12 r13 r14 | unknown  | agents $N$"; }
wait_for "the walk finds the packet's path" ${FLEET_WAIT:-60} walked
T0=$(date +%s%N)
OUT=$(tr_prom --topology "$TMP/chain" --from r14 --hex "$SENT" 2>"$TMP/err"); RC=$?
T1=$(date +%s%N)
[ "$RC" = 0 ] || { head -5 "$TMP/err"; head -c 600 <<<"$OUT"; echo; }
eq "found by Prometheus, asked over HTTPS: the true path, all $N answered (exit $RC)" \
	"$(path_of <<<"$OUT")" "r10 r11 r12 r13 r14 | unknown  | agents $N"
eq "named by their own /api/v1/status (rNN), not by Prometheus's instance labels (prom-rNN)" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["agents"])))' <<<"$OUT")" \
	"$(for i in $(seq "$N"); do printf 'r%02d ' "$i"; done | sed 's/ $//')"
OUT=$(fleet trace --agents-from-prometheus "$PROMURL" --cacert "$TMP/ca.crt" --user prom --hex "$SENT" 2>&1)
check "no topology: the order inferred, and said so" grep -q "^order inferred (no --topology)" <<<"$OUT"
check "no topology: the 5 that saw it on its path" \
	grep -Eq "^1 packet: path \(source side first\): ([{]?r1[0-4][}]?( -> |, )?){5}$" <<<"$OUT"
OUT=$(tr_prom --topology "$TMP/chain" --from r14 --hex "$NEVER" 2>"$TMP/err"); RC=$?
eq "a packet never sent: no path, exit 1" "$RC:$(json_get '["no_path"]' <<<"$OUT")" "1:1"
eq "... seen by none of the $N" "$(python3 -c 'import json,sys; print(sum(a["packets_seen"] for a in json.load(sys.stdin)["agents"].values()))' <<<"$OUT")" 0

# ---- fan-out: 50 agents against one ----
T2=$(date +%s%N)
fleet -j trace --agents r01=198.18.1.1:9477 --cacert "$TMP/ca.crt" --user prom --hex "$SENT" >/dev/null 2>&1
T3=$(date +%s%N)
echo "  measured: trace across $N agents $(( (T1 - T0) / 1000000 )) ms, across one $(( (T3 - T2) / 1000000 )) ms"

# ---- an agents file, names from the agents ----
printf '# three\n198.18.1.10:9477\n198.18.1.11:9477  # ok\n\n198.18.1.12:9477\n' > "$TMP/agents"
eq "--agents-file: each names itself" "$(fleet -j trace --agents-file "$TMP/agents" --cacert "$TMP/ca.crt" \
	--user prom --hex "$SENT" 2>/dev/null | python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["agents"]))')" \
	"['r10', 'r11', 'r12']"

# ---- an agent listed twice is asked once ----
# r10 typed (t10=), in the file and in Prometheus's answer (down there);
# r11 twice in the file and in the answer: the agent takes one trace of a
# client at a time, a second copy would get HTTP 429 and be called down.
# fakeprom ADDR PORT DIR [USER:PW]: a stand-in Prometheus answering
# /NAME/api/v1/targets with the file DIR/NAME (with USER:PW, over HTTPS
# with the agents' certificate, asking basic auth of those)
fakeprom() {
	nsenter --net=/var/run/netns/"$HUB" timeout 600 python3 -c '
import base64, http.server, ssl, sys
addr, port, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
auth = sys.argv[4] if len(sys.argv) > 4 else ""
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        name = self.path.split("/")[1]
        if auth and self.headers.get("Authorization") != "Basic " + base64.b64encode(auth.encode()).decode():
            body, code = b"Unauthorized\n", 401
        else:
            body, code = open(d + "/" + name, "rb").read(), 200
        self.send_response(code); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer((addr, port), H)
if auth:
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain(sys.argv[5], sys.argv[6])
    s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()' "$@" >/dev/null 2>&1 &
	PIDS+=($!)
}
# heard SOCKET FILE: a unix socket's listener that keeps each request's
# head in FILE (where a forged Prometheus answer would send credentials)
timeout 600 python3 -c '
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f: f.write(self.requestline + "\n" + str(self.headers))
        self.send_response(200); self.send_header("Content-Length", "15"); self.end_headers()
        self.wfile.write(b"{\"host\": \"ux\"}\n")
    do_POST = do_GET
    def address_string(self): return "local"
    def log_message(self, *a): pass
class U(socketserver.UnixStreamServer):
    def get_request(self): c, _ = self.socket.accept(); return c, ("local", 0)
U(sys.argv[1], H).serve_forever()' "$TMP/prom.sock" "$TMP/heard" >/dev/null 2>&1 &
PIDS+=($!)
mkdir -p "$TMP/fp"
# target URL [JOB [INSTANCE [HEALTH]]]: one of activeTargets (JOB "-": no labels)
target() {
	python3 -c 'import json, sys
a = sys.argv[1:] + [""] * 4
t = {"scrapeUrl": a[0], "health": a[3] or "up", "lastError": ""}
if a[1] != "-":
    t["labels"] = {"job": a[1] or "bloomtap"}
    if a[2]: t["labels"]["instance"] = a[2]
print(json.dumps(t) + ",")' "$@"
}
targets() { printf '{"status": "success", "data": {"activeTargets": [%s]}}' "$(cat)" | sed 's/,]/]/' > "$TMP/fp/$1"; }
{ target https://198.18.1.10:9477/metrics "" p10 down; target https://198.18.1.11:9477/metrics "" p11; } | targets dup
# what a forged answer may hold: a unix socket (typed as a job's, and as
# NAME=PATH), a target without labels (no job), two instance labels alike
# and one like a typed name (none of them answers), an address with an
# escape sequence and no instance label
{ target "$TMP/prom.sock"; target "u=$TMP/prom.sock"; target https://198.18.1.20:9477/metrics -
  target https://198.18.1.3:1/metrics "" same; target https://198.18.1.4:1/metrics "" same
  target https://198.18.1.2:1/metrics "" t10
  target "$(printf 'https://198.18.1.5\033[2J:1/metrics')"; } | targets forged
fakeprom 127.0.0.1 9091 "$TMP/fp"
fakeprom 198.18.0.1 9092 "$TMP/fp" "pu:pp$ID" "$TMP/server.crt" "$TMP/server.key"
wait_for "the stand-in Prometheus listens" 60 listening "$HUB" t 9091
wait_for "the stand-in Prometheus over HTTPS listens" 60 listening "$HUB" t 9092
wait_for "the unix socket's listener listens" 60 test -S "$TMP/prom.sock"
printf '198.18.1.11:9477\n198.18.1.10:9477\n198.18.1.11:9477\n' > "$TMP/agents-dup"
OUT=$(fleet -j trace --agents t10=198.18.1.10:9477 --agents-file "$TMP/agents-dup" \
	--agents-from-prometheus "http://127.0.0.1:9091/dup?job=bloomtap" --cacert "$TMP/ca.crt" \
	--user prom --hex "$SENT" 2>"$TMP/err"); RC=$?
eq "one agent typed, in a file and in Prometheus's answer: asked once, its typed name, Prometheus's health (exit $RC)" \
	"$RC $(python3 -c 'import json,sys; d = json.load(sys.stdin)
print(d["partial"], sorted((n, a["address"], a["packets_seen"], a.get("prometheus_health")) for n, a in d["agents"].items()))' <<<"$OUT")" \
	"0 False [('r11', '198.18.1.11:9477', 1, 'up'), ('t10', '198.18.1.10:9477', 1, 'down')]"

# ---- a forged Prometheus answer: no credentials to a socket it names ----
OUT=$(fleet -j trace --agents t10=198.18.1.10:9477 --agents-from-prometheus \
	"http://127.0.0.1:9091/forged?job=bloomtap" --cacert "$TMP/ca.crt" --user prom --hex "$SENT" 2>"$TMP/err")
check "a unix socket named by Prometheus: not asked, the credentials not sent" \
	bash -c '! grep -qi "^authorization" "$0" 2>/dev/null' "$TMP/heard"
check "... the targets refused named once on stderr" grep -q \
	"warning: --agents-from-prometheus http://127.0.0.1:9091/forged?job=bloomtap: 2 targets not asked, their scrape URL not http:// or https://: $TMP/prom.sock, u=$TMP/prom.sock$" "$TMP/err"
eq "a target without a job label: not of the job; clashing names made unique, each its HOST:PORT; an address made printable" \
	"$(python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["agents"]))' <<<"$OUT")" \
	"['https://198.18.1.5\\\\x1b[2J:1', 'same@198.18.1.3:1', 'same@198.18.1.4:1', 't10', 't10@198.18.1.2:1']"
check "... no escape byte on stderr" bash -c '! grep -q $'"'"'\x1b'"'"' "$0"' "$TMP/err"

# ---- Prometheus's URL with credentials: never printed; a netrc line for it ----
expect_fail "a down Prometheus, its URL with USER:PW@: one error, the URL without them" \
	"--agents-from-prometheus http://127.0.0.1:1?job=bloomtap: " \
	fleet trace --agents-from-prometheus "http://pu:pw$ID@127.0.0.1:1?job=bloomtap" --cacert "$TMP/ca.crt" --user prom --hex "$SENT"
fleet trace --agents-from-prometheus "http://pu:pw$ID@127.0.0.1:1?job=bloomtap" --cacert "$TMP/ca.crt" \
	--user prom --hex "$SENT" >"$TMP/out" 2>&1
check "... the password nowhere in what trace says" bash -c '! grep -q "pw$1" "$0"' "$TMP/out" "$ID"
printf 'machine 198.18.0.1 login pu password pp%s\ndefault login prom password %s\n' "$ID" "$PASSWORD" > "$TMP/netrc3"
chmod 600 "$TMP/netrc3"
eq "a Prometheus asking for credentials: its host's --netrc line, the agents' the default" \
	"$(env -u BLOOMTAP_PASSWORD nsenter --net=/var/run/netns/"$HUB" "$BLOOMTAP" -j trace \
	--agents-from-prometheus "https://198.18.0.1:9092/dup?job=bloomtap" --cacert "$TMP/ca.crt" \
	--netrc "$TMP/netrc3" --hex "$SENT" 2>"$TMP/err" | python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["agents"]))')" \
	"['r10', 'r11']"

# ---- three agents stop answering (SIGSTOP: connections open, no answer) ----
# Unanswered, an agent keeps the name of Prometheus's list (prom-rNN): the
# topology names the three so
for i in 12 $S2 $S3; do kill -STOP "${PIDS[$((i - 1))]}"; done
# a stopped agent costs the whole --agent-timeout; one that runs must
# never miss it: 3 s was missed by a running agent (r06) at load 6, the
# 6.1 guest beside the suite
AGENT_MS=15000 TOTAL_MS=40000
STOPPED=$(printf "prom-%s\n" r12 $R2 $R3 | sort | tr "\n" " " | sed "s/ $//")
sed -E "s/\\b(r12|$R2|$R3)\\b/prom-\\1/g" "$TMP/chain" > "$TMP/chain3"
downs() {
	[ "$(in_ns "$HUB" curl -s -m 2 'http://127.0.0.1:9090/api/v1/targets?state=active' |
		python3 -c 'import json,sys; print(sorted(t["labels"]["instance"]
			for t in json.load(sys.stdin)["data"]["activeTargets"] if t["health"] == "down" and t["labels"]["job"] == "bloomtap"))')" = \
		"$(python3 -c 'import sys; print(sorted(sys.argv[1].split()))' "$STOPPED")" ]
}
wait_for "Prometheus finds the 3 stopped down" 120 downs
T4=$(date +%s%N)
OUT=$(tr_prom --topology "$TMP/chain3" --from r14 --agent-timeout $AGENT_MS --timeout $TOTAL_MS --hex "$SENT" 2>"$TMP/err"); RC=$?
echo "  measured: 3 of $N stopped, --agent-timeout $AGENT_MS: answered in $(( ($(date +%s%N) - T4) / 1000000 )) ms"
eq "3 stopped: the walk goes through prom-r12 as unknown, the answer names the 3 (exit $RC)" \
	"$(path_of <<<"$OUT")" "r10 r11 prom-r12 r13 r14 | unknown $STOPPED | agents $N"
eq "... a partial answer" "$(json_get '["partial"]' <<<"$OUT")" True
eq "... each of the 3 with Prometheus's view of it: down" "$(python3 -c '
import json, sys; a = json.load(sys.stdin)["agents"]
print(" ".join(a[n].get("prometheus_health", "-") for n in sys.argv[1].split()), a["r10"].get("prometheus_health"))' "$STOPPED" <<<"$OUT")" \
	"down down down up"
OUT=$(fleet trace --agents-from-prometheus "$PROMURL" --cacert "$TMP/ca.crt" --user prom \
	--topology "$TMP/chain3" --from r14 --agent-timeout $AGENT_MS --timeout $TOTAL_MS --hex "$SENT" \
	2>"$TMP/err")
check "... said in text" grep -q "^partial answer: 3 of $N agents did not answer: $STOPPED$" <<<"$OUT" ||
	grep -n "partial\|warning" <<<"$OUT" "$TMP/err" | sed 's/^/        /'
check "... and warned of on stderr" grep -q "warning: agent prom-r12.*walked through as unknown" "$TMP/err"
check "... and that Prometheus finds them down too" \
	grep -q "^prom-r12 .*no answer: unknown (Prometheus finds it down too)$" <<<"$OUT"
check "... prom-r12 walked through: r10 -> r11 -> prom-r12? -> r13 -> r14" \
	grep -q "path (source side first): r10 -> r11 -> prom-r12? -> r13 -> r14$" <<<"$OUT"
for i in 12 $S2 $S3; do kill -CONT "${PIDS[$((i - 1))]}"; done

# ---- more than 5 down: 7 agents whose port refuses (nothing listens on 1) ----
REFUSED=$(for i in 1 2 3 4 5 6 7; do printf ',d%d=198.18.1.%d:1' "$i" "$i"; done)
OUT=$(fleet trace --agents "r10=198.18.1.10:9477$REFUSED" --cacert "$TMP/ca.crt" --user prom \
	--hex "$SENT" 2>"$TMP/err")
eq "7 of 8 down: the first 5 named on stderr" "$(grep -c '^bloomtap: warning: agent d[1-5]: ' "$TMP/err")" 5
check "... the other 2 counted there" grep -q "and 2 more agents did not answer" "$TMP/err"
check "... the answer names all 7" \
	grep -q "^partial answer: 7 of 8 agents did not answer: d1 d2 d3 d4 d5 d6 d7$" <<<"$OUT"

# ---- a name with several addresses (a headless Service): --agents-from-dns ----
# /etc/hosts with the name on three lines (glibc gives every address),
# bind-mounted in a mount namespace of this command alone
{ grep -v fleet-dns /etc/hosts; for i in 10 11 12; do echo "198.18.1.$i fleet-dns-$ID"; done; } > "$TMP/hosts"
OUT=$(unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$TMP/hosts" \
	nsenter --net=/var/run/netns/"$HUB" "$BLOOMTAP" -j trace --agents-from-dns "fleet-dns-$ID:9477" \
	--cacert "$TMP/ca.crt" --user prom --hex "$SENT" 2>"$TMP/err")
eq "--agents-from-dns: the name's 3 addresses asked, each named by itself" \
	"$(python3 -c 'import json,sys; a = json.load(sys.stdin)["agents"]; print(sorted((n, v["address"], v["packets_seen"]) for n, v in a.items()))' <<<"$OUT")" \
	"[('r10', '198.18.1.10:9477', 1), ('r11', '198.18.1.11:9477', 1), ('r12', '198.18.1.12:9477', 1)]"
check "... and the host's own /etc/hosts untouched" bash -c "! grep -q fleet-dns-$ID /etc/hosts"

# ---- one certificate for one name, the agents by address ----
eq "--tls-server-name: the certificate checked for the name" "$(fleet -j trace \
	--agents r10=198.18.1.10:9477 --cacert "$TMP/ca.crt" --tls-server-name bloomtap-fleet --user prom \
	--hex "$SENT" 2>/dev/null | json_get '["agents"]["r10"]["packets_seen"]')" 1
expect_fail "--tls-server-name: another name refused, the name blamed" "(--tls-server-name)" \
	fleet trace --agents r10=198.18.1.10:9477 --cacert "$TMP/ca.crt" --tls-server-name other \
	--user prom --hex "$SENT"

# ---- --cert/--key (mTLS): the agent's web config cannot require a client
# certificate (client_auth_type is refused), so a stand-in does: Python's
# ssl, CERT_REQUIRED against the test's CA, answering one packet seen;
# nsenter execs timeout, whose PID the cleanup kills (a function's
# subshell would leave python holding the suite's output open) ----
nsenter --net=/var/run/netns/"$HUB" timeout 600 python3 -c '
import http.server, ssl, sys
B = b"[{\"packet\": 1, \"seen\": true, \"windows\": []}]"
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        # a length: Python closes without TLS close_notify, which curl
        # takes as a cut answer when the end of the connection ends it
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(B))); self.end_headers()
        self.wfile.write(B)
    def log_message(self, *a): pass
    def log_error(self, *a): pass
class S(http.server.ThreadingHTTPServer):
    def handle_error(self, *a): pass	# a handshake without a client certificate
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
ctx.load_verify_locations(sys.argv[3])
ctx.verify_mode = ssl.CERT_REQUIRED
srv = S(("198.18.0.1", 9478), H)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()' "$TMP/server.crt" "$TMP/server.key" "$TMP/ca.crt" >/dev/null 2>&1 &
PIDS+=($!)
wait_for "the stand-in that requires a client certificate listens" 60 listening "$HUB" t 9478
eq "--cert/--key: a client certificate where one is required" "$(fleet -j trace \
	--agents m=198.18.0.1:9478 --cacert "$TMP/ca.crt" --cert "$TMP/client.crt" --key "$TMP/client.key" \
	--hex "$SENT" 2>/dev/null | json_get '["agents"]["m"]["packets_seen"]')" 1
expect_fail "... and without one: no answer" "no agent answered" \
	fleet trace --agents m=198.18.0.1:9478 --cacert "$TMP/ca.crt" --hex "$SENT"

# ---- one clear error each ----
expect_fail "wrong credentials: one clear error" "refused the credentials" \
	env BLOOMTAP_PASSWORD=x$PASSWORD nsenter --net=/var/run/netns/"$HUB" "$BLOOMTAP" trace \
	--agents-from-prometheus "$PROMURL" --cacert "$TMP/ca.crt" --user prom --hex "$SENT"
expect_fail "a wrong CA: one clear error" "not one --cacert vouches for" \
	fleet trace --agents-from-prometheus "$PROMURL" --cacert "$TMP/other.crt" --user prom --hex "$SENT"
expect_fail "a down Prometheus: one clear error" "--agents-from-prometheus http://127.0.0.1:1?job=bloomtap: " \
	fleet trace --agents-from-prometheus "http://127.0.0.1:1?job=bloomtap" --cacert "$TMP/ca.crt" --user prom --hex "$SENT"
expect_fail "--user without a password: refused" "BLOOMTAP_PASSWORD or a --netrc" \
	env -u BLOOMTAP_PASSWORD nsenter --net=/var/run/netns/"$HUB" "$BLOOMTAP" trace \
	--agents r01=198.18.1.1:9477 --cacert "$TMP/ca.crt" --user prom --hex "$SENT"
printf 'default login prom password %s\n' "$PASSWORD" > "$TMP/netrc"
chmod 600 "$TMP/netrc"
eq "--netrc: the password from the file" "$(env -u BLOOMTAP_PASSWORD nsenter --net=/var/run/netns/"$HUB" \
	"$BLOOMTAP" -j trace --agents r10=198.18.1.10:9477 --cacert "$TMP/ca.crt" --netrc "$TMP/netrc" \
	--hex "$SENT" 2>/dev/null | json_get '["agents"]["r10"]["packets_seen"]')" 1
printf 'machine 198.18.1.10 login other password x\nmachine 198.18.1.10 login prom password %s\n' \
	"$PASSWORD" > "$TMP/netrc2"
chmod 600 "$TMP/netrc2"
eq "--user with --netrc: that login's password from the file" "$(env -u BLOOMTAP_PASSWORD \
	nsenter --net=/var/run/netns/"$HUB" "$BLOOMTAP" -j trace --agents r10=198.18.1.10:9477 \
	--cacert "$TMP/ca.crt" --user prom --netrc "$TMP/netrc2" --hex "$SENT" 2>/dev/null |
	json_get '["agents"]["r10"]["packets_seen"]')" 1
expect_fail "plain http to an agent that speaks HTTPS: the error says --cacert" \
	"an agent with a web config speaks HTTPS; give --cacert" \
	fleet trace --agents r10=198.18.1.10:9477 --hex "$SENT"

# ---- a topology by the agents' own names (rNN), one agent stopped ----
# unanswered, r12 keeps Prometheus's name (prom-r12): the file's r12 is
# walked through as unknown, with one warning; a typo with every agent
# answering is an error giving their names
kill -STOP "${PIDS[11]}"
OUT=$(tr_prom --topology "$TMP/chain" --from r14 --agent-timeout $AGENT_MS --timeout $TOTAL_MS --hex "$SENT" 2>"$TMP/err"); RC=$?
kill -CONT "${PIDS[11]}"
eq "r12 stopped, the topology by hostnames: r12 walked through as unknown (exit $RC)" \
	"$(path_of <<<"$OUT") $(json_get '["topology_unmatched"]' <<<"$OUT")" \
	"r10 r11 r12 r13 r14 | unknown prom-r12 | agents $N ['r12']"
check "... one warning naming r12" grep -q "^bloomtap: warning: --topology $TMP/chain: r12 matches no agent that answered" "$TMP/err"
sed 's/^r13:/rl3:/' "$TMP/chain" > "$TMP/chain-typo"
expect_fail "every agent answering: a typo is an error giving the agents' names" \
	"chain-typo:13: 'rl3' is not one of the agents (they are named: r01, r02, r03, r04, r05, r06, r07, r08, ... ($N in all))" \
	tr_prom --topology "$TMP/chain-typo" --from r14 --hex "$SENT"

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
