#!/usr/bin/env bash
# Tap mode (attach --tap, run --tap), for a mirror (SPAN) port: every frame
# is recorded, then dropped by the XDP program, so the stack never sees it.
# On a lab A -- B, with B's end of the veth pair holding no address, as a
# mirror port would: refused while B has one, frames recorded and traced,
# none reaching B's stack (an AF_PACKET socket on B and B's IP counters
# see nothing), where the same frames without tap mode reach both.
source "$(dirname "$0")/../lib/lib.sh"
need_root "tap"

ID=$$ N=13
NSA=bt-tap-a-$ID NSB=bt-tap-b-$ID
VA=bttapa$ID VB=bttapb$ID
PORT=40013 FRAMES=20
TMP=$(mktemp -d)
cleanup() {
	[ -n "${AGENT:-}" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "${CAP_B:-}" ] && kill "$CAP_B" "${CAP_A:-}" 2>/dev/null
	"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

veth_pair "$NSA" "$VA" "$NSB" "$VB" $N || { fail "namespaces"; summary; exit 1; }
# the static neighbours before B's address goes: no ARP crosses the link
static_neighbours "$NSA" "$VA" "$NSB" "$VB" $N

# FRAMES UDP datagrams from A to B's (former) address
send_udp() {
	in_ns "$NSA" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto(b"tap %04d" % i, (sys.argv[1], int(sys.argv[2])))' "198.18.$N.2" $PORT $FRAMES
}
# B's IPv4 InReceives (/proc/net/snmp, read in B's namespace)
in_receives() { in_ns "$NSB" awk '/^Ip:/ { if (h) print $4; h = 1 }' /proc/net/snmp; }
# a capture of the frames B's stack saw (on B), and of those A sent (on
# A, for trace), around one send_udp
round() {	# LABEL
	local l=$1
	capture_bg "$NSB" "$VB" "$TMP/$l-b.pcap" 0 "udp:$PORT"
	CAP_B=$CAPTURE_PID
	capture_bg "$NSA" "$VA" "$TMP/$l-a.pcap" $FRAMES "udp:$PORT,sent"
	CAP_A=$CAPTURE_PID
	IN0=$(in_receives)
	send_udp
	wait "$CAP_A"
}
stop_b() { kill "$CAP_B" 2>/dev/null; wait "$CAP_B" 2>/dev/null; }
status_of() { status_field "$NSB" "$VB" "$1"; }	# FIELD of B's instance
counted() { in_ns "$NSB" "$BLOOMTAP" -j stats "$VB" | json_get '["packets"]'; }

# refused while B holds an address the host uses
expect_fail "attach --tap refused on an interface with an address" \
	"has address 198.18.$N.2, which this host uses" in_ns "$NSB" "$BLOOMTAP" attach --tap "$VB"
check "nothing attached after the refusal" bash -c "! ip -n $NSB link show $VB | grep -q prog/xdp"
check "--force overrides it" in_ns "$NSB" "$BLOOMTAP" attach --tap --force "$VB"
check "detach" in_ns "$NSB" "$BLOOMTAP" detach "$VB"
ip -n "$NSB" addr flush dev "$VB"

# the control: without tap mode the frames reach B's stack
check "attach without --tap" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
eq "status: tap off" "$(status_of tap)" False
round plain
wait_for "the plain round's $FRAMES frames counted" 30 \
	bash -c "[ \"\$(nsenter --net=/var/run/netns/$NSB $BLOOMTAP -j stats $VB |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[\"packets\"])')\" -ge $FRAMES ]"
poll_until 10 test "$(in_receives)" -ge $((IN0 + FRAMES))
eq "without tap: B's stack received the $FRAMES datagrams (IP InReceives)" \
	$(( $(in_receives) - IN0 )) $FRAMES
stop_b
eq "without tap: a capture on B saw them" "$(frames_in "$TMP/plain-b.pcap")" $FRAMES
check "detach" in_ns "$NSB" "$BLOOMTAP" detach "$VB"

# tap mode: recorded and traced, never reaching the stack
check "attach --tap (no address on $VB)" in_ns "$NSB" "$BLOOMTAP" attach --tap "$VB"
eq "status: tap on" "$(status_of tap)" True
check "status says tap mode" bash -c "nsenter --net=/var/run/netns/$NSB $BLOOMTAP status |
	grep -q 'tap mode'"
eq "drops not recorded in tap mode" "$(status_of drops_recording)" False
round tap
wait_for "the tap round's frames counted" 30 \
	bash -c "[ \"\$(nsenter --net=/var/run/netns/$NSB $BLOOMTAP -j stats $VB |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[\"packets\"])')\" -ge $FRAMES ]"
eq "tap: bloomtap counted exactly the $FRAMES frames" "$(counted)" $FRAMES
eq "tap: B's stack received none of them (IP InReceives)" $(( $(in_receives) - IN0 )) 0
stop_b
eq "tap: a capture on B saw none of them" "$(frames_in "$TMP/tap-b.pcap")" 0
eq "tap: A sent them (a capture on A)" "$(frames_in "$TMP/tap-a.pcap")" $FRAMES
eq "tap: trace finds every frame A sent seen" "$(in_ns "$NSB" "$BLOOMTAP" -j trace "$VB" \
	"$TMP/tap-a.pcap" | python3 -c 'import json,sys; print(sum(p["seen"] for p in json.load(sys.stdin)))')" \
	$FRAMES
check "detach" in_ns "$NSB" "$BLOOMTAP" detach "$VB"

# the agent's tap = yes (here --tap on its command line)
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --tap --listen 127.0.0.1:$PORT --archive "$TMP/archive" "$VB" \
	> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "the agent answers /healthz" 30 in_ns "$NSB" curl -sf -m 5 "127.0.0.1:$PORT/healthz" &&
	ok "the agent answers /healthz"
eq "run --tap: status tap on" "$(status_of tap)" True
kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
# a restart without --tap adopts the instance and turns tap mode off
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --listen 127.0.0.1:$PORT --archive "$TMP/archive" "$VB" \
	>> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "the restarted agent logs tap mode off" 30 grep -q "tap mode off, as configured" \
	"$TMP/agent.log" && ok "the restarted agent logs tap mode off"
eq "run without --tap: status tap off" \
	"$(status_of tap)" False
kill "$AGENT"; wait "$AGENT" 2>/dev/null; AGENT=
sed 's/^/        agent: /' "$TMP/agent.log" | grep -i "error\|tap" | head -5

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
