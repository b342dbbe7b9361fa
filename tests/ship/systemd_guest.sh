#!/usr/bin/env bash
# Runs inside the systemd guest (tests/ship/systemd.sh boots it): the .deb as
# an operator uses it, with systemd as PID 1 and the unit's sandbox for
# real. Installs it with apt (offline: its libraries are in the guest),
# names an interface, `systemctl enable --now`; the unit stays active 60 s
# without a restart; packets and a NO_SOCKET drop show in /metrics and
# over the API socket; reload; the interface made again; a restart that
# adopts; a reinstall that restarts the unit; stop, detach and purge leave no XDP program and no pin; the
# journal holds no read-only error and no seccomp kill. Then the package of
# the previous ABI (bt_prev_deb) running with an instance, upgraded to
# this one: the unit active on an instance of this ABI, the journal saying
# what was lost.
export BT_PCAPS=${BT_PCAPS:-/nonexistent}
source "$(dirname "$0")/../lib/lib.sh"
need_root "systemd"
DEB=${bt_deb:?bt_deb: the .deb, from the kernel command line}
NSA=bt-sd-peer ROOTNS=bt-sd-root
VH=btsd0 VP=btsd1
ADDR=198.18.40.1 PEER=198.18.40.2
PORT=9477 SOCK=/run/bloomtap/api.sock
CONF=/etc/bloomtap/bloomtap.conf
echo "kernel $(uname -r), $(nproc) CPUs, PID 1 is $(cat /proc/1/comm), $(systemctl --version | head -1)"

# the interface the unit attaches to: VH in the guest's own namespace,
# named (ip netns attach) so lib.sh's helpers reach it as any namespace
lab() {
	ip link add "$VH" type veth peer name "$VP" netns "$NSA" &&
		ip addr add "$ADDR/24" dev "$VH" && ip link set "$VH" up &&
		ip -n "$NSA" addr add "$PEER/24" dev "$VP" && ip -n "$NSA" link set "$VP" up
}
trap 'cleanup_netns; ip netns delete "$ROOTNS" 2>/dev/null' EXIT
netns_add "$NSA" || { fail "namespace $NSA"; summary; exit 1; }
ip netns attach "$ROOTNS" 1 || { fail "naming the guest's namespace"; summary; exit 1; }
check "the lab: $VH ($ADDR) -- $VP ($PEER) in $NSA" lab

unit() { systemctl show -p "$1" --value bloomtap.service; }
metric() {	# the value of a /metrics line that starts with $1
	curl -s -m 5 "127.0.0.1:$PORT/metrics" | awk -v k="$1" 'index($0, k) == 1 { print $2; exit }'
}

# ---- install, name the interface, enable --now ----
check "apt-get install the .deb (offline)" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q "$DEB"
check "set interface = $VH and a short archive flush" sed -i \
	-e "s/^interface = .*/interface = $VH/" -e '$a archive-flush = 0.3' "$CONF"
T0=$(date +%s)
check "systemctl enable --now bloomtap" systemctl enable --now bloomtap.service
wait_for "the unit is active" 60 bash -c '[ "$(systemctl is-active bloomtap.service)" = active ]' &&
	ok "the unit is active"
PID=$(unit MainPID)
agent_on_lab "" "$NSA" "$ROOTNS" "$VH" "$ADDR" "$PORT" /var/lib/bloomtap/archive "$SOCK"
eq "the agent runs as the user bloomtap" "$(ps -o user= -p "$PID")" bloomtap

