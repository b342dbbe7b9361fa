# Shared by the shell tests: checks, counts, the closing summary line, and
# network namespaces that are always removed (trap), even when a test fails.
# Addresses only from 198.18.0.0/15 and 2001:db8::/32 (RFC 2544, RFC 3849).

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BLOOMTAP=${BLOOMTAP:-$TOP/.output/bloomtap}
# the captures: defined once, in the Makefile (BT_PCAPS)
PCAPS=${BT_PCAPS:-$(make -s -C "$TOP" print-pcaps)}
PASS=0
FAIL=0
SKIP=0
NETNS=()

ok()   { PASS=$((PASS + 1)); echo "  ok    $*"; }
fail() { FAIL=$((FAIL + 1)); echo "  FAIL  $*"; }
# skip_all "why": the suite skips whole, and counts as skipped every check
# it would have run (the check, eq, expect_fail and wait_for lines of the
# script: a suite of 40 checks skipped is 40 skipped, not one)
skip_all() {
	local n
	n=$(grep -cE '^[[:space:]]*(check|eq|expect_fail|wait_for|agent_on_lab) ' "$0" 2>/dev/null)
	[ "${n:-0}" -gt 0 ] || n=1
	echo "  SKIP  $*"
	SKIP=$((SKIP + n))
	summary; exit 0
}

# check "what" command...: passes when the command exits 0
check() {
	local what=$1; shift
	if "$@" >/tmp/bt-check.$$ 2>&1; then ok "$what"; else
		fail "$what"; sed 's/^/        /' /tmp/bt-check.$$ | head -20; fi
	rm -f /tmp/bt-check.$$
}

# expect_fail "what" "message part" command...: non-zero exit and the message
expect_fail() {
	local what=$1 msg=$2 out rc; shift 2
	out=$("$@" 2>&1); rc=$?
	if [ $rc -ne 0 ] && grep -qF -- "$msg" <<<"$out"; then ok "$what"; else
		fail "$what (exit $rc, wanted '$msg')"; sed 's/^/        /' <<<"$out" | head -10; fi
}

# eq "what" got want
eq() {
	if [ "$2" = "$3" ]; then ok "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

# poll_until SECONDS command...: polls the command every 0.05 s until it
# succeeds (0) or SECONDS pass (1). For a state that the check after it
# asserts anyway. SECONDS is a bound for a broken feature, far above what
# the state takes, not a timing; BT_WAIT_SCALE multiplies it where every
# step is slower (a guest under QEMU's software emulation sets 4).
poll_until() {
	local end=$((SECONDS + (${1%.*} + 1) * ${BT_WAIT_SCALE:-1})); shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}

# wait_for "state" SECONDS command...: poll_until, and a state that never
# comes is a failed check named for it, never a silent fall-through.
wait_for() {
	local what=$1 secs=$2; shift 2
	poll_until "$secs" "$@" || { fail "$what: not within $((secs * ${BT_WAIT_SCALE:-1})) s"; return 1; }
}

# listening NS PROTO PORT: something in namespace NS listens on PORT
# (PROTO t or u)
listening() { in_ns "$1" ss -Hl"$2"n "sport = :$3" | grep -q .; }

# count_of PATTERN FILE: lines of FILE matching PATTERN (0 when none)
count_of() { grep -c -- "$1" "$2" 2>/dev/null || true; }

# sighup_then PID LOG: SIGHUP, then wait until LOG has one more line saying
# the reload's outcome ("re-read" or "not applied")
sighup_then() {	# PID LOG [PATTERN: the outcome's line, default a reload's]
	local pid=$1 log=$2 pat=${3:-re-read|not applied} n
	n=$(grep -cE -- "$pat" "$log")
	kill -HUP "$pid"
	wait_for "SIGHUP's outcome logged ($pat)" 30 bash -c "[ \$(grep -cE -- '$pat' '$log') -gt $n ]"
}

# capture_ready FILE: tests/lib/capture.py (its stdout in FILE) is live
# frames_in PCAP: its frame count (a capture.py file)
frames_in() {
	python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(); n, o = 0, 24
while o + 16 <= len(d):
    o += 16 + struct.unpack_from("<I", d, o + 8)[0]; n += 1
print(n)' "$1"
}
# capture_bg NS IFACE PCAP COUNT MATCH: tests/lib/capture.py in namespace
# NS, in the background (at most 300 s), its words in PCAP.out; returns
# once it is live, its PID in CAPTURE_PID (nsenter's own, not a
# subshell's: kill stops the capture)
capture_bg() {
	nsenter --net=/var/run/netns/"$1" timeout 300 python3 "$TOP/tests/lib/capture.py" "$2" \
		"$3" "$4" "$5" > "$3.out" &
	CAPTURE_PID=$!
	capture_ready "$3.out"
}
capture_ready() { wait_for "the capture is live" 30 grep -qx ready "$1"; }

# trace_dir NS IFACE PCAP: how many of the capture's packets the instance
# IFACE in namespace NS saw leave, saw arrive, and saw neither way, as
# "left received neither" (a packet may be both)
trace_dir() {
	in_ns "$1" "$BLOOMTAP" -j trace "$2" "$3" | python3 -c '
import json, sys
res = json.load(sys.stdin)
first = {p["packet"]: p for p in res}
left = recv = none = 0
for p in res:
    d = {w["direction"] for w in first[p.get("same_as", p["packet"])]["windows"]}
    left += "egress" in d
    recv += "ingress" in d
    none += not d
print(left, recv, none)'
}

# never_sent PCAP OUT: OUT holds the first UDP datagram of PCAP with a
# payload byte changed, a packet nobody sent
never_sent() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
o = 24
while True:
    n = struct.unpack_from("<I", d, o + 8)[0]
    f = d[o + 16:o + 16 + n]
    if f[23] == 17 and n > 14 + 20 + 8 + 4:
        break
    o += 16 + n
f[14 + 20 + 8] ^= 0xff	# its first payload byte
open(sys.argv[2], "wb").write(bytes(d[:24]) + struct.pack("<IIII", 0, 0, n, n) + bytes(f))
PY
}

