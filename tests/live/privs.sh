#!/usr/bin/env bash
# Least privilege: the agent as a user that is not root,
# with exactly CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON (setpriv), in a lab of
# namespaces: it attaches, counts, records drops, loads a watch list and
# names its classes, archives, serves /metrics and answers a trace. Without
# CAP_BPF it fails and says what it lacks.
#
# The test runs in a mount namespace of its own, with a bpffs of its own at
# /sys/fs/bpf, prepared as the unit's ExecStartPre prepares the host's
# (mode 0711, the pin directories the user's): nothing of the host's bpffs
# is changed, and the pins go with the namespace.
source "$(dirname "$0")/../lib/lib.sh"
need_root "privs"
if [ -z "$BT_PRIVS_INNER" ]; then
	exec unshare --mount --propagation private env BT_PRIVS_INNER=1 bash "$0" "$@"
fi

ID=$$
NSA=bt-pv-a-$ID NSB=bt-pv-b-$ID
VA=btpa$ID VB=btpb$ID
PORT=9485
U=$((61000 + ID % 1000))	# a UID of no one: numeric, no passwd entry
CAPS=+bpf,+net_admin,+perfmon
TMP=$(mktemp -d)
AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	in_ns "$NSB" "$BLOOMTAP" detach "$VB" >/dev/null 2>&1
	in_ns "$NSA" "$BLOOMTAP" detach "$VA" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

mount -t bpf bpffs /sys/fs/bpf || { fail "a bpffs of the test's own"; summary; exit 1; }
chmod 0711 /sys/fs/bpf
install -d -o $U -g $U -m 0700 /sys/fs/bpf/bloomtap /sys/fs/bpf/bloomtap_drops
chmod 0755 "$TMP"
# the build copied where U can run it: the checkout's path (under a 0700
# /root, say) is the machine's, not the test's
install -m 0755 "$BLOOMTAP" "$TMP/bloomtap"
install -d -o $U -g $U -m 0700 "$TMP/archive" "$TMP/run"
veth_pair "$NSA" "$VA" "$NSB" "$VB" 22 || { fail "namespaces"; summary; exit 1; }
cat > "$TMP/watch.list" <<EOF
198.18.22.1 peer
198.18.22.0/24 lab
EOF
chmod 0644 "$TMP/watch.list"

# as_user CAPS command...: in namespace B, the command as UID U with
# exactly CAPS (inheritable, ambient, bounding), no supplementary groups,
# no new privileges. It execs: call it in a subshell ($(...), or & whose
# $! is then the command's PID)
as_user() {
	local caps=$1; shift
	exec nsenter --net=/var/run/netns/"$NSB" setpriv --reuid=$U --regid=$U --clear-groups \
		--inh-caps=-all,$caps --ambient-caps=-all,$caps --bounding-set=-all,$caps \
		--no-new-privs "$@"
}

# ---- without CAP_BPF: refused, said why ----
expect_fail "without CAP_BPF: the agent fails and names the capability" "CAP_BPF" \
	as_user +net_admin,+perfmon "$TMP/bloomtap" run --listen 127.0.0.1:$PORT \
	--archive "$TMP/archive" "$VB"
check "and nothing attached" bash -c "! ip -n $NSB link show $VB | grep -q prog/xdp"

# ---- with exactly the three ----
as_user $CAPS "$TMP/bloomtap" run --listen 127.0.0.1:$PORT --api-socket "$TMP/run/api.sock" \
	--archive "$TMP/archive" --window 0.2 --archive-flush 0.3 --interval 1 \
	--watch "$TMP/watch.list" "$VB" > "$TMP/agent.log" 2>&1 &
AGENT=$!
get() { in_ns "$NSB" curl -s -m 5 "$@"; }
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
eq "the agent's UID" "$(awk '/^Uid:/ {print $2 "/" $3}' /proc/$AGENT/status)" "$U/$U"
eq "its effective capabilities: exactly these three" \
	"$(capsh --decode=$(awk '/^CapEff:/ {print $2}' /proc/$AGENT/status) | sed 's/.*=//')" \
	"cap_net_admin,cap_perfmon,cap_bpf"
check "it attached" bash -c "ip -n $NSB link show $VB | grep -q 'prog/xdp'"
eq "its pins are its user's" "$(stat -c %u /sys/fs/bpf/bloomtap/$VB/meta)" "$U"
in_ns "$NSA" ping -q -c 5 -i 0.05 198.18.22.2 >/dev/null
# a UDP datagram to a closed port of B: NO_SOCKET, the drop program's
in_ns "$NSA" python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3): s.sendto(b"x" * 20, ("198.18.22.2", 9))'
wait_for "it counts: the pings and datagrams" 30 counted_at_least "$NSB" "$PORT" "$VB" 8 &&
	ok "it counts: $(packets_counted "$NSB" "$PORT" "$VB") packets"
wait_for "it records drops (CAP_PERFMON): NO_SOCKET" 30 bash -c \
	"nsenter --net=/var/run/netns/$NSB curl -s 127.0.0.1:$PORT/metrics | grep -q '^bloomtap_drops_total{interface=\"$VB\",reason=\"NO_SOCKET\"} [1-9]'" &&
	ok "it records drops (CAP_PERFMON): NO_SOCKET"