# a datagram to a port nobody listens on: the kernel drops it, NO_SOCKET
in_ns "$NSA" bash -c "for i in 1 2 3 4 5; do echo x | nc -u -w0 $ADDR 9; done"
poll_until 30 bash -c "curl -s -m 5 127.0.0.1:$PORT/metrics | grep -q 'bloomtap_drops_total{.*reason=\"NO_SOCKET\"'"
got=$(curl -s -m 5 "127.0.0.1:$PORT/metrics" | grep 'bloomtap_drops_total{.*reason="NO_SOCKET"' | awk '{s += $2} END {print s + 0}')
check "/metrics: the NO_SOCKET drops ($got)" test "$got" -ge 5
got=$(curl -s -m 5 --unix-socket "$SOCK" http://localhost/api/v1/drops |
	python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' 2>&1)
check "the API socket: /api/v1/drops names NO_SOCKET" grep -q NO_SOCKET <<<"$got"
got=$(curl -s -m 5 --unix-socket "$SOCK" http://localhost/metrics |
	awk -v k="bloomtap_packets_total{interface=\"$VH\",direction=\"ingress\"}" '$1 == k {print $2}')
check "the API socket: /metrics counts the pings (${got:-none})" test "${got:-0}" -ge 5

# active 60 s from the start, the same process, never restarted
poll_until 90 bash -c "[ \$((\$(date +%s) - $T0)) -ge 60 ]"
eq "60 s after the start: active" "$(systemctl is-active bloomtap.service)" active
eq "the same process" "$(unit MainPID)" "$PID"
eq "no restart" "$(unit NRestarts)" 0

# ---- reload, the interface made again, a restart that adopts ----
check "systemctl reload" systemctl reload bloomtap.service
wait_for "the reload is logged" 30 bash -c "journalctl -b -u bloomtap.service | grep -q 're-read $CONF'" &&
	ok "the reload is logged"
eq "after the reload: the same process" "$(unit MainPID)" "$PID"
# one logger: an error of the library's (the configuration's parser) under
# the unit is filed at priority err, not info; then the good file again
cp "$CONF" /tmp/bloomtap.conf.good
echo "no-such-key = 1" >> "$CONF"
check "systemctl reload (a bad key)" systemctl reload bloomtap.service
wait_for "the parser's error filed at priority err" 30 bash -c \
	"journalctl -b -u bloomtap.service -p err..err --no-pager | grep -q 'no-such-key'" &&
	ok "the parser's error filed at priority err"
eq "and information is not (the reload's line is not err)" \
	"$(journalctl -b -u bloomtap.service -p err..err --no-pager | grep -c "re-read $CONF")" 0
cp /tmp/bloomtap.conf.good "$CONF"
n=$(journalctl -b -u bloomtap.service | grep -c "re-read $CONF")
systemctl reload bloomtap.service
wait_for "the good file re-read" 30 bash -c \
	"[ \$(journalctl -b -u bloomtap.service | grep -c 're-read $CONF') -gt $n ]"
ip link del "$VH"
check "the interface made again" lab
wait_for "the agent attached to it again" 30 bash -c "ip link show $VH | grep -q 'prog/xdp'" &&
	ok "the agent attached to it again"
before=$(metric "bloomtap_packets_total{interface=\"$VH\",direction=\"ingress\"}")
check "systemctl restart" systemctl restart bloomtap.service
wait_for "the restart adopts the instance" 30 bash -c \
	"journalctl -b -u bloomtap.service | grep -q '$VH: adopted the attached instance'" &&
	ok "the restart adopts the instance"
wait_for "active again" 30 bash -c '[ "$(systemctl is-active bloomtap.service)" = active ]' &&
	ok "active again"
wait_for "/metrics again" 30 curl -sf -m 5 "127.0.0.1:$PORT/healthz" && ok "/metrics again"
after=$(metric "bloomtap_packets_total{interface=\"$VH\",direction=\"ingress\"}")
check "the counts went on across the restart ($before, then $after)" test "${after:-0}" -ge "${before:-1}"
# a reinstall (an upgrade of the same ABI does the same): the unit is not
# stopped before it, and postinst restarts it, so this version's agent
# runs, adopting the instance; its own line in the journal says so
OLD_PID=$(unit MainPID)
n=$(journalctl -b -u bloomtap.service | grep -c "$VH: adopted the attached instance")
check "apt-get install --reinstall, the unit running" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --reinstall -o Dpkg::Options::=--force-confold "$DEB"
wait_for "after the reinstall: /healthz" 60 curl -sf -m 5 "127.0.0.1:$PORT/healthz" &&
	ok "after the reinstall: /healthz"
eq "after the reinstall: the unit is active" "$(systemctl is-active bloomtap.service)" active
check "after the reinstall: a new agent runs (not pid $OLD_PID)" \
	test "$(unit MainPID)" != "$OLD_PID" -a "$(unit MainPID)" != 0
check "it adopted the instance" bash -c \
	"[ \$(journalctl -b -u bloomtap.service | grep -c '$VH: adopted the attached instance') -gt $n ]"
check "the postinst's line in the journal" bash -c \
	"journalctl -b -t bloomtap --no-pager | grep -q 'restarting bloomtap.service, so that this version.s'"

# ---- stop, detach, purge ----
check "systemctl disable --now" systemctl disable --now bloomtap.service
check "the program stays attached after a stop (a restart adopts it)" bash -c "ip link show $VH | grep -q 'prog/xdp'"
check "bloomtap detach $VH" /usr/sbin/bloomtap detach "$VH"
check "apt-get purge" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q bloomtap
check "no XDP program on $VH" bash -c "! ip link show $VH | grep -q xdp"
check "no bloomtap program in the kernel" bash -c "! bpftool prog show | grep -q 'bloomtap'"
check "no pin under /sys/fs/bpf/bloomtap*" bash -c \
	"[ -z \"\$(find /sys/fs/bpf/bloomtap /sys/fs/bpf/bloomtap_drops -mindepth 1 2>/dev/null)\" ]"
check "purge took the user, the configuration and the archive" bash -c \
	"! getent passwd bloomtap && [ ! -e /etc/bloomtap ] && [ ! -e /var/lib/bloomtap ]"

# ---- an upgrade across an ABI change ----
# The package of the previous ABI (tests/ship/prev_abi_deb.sh builds it
# from the history) runs the unit with an instance; this package over it
# must leave the unit active, on an instance made anew with this ABI, and
# say in the journal what went with the old one (its live windows), the
# archive kept.
abi_of_meta() {	# the ABI in an instance's pinned meta (bytes 8..11)
	bpftool -j map lookup pinned "/sys/fs/bpf/bloomtap/$1/meta" key 0 0 0 0 | python3 -c '
import json, sys
v = bytes(int(b, 16) for b in json.load(sys.stdin)["value"])
print(int.from_bytes(v[8:12], "little"))'
}
archived() { ls /var/lib/bloomtap/archive 2>/dev/null | grep -c '\.btw$'; }
NEW_ABI=$(sed -n 's/^#define BT_ABI_VERSION \([0-9]*\).*/\1/p' "$bt_repo/include/bloomtap.h")
if [ -z "${bt_prev_deb:-}" ]; then
	echo "  SKIP  the upgrade across an ABI change: ${bt_prev_why:-no package of the previous ABI}"
	SKIP=$((SKIP + 1))
else
	APT=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Options::=--force-confold)
	check "apt-get install the previous ABI's package ($(basename "$bt_prev_deb"))" \
		"${APT[@]}" "$bt_prev_deb"
	check "set interface = $VH" sed -i -e "s/^interface = .*/interface = $VH/" \
		-e '$a archive-flush = 0.3' "$CONF"
	check "systemctl enable --now bloomtap (the previous version)" systemctl enable --now bloomtap.service
	wait_for "its agent serves /healthz" 60 curl -sf -m 5 "127.0.0.1:$PORT/healthz" &&
		ok "its agent serves /healthz"
	OLD_ABI=$(abi_of_meta "$VH")
	check "its instance is of an older ABI ($OLD_ABI, this package's $NEW_ABI)" \
		test "${OLD_ABI:-0}" -lt "$NEW_ABI" -a "${OLD_ABI:-0}" -gt 0
	in_ns "$NSA" ping -q -c 5 -i 0.2 "$ADDR" >/dev/null
	wait_for "it archives sealed windows" 60 bash -c '[ "$(ls /var/lib/bloomtap/archive 2>/dev/null | grep -c "\.btw$")" -gt 0 ]'
	OLD_PID=$(unit MainPID)
	check "upgrade: apt-get install this package over it" bash -c \
		'"$@" >/tmp/upgrade.txt 2>&1' _ "${APT[@]}" "$DEB"
	sed 's/^/        /' /tmp/upgrade.txt | grep bloomtap: 
	check "the upgrade says what is lost" grep -q 'live SPIE windows (not yet archived)' /tmp/upgrade.txt
	wait_for "after the upgrade: /healthz again" 60 curl -sf -m 5 "127.0.0.1:$PORT/healthz" &&
		ok "after the upgrade: /healthz again"
	eq "after the upgrade: the unit is active" "$(systemctl is-active bloomtap.service)" active
	check "a new agent runs (not pid $OLD_PID)" test "$(unit MainPID)" != "$OLD_PID" -a "$(unit MainPID)" != 0
	eq "the instance was made anew with this ABI" "$(abi_of_meta "$VH")" "$NEW_ABI"
	check "status reads it, attached" bash -c "/usr/sbin/bloomtap status | grep '^$VH ' | grep -q ' attached '"
	journalctl -b -u bloomtap.service --no-pager >/tmp/upgrade-journal.txt
	check "the unit's journal: the old instance (ABI $OLD_ABI) detached and made anew" grep -q \
		"$VH: the pinned instance (ABI $OLD_ABI, made .*) was made by an older bloomtap version (this one is ABI $NEW_ABI)" \
		/tmp/upgrade-journal.txt
	check "the unit's journal: lost, its live SPIE windows; kept, the archive" grep -q \
		'Lost with it: its live SPIE windows .* kept: the archive /var/lib/bloomtap/archive' \
		/tmp/upgrade-journal.txt
	check "the postinst's own lines in the journal" bash -c \
		"journalctl -b -t bloomtap --no-pager | grep -q 'cannot read: $VH'"
	check "the archive is kept ($(archived) sealed files)" test "$(archived)" -gt 0
	in_ns "$NSA" ping -q -c 5 -i 0.2 "$ADDR" >/dev/null
	got=$(metric "bloomtap_packets_total{interface=\"$VH\",direction=\"ingress\"}")
	check "the new instance counts (${got:-none} packets)" test "${got:-0}" -ge 5
	eq "not failed" "$(unit Result)" success
	check "then: disable --now, detach, purge" bash -c "systemctl disable --now bloomtap.service &&
		/usr/sbin/bloomtap detach $VH && DEBIAN_FRONTEND=noninteractive apt-get purge -y -q bloomtap"
fi

# ---- the journal ----
journalctl -b -u bloomtap.service --no-pager >/tmp/journal.txt
sed 's/^/        /' /tmp/journal.txt | tail -40
eq "the journal: no read-only error" "$(count_of 'Read-only file system' /tmp/journal.txt)" 0
eq "the journal: no seccomp kill (SIGSYS)" "$(grep -cE 'status=31/SYS|signal=SYS' /tmp/journal.txt)" 0
eq "the kernel's log: no seccomp record" "$(journalctl -b -k --no-pager | grep -c 'type=1326')" 0
summary