# tcp_sink_bg NS PORT OUT: in namespace NS, a TCP sink on PORT (any
# address) that reads one connection whole, then writes its byte count to
# OUT; returns once it listens, its PID in SINK (at most 300 s)
tcp_sink_bg() {
	nsenter --net=/var/run/netns/"$1" timeout 300 python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); n = 0
while (b := c.recv(1 << 16)):
    n += len(b)
print(n, flush=True)' "$2" > "$3" &
	SINK=$!
	wait_for "the TCP sink listens" 30 grep -qx ready "$3"
}
# tcp_send_2mb NS ADDR PORT: 2 MB over TCP from namespace NS, then
# closed: the stack hands tc egress GSO super-packets (gso on)
tcp_send_2mb() {
	in_ns "$1" python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
s.sendall(bytes(range(256)) * 8192); s.close()' "$2" "$3"
}

summary() {
	echo "$PASS passed, $FAIL failed${SKIP:+, $SKIP skipped}"
}

need_root() {
	[ "$(id -u)" = 0 ] || skip_all "$1: needs root (network namespaces, XDP attach)"
}

in_ns() { local ns=$1; shift; nsenter --net=/var/run/netns/"$ns" "$@"; }

# need_podman SUITE: podman and runc, and busybox-static for the image,
# or the suite skips saying so; the runtime's settings of deploy/
# (runc: crun refuses this host's hybrid cgroups)
need_podman() {
	command -v podman >/dev/null && command -v runc >/dev/null ||
		skip_all "$1: podman and runc are missing (make deps installs them)"
	[ -x /bin/busybox ] || skip_all "$1: no /bin/busybox (busybox-static) for the image"
	export CONTAINERS_CONF=$TOP/deploy/containers.conf
}

# podman_busybox_image IMG DIR: podman image IMG of the host's
# busybox-static and the links the containers run (sh, sleep), built in
# DIR (no registry)
podman_busybox_image() {
	mkdir -p "$2/img/bin" && cp /bin/busybox "$2/img/bin/" || return 1
	for a in sh sleep; do ln -s busybox "$2/img/bin/$a"; done
	tar -C "$2/img" -cf "$2/img.tar" . &&
		podman import -q --change 'ENV=PATH=/bin' "$2/img.tar" "$1" >/dev/null
}

# netns_add NAME: a namespace with IPv6 off (no router or neighbour
# solicitations: every frame on the wire is one the test sent) and lo up.
netns_add() {
	ip netns add "$1" || return 1
	NETNS+=("$1")
	in_ns "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$1" link set lo up
}