# the watch list's classes, read back by their pins (no CAP_SYS_ADMIN)
wait_for "the watch list's classes count" 30 bash -c \
	"nsenter --net=/var/run/netns/$NSB curl -s 127.0.0.1:$PORT/metrics | grep -q '^bloomtap_class_packets_total{interface=\"$VB\",class=\"peer\",side=\"src\",direction=\"ingress\"} [1-9]'" &&
	ok "the watch list's classes count"
# heavy flows are those of the intervals the agent holds (the current and
# the last): the pings above may have left both by now beside two CPU hogs
# (a run failed so), so each try pings again
heavy_names_class() {
	in_ns "$NSA" ping -q -c 2 -i 0.05 198.18.22.2 >/dev/null
	in_ns "$NSB" curl -s "127.0.0.1:$PORT/api/v1/heavy" | grep -q '"src_class":"peer"'
}
wait_for "heavy flows name their classes" 30 heavy_names_class &&
	ok "heavy flows name their classes (the table read by its pin)"
wait_for "it archives" 30 bash -c "ls '$TMP/archive'/*.btw" && ok "it archives"
eq "the archive's files are its user's" "$(stat -c %u "$(ls "$TMP"/archive/*.btw | head -1)")" "$U"
eq "its socket: its user's, mode 0600" "$(stat -c '%u %a' "$TMP/run/api.sock")" "$U 600"

# a packet that passed, captured at B, traced through the API
in_ns "$NSB" timeout 30 python3 "$TOP/tests/lib/capture.py" "$VB" "$TMP/got.pcap" 3 icmp-echo > "$TMP/cap.out" &
TS=$!; capture_ready "$TMP/cap.out"
in_ns "$NSA" ping -q -c 3 -i 0.05 198.18.22.2 >/dev/null
wait $TS
T=$(get -X POST --data-binary "@$TMP/got.pcap" "127.0.0.1:$PORT/api/v1/trace")
eq "it answers a trace: every packet seen" "$(python3 -c 'import json,sys; print({p["seen"] for p in json.load(sys.stdin)})' <<<"$T")" "{True}"

# stopped and started again, it adopts its own pins
kill -TERM "$AGENT"; wait "$AGENT"; AGENT=
as_user $CAPS "$TMP/bloomtap" run --listen 127.0.0.1:$PORT --archive "$TMP/archive" "$VB" \
	>> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "restarted, it adopts its instance" 30 get "127.0.0.1:$PORT/healthz" &&
	ok "restarted, it adopts its instance"
check "adopted, not attached again" grep -q "adopt" "$TMP/agent.log"
kill -TERM "$AGENT"; wait "$AGENT"; AGENT=
# the three capabilities name no workload (docs/workloads.md "Privileges"):
# said once a run, and nothing else
check "the workloads' warning: the two capabilities it lacks, named" \
	grep -q "workloads: not permitted .*CAP_SYS_PTRACE.*CAP_SYS_ADMIN" "$TMP/agent.log"
check "nothing else logged as an error or a warning" bash -c \
	"! grep -E 'error|warning' '$TMP/agent.log' | grep -v 'workloads: not permitted'"

# ---- the host's drop program pinned by root in the directory the user
# owns (an operator's 'bloomtap attach' beside the unit): the user cannot
# open those pins. Its attach must fail saying so, load no second program
# and unlink nothing; root's instance goes on recording drops. ----
in_ns "$NSB" "$BLOOMTAP" detach "$VB" >/dev/null 2>&1
# the last detach took the host's directory: the unit's ExecStartPre makes it
install -d -o $U -g $U -m 0700 /sys/fs/bpf/bloomtap_drops
check "root attaches to $VA: the host's drop program pinned by root" \
	in_ns "$NSA" "$BLOOMTAP" attach "$VA"
eq "the host's link pin is root's, in the user's directory" \
	"$(stat -c %u /sys/fs/bpf/bloomtap_drops/link) $(stat -c %u /sys/fs/bpf/bloomtap_drops)" "0 $U"
link_id() { bpftool -j link show pinned /sys/fs/bpf/bloomtap_drops/link |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }
LINK=$(link_id)
expect_fail "the user's attach fails: it cannot open root's pins, and says so" \
	"nothing was changed" as_user $CAPS "$TMP/bloomtap" attach "$VB"
check "nothing attached to $VB" bash -c "! ip -n $NSB link show $VB | grep -q prog/xdp"
check "root's four pins are all there" bash -c 'cd /sys/fs/bpf/bloomtap_drops &&
	test -e link -a -e drop_owners -a -e drop_progs -a -e drop_host'
eq "the same link holds the host's program" "$(link_id)" "$LINK"
no_socket_drops() { in_ns "$NSA" "$BLOOMTAP" -j drops "$VA" | python3 -c 'import json,sys
print(sum(r["packets"] for r in json.load(sys.stdin)["reasons"] if r["reason"] == "NO_SOCKET"))'; }
DROPS=$(no_socket_drops)
in_ns "$NSB" python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3): s.sendto(b"x" * 20, ("198.18.22.1", 9))'
drops_at_least() { [ "$(no_socket_drops)" -ge "$1" ]; }
wait_for "root's instance still records drops" 30 drops_at_least $((DROPS + 3)) &&
	ok "root's instance still records drops (NO_SOCKET: $DROPS, then $(no_socket_drops))"
summary
[ $FAIL -eq 0 ]