# client_via_host NS VC VH N SUBNET: a client namespace NS (made here) with
# a veth VC -- VH to the host's namespace, 198.18.N.1/24 on VC and
# 198.18.N.2/24 on VH, SUBNET routed through the host, and the host
# forwarding (the caller saves and restores net.ipv4.ip_forward)
client_via_host() {
	netns_add "$1" &&
		ip link add "$2" netns "$1" type veth peer name "$3" &&
		ip -n "$1" addr add "198.18.$4.1/24" dev "$2" &&
		ip addr add "198.18.$4.2/24" dev "$3" &&
		ip -n "$1" link set "$2" up && ip link set "$3" up &&
		ip -n "$1" route add "$5" via "198.18.$4.2" &&
		sysctl -qw net.ipv4.ip_forward=1
}

# readme_block NAME: the README's code block between <!-- NAME --> and
# <!-- /NAME -->, its fences left out
readme_block() {
	sed -n "/^<!-- $1 -->\$/,/^<!-- \/$1 -->\$/p" "$TOP/README.md" | sed '1,2d;$d' | sed '$d'
}

# veth_pair NSA VA NSB VB N: namespaces NSA and NSB (made here) joined by a
# veth pair VA -- VB, addresses 198.18.N.1/24 and 198.18.N.2/24, links up.
veth_pair() {
	local nsa=$1 va=$2 nsb=$3 vb=$4 n=$5
	netns_add "$nsa" && netns_add "$nsb" || return 1
	ip link add "$va" netns "$nsa" type veth peer name "$vb" netns "$nsb" || return 1
	ip -n "$nsa" addr add "198.18.$n.1/24" dev "$va"
	ip -n "$nsb" addr add "198.18.$n.2/24" dev "$vb"
	ip -n "$nsa" link set "$va" up
	ip -n "$nsb" link set "$vb" up
}

# static_neighbours NSA VA NSB VB N: each end of veth_pair's link knows the
# other's MAC for good (nud permanent), so no ARP crosses it: a count of
# frames is the count of what the test sent.
static_neighbours() {
	local nsa=$1 va=$2 nsb=$3 vb=$4 n=$5 mac_a mac_b
	mac_a=$(ip -n "$nsa" -br link show "$va" | awk '{print $3}')
	mac_b=$(ip -n "$nsb" -br link show "$vb" | awk '{print $3}')
	ip -n "$nsa" neigh replace "198.18.$n.2" lladdr "$mac_b" dev "$va" nud permanent &&
		ip -n "$nsb" neigh replace "198.18.$n.1" lladdr "$mac_a" dev "$vb" nud permanent
}

cleanup_netns() {
	local ns
	for ns in "${NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
	NETNS=()
}

# packets_counted NS PORT IFACE: bloomtap_packets_total of IFACE as the
# agent in namespace NS serves it on 127.0.0.1:PORT (empty when none)
packets_counted() {
	in_ns "$1" curl -s -m 5 "127.0.0.1:$2/metrics" |
		awk -v k="bloomtap_packets_total{interface=\"$3\",direction=\"ingress\"}" '$1 == k {print $2}'
}
counted_at_least() { local n; n=$(packets_counted "$1" "$2" "$3"); [ "${n:-0}" -ge "$4" ]; }

# agent_on_lab LABEL NSA NSB IFACE ADDR PORT ARCHIVE [SOCKET]: what an
# agent just started in namespace NSB on IFACE (HTTP on 127.0.0.1:PORT,
# archive in ARCHIVE) must do, however it was installed: answer /healthz,
# attach, count 5 pings from NSA to ADDR, archive a window, and see every
# one of the pings (captured at IFACE) through /api/v1/trace: on the API
# socket SOCKET when given (the packaged configuration: the port serves
# /metrics and /healthz alone, and refuses the API).
agent_on_lab() {
	local l=${1:+$1: } nsa=$2 nsb=$3 ifc=$4 addr=$5 port=$6 archive=$7 sock=$8 tmp ts got
	local api=(127.0.0.1:$port)
	tmp=$(mktemp -d)
	wait_for "${l}/healthz answers" 30 in_ns "$nsb" curl -sf -m 5 "127.0.0.1:$port/healthz" &&
		ok "${l}/healthz answers"
	check "${l}it attached" bash -c "ip -n $nsb link show $ifc | grep -q 'prog/xdp'"
	in_ns "$nsb" timeout 30 python3 "$TOP/tests/lib/capture.py" "$ifc" "$tmp/got.pcap" 5 icmp-echo \
		> "$tmp/cap.out" &
	ts=$!; capture_ready "$tmp/cap.out"
	in_ns "$nsa" ping -q -c 5 -i 0.05 "$addr" >/dev/null
	wait $ts
	poll_until 30 counted_at_least "$nsb" "$port" "$ifc" 5
	got=$(packets_counted "$nsb" "$port" "$ifc")
	check "${l}it counts the pings (${got:-none})" test "${got:-0}" -ge 5
	wait_for "${l}it archives into $archive" 30 bash -c "ls '$archive'/*.btw" &&
		ok "${l}it archives into $archive"
	if [ -n "$sock" ]; then
		eq "${l}the port refuses the API (listen-metrics-only): 403" "$(in_ns "$nsb" curl -s \
			-o /dev/null -w '%{http_code}' -m 5 -X POST --data-binary "@$tmp/got.pcap" \
			"127.0.0.1:$port/api/v1/trace")" 403
		api=(--unix-socket "$sock" http://localhost)
	fi
	got=$(in_ns "$nsb" curl -s -m 5 -X POST --data-binary "@$tmp/got.pcap" "${api[@]}/api/v1/trace" |
		python3 -c 'import json,sys; print(sum(p["seen"] for p in json.load(sys.stdin)))' 2>&1)
	eq "${l}it answers a trace: the 5 pings seen" "$got" 5
	rm -rf "$tmp"
}

# status_field NS NAME FIELD: FIELD of instance NAME in status -j, run in
# namespace NS (other tests' instances may be listed beside it)
status_field() {
	in_ns "$1" "$BLOOMTAP" -j status | python3 -c '
import json, sys
print([i for i in json.load(sys.stdin) if i["name"] == sys.argv[1]][0].get(sys.argv[2]))' "$2" "$3"
}

# Drops (tests/live/drops.sh, tests/live/uppers.sh)
# reason_count INSTANCE NS NAME: the instance's packets dropped with NAME
reason_count() {
	in_ns "$2" "$BLOOMTAP" -j drops "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(r["packets"] for r in d["reasons"] if r["reason"] == sys.argv[1]))' "$3"
}

# trace_says INSTANCE NS PCAP REASON [KEPT]: an answer for every packet of
# the capture, each seen; dropped with REASON (or not dropped, REASON
# "-"); the tags in file KEPT (a sink's reads) are packets delivered: seen
# only.
trace_says() {
	local out rc
	out=$(mktemp)
	in_ns "$2" "$BLOOMTAP" -j trace "$1" "$3" > "$out"
	python3 - "$out" "$4" "${5:-}" "$3" <<'PY'
import json, struct, sys
res = json.load(open(sys.argv[1]))
want, kept = sys.argv[2], set()
if sys.argv[3]:
    kept = {int(l) for l in open(sys.argv[3]) if l.strip().isdigit()}
# the capture's packets (classic pcap, as drops_lab.py writes it)
with open(sys.argv[4], 'rb') as f:
    end = '<' if f.read(4) in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    f.read(20)
    sent = 0
    while len(h := f.read(16)) == 16:
        f.seek(struct.unpack(end + 'IIII', h)[2], 1)
        sent += 1
bad = [] if len(res) == sent else ["%d answers for the capture's %d packets" % (len(res), sent)]
first = {p["packet"]: p for p in res}
for i, p in enumerate(res):
    # a repeat of an earlier packet is answered there
    reasons = {d["reason"] for d in first[p.get("same_as", p["packet"])]["drops"]}
    if not p["seen"]:
        bad.append("packet %d not seen" % p["packet"])
    exp = set() if want == "-" else {want}
    if kept and p["packet"] - 1 in kept:
        exp = set()
    if reasons != exp:
        bad.append("packet %d: drops %s, want %s" % (p["packet"], sorted(reasons), sorted(exp)))
print("\n".join(bad[:5]) if bad else "%d packets as expected" % len(res))
sys.exit(1 if bad else 0)
PY
	rc=$?
	rm -f "$out"
	return $rc
}

json_get() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

# prometheus_start NS TARGET LISTEN DIR: a real Prometheus in namespace NS
# scraping TARGET (ADDR:PORT) every second, its data in DIR; PROM is its
# pid (nsenter execs it), for the caller's cleanup to stop.
prometheus_start() {
	local ns=$1 target=$2 listen=$3 dir=$4
	mkdir -p "$dir"
	cat > "$dir/prom.yml" <<PROMCONF
global: { scrape_interval: 1s }
scrape_configs:
  - job_name: bloomtap
    static_configs: [ { targets: ["$target"] } ]
PROMCONF
	nsenter --net=/var/run/netns/"$ns" prometheus --config.file="$dir/prom.yml" \
		--storage.tsdb.path="$dir/data" --web.listen-address="$listen" > "$dir/prom.log" 2>&1 &
	PROM=$!
}
