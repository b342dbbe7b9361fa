#!/usr/bin/env bash
# Runs inside the systemd guest (tests/ship/systemd.sh boots it): the .deb as
# an operator uses it, with systemd as PID 1 and the unit's sandbox for
# real. Installs it with apt (offline: its libraries are in the guest),
# names an interface, `systemctl enable --now`; the unit stays active 60 s
# without a restart; packets and a NO_SOCKET drop show in /metrics and
# over the API socket; reload; the interface made again; a restart that
# adopts; a reinstall that restarts the unit. Workloads under systemd's
# cgroup manager (cgroup v2): processes in namespaces of their own started
# by systemd-run as the kubelet's systemd driver (cri-containerd-, crio-
# scopes under kubepods-QOS-podUID slices, its /var/log/pods entries) and
# podman (a libpod- scope under machine-libpod_pod_) lay them out:
# `bloomtap workloads -j` as root names each with its address; the unit
# as shipped warns that it cannot (CAP_SYS_PTRACE, CAP_SYS_ADMIN), with
# the capabilities alone it still enters no namespace (RestrictNamespaces
# denies setns), and with the package's drop-in (bloomtap-workloads.conf)
# its table names them; the drop-in removed again. Stop, detach and
# purge leave no XDP program and no pin; the
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

# ---- workloads: cgroup v2 under systemd's cgroup manager, and the unit ----
# Workloads laid out by systemd itself as the kubelet's systemd driver and
# podman's make them: a process in a network namespace of its own
# (unshare --net, an address on its loopback) started by systemd-run as
# a transient scope under a slice, in the unified hierarchy:
#   kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<UID
#   with _>.slice/cri-containerd-ID.scope, and a burstable pod's
#   crio-ID.scope, each with the kubelet's /var/log/pods/NS_POD_UID/
#   CONTAINER/0.log and /var/log/containers/POD_NS_CONTAINER-ID.log;
#   machine.slice/machine-libpod_pod_POD.slice/libpod-ID.scope, with
#   podman's containers.json and a state file holding the pod's JSON.
# `bloomtap workloads -j` as root names each with its address. The unit as
# shipped cannot (its warning in the journal); with the package's drop-in
# (deploy/bloomtap-workloads.conf) its table names them; the drop-in goes
# again before the checks below.
hex64() { printf '%s' "$1" | sha256sum | cut -c1-64; }
# qos, pod UID, namespace, pod, container, scope prefix, runtime, address
WL_PODS=("besteffort 3f8e2c1a-7b4d-4e6f-9a0b-1c2d3e4f5a6b btsd-ns btsd-web web cri-containerd containerd 198.18.41.2"
	 "burstable 8a9b0c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d btsd-ns btsd-db db crio cri-o 198.18.41.3")
PM_POD=$(hex64 btsd-ppod) PM_ID=$(hex64 btsd-pmc) PM_ADDR=198.18.41.4
WL_SCOPES=() WL_SLICES=(kubepods.slice "machine-libpod_pod_$PM_POD.slice")
wl_start() {	# UNIT SLICE ADDRESS CGROUP: a process in a network namespace of its own, as UNIT.scope
	WL_SCOPES+=("$1.scope")
	systemd-run --quiet --scope --unit="$1" --slice="$2" -- unshare --net \
		sh -c "ip link set lo up && ip addr add $3/32 dev lo && exec sleep 900" >/dev/null 2>&1 &
	wait_for "$1.scope is active" 30 bash -c "[ \"\$(systemctl is-active $1.scope)\" = active ]" &&
		ok "$1.scope is active ($3)"
	eq "its cgroup, as systemd made it" "$(systemctl show -p ControlGroup --value "$1.scope")" "$4"
}
wl_json() {	# FILE ADDRESS KEY=VALUE...: the one workload holding ADDRESS has each
	python3 - "$@" <<'EOF'
import json, sys
wls = json.load(open(sys.argv[1]))
hit = [w for w in wls if any(a["address"] == sys.argv[2] for a in w["addresses"])]
if len(hit) != 1:
    sys.exit("%d workloads hold %s" % (len(hit), sys.argv[2]))
w, bad = hit[0], []
c = w["containers"][0] if len(w["containers"]) == 1 else {}
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    got = c.get(k[10:]) if k.startswith("container.") else w.get(k)
    if str(got) != v:
        bad.append("%s: %r, not %r" % (k, got, v))
if bad:
    print(json.dumps(w))
    sys.exit("; ".join(bad))
EOF
}
wl_table() {	# ADDRESS NAME: the unit's instance names ADDRESS NAME now
	/usr/sbin/bloomtap -j workloads "$VH" | python3 -c '
import json, sys
sys.exit(not any(e["address"] == sys.argv[1] and e["workload"] == sys.argv[2] for e in json.load(sys.stdin)))' "$1" "$2"
}
DROPIN=/etc/systemd/system/bloomtap.service.d/workloads.conf
wl_cleanup() {
	[ ${#WL_SCOPES[@]} -gt 0 ] && systemctl stop "${WL_SCOPES[@]}" "${WL_SLICES[@]}" 2>/dev/null
	WL_SCOPES=()
	rm -rf /var/log/pods/btsd-ns_* /var/log/containers/btsd-* /var/lib/containers
	rmdir /var/log/pods /var/log/containers 2>/dev/null
	if [ -e "$DROPIN" ]; then rm -f "$DROPIN"; rmdir "$(dirname "$DROPIN")"; systemctl daemon-reload; fi
}
trap 'wl_cleanup; cleanup_netns; ip netns delete "$ROOTNS" 2>/dev/null' EXIT
WANT=()	# address, then the name the unit's table gives it
for p in "${WL_PODS[@]}"; do
	read -r qos uid ns pod ctr prefix rt addr <<<"$p"
	id=$(hex64 "btsd-$ctr") slice=kubepods-$qos-pod${uid//-/_}.slice
	mkdir -p "/var/log/pods/${ns}_${pod}_$uid/$ctr" /var/log/containers
	: >"/var/log/pods/${ns}_${pod}_$uid/$ctr/0.log"
	ln -sf "/var/log/pods/${ns}_${pod}_$uid/$ctr/0.log" "/var/log/containers/${pod}_${ns}_$ctr-$id.log"
	wl_start "$prefix-$id" "$slice" "$addr" "/kubepods.slice/kubepods-$qos.slice/$slice/$prefix-$id.scope"
	WANT+=("$addr" "$ns/$pod/$ctr")
done
mkdir -p /var/lib/containers/storage/overlay-containers /var/lib/containers/storage/libpod
printf '[{"id":"%s","names":["btsd-pmc"],"image":"x"}]\n' "$PM_ID" \
	>/var/lib/containers/storage/overlay-containers/containers.json
printf 'bbolt\0{"id":"%s","name":"btsd-ppod","created":"x"}\0' "$PM_POD" \
	>/var/lib/containers/storage/libpod/bolt_state.db
wl_start "libpod-$PM_ID" "machine-libpod_pod_$PM_POD.slice" "$PM_ADDR" \
	"/machine.slice/machine-libpod_pod_$PM_POD.slice/libpod-$PM_ID.scope"
WANT+=("$PM_ADDR" "btsd-ppod/btsd-pmc")
wait_for "bloomtap workloads -j (root) lists the three addresses" 30 bash -c \
	"/usr/sbin/bloomtap workloads -j >/tmp/wl.json && grep -q '\"${WANT[0]}\"' /tmp/wl.json &&
	 grep -q '\"${WANT[2]}\"' /tmp/wl.json && grep -q '\"${WANT[4]}\"' /tmp/wl.json" &&
	ok "bloomtap workloads -j (root) lists the three addresses"
pid_of() { head -1 "/sys/fs/cgroup$(systemctl show -p ControlGroup --value "$1")/cgroup.procs"; }
for p in "${WL_PODS[@]}"; do
	read -r qos uid ns pod ctr prefix rt addr <<<"$p"
	id=$(hex64 "btsd-$ctr")
	check "workloads -j: $addr is pod $ns/$pod ($qos, $uid), container $ctr $rt ${id:0:12}" \
		wl_json /tmp/wl.json "$addr" kind=pod namespace="$ns" pod="$pod" pod_uid="$uid" \
		runtime="$rt" container.name="$ctr" container.id="$id" container.runtime="$rt" \
		container.pids="[$(pid_of "$prefix-$id.scope")]"
done
check "workloads -j: $PM_ADDR is podman's pod btsd-ppod (${PM_POD:0:12}), container btsd-pmc ${PM_ID:0:12}" \
	wl_json /tmp/wl.json "$PM_ADDR" kind=pod namespace=None pod=btsd-ppod pod_uid=None \
	pod_id="$PM_POD" runtime=podman container.name=btsd-pmc container.id="$PM_ID" \
	container.runtime=podman container.pids="[$(pid_of "libpod-$PM_ID.scope")]"

# the unit as shipped: the user bloomtap, three capabilities,
# ProtectProc=invisible: it sees no other user's process, enters no
# namespace, and says so once
check "as shipped: the agent's warning names CAP_SYS_PTRACE and CAP_SYS_ADMIN" bash -c \
	"journalctl -b -u bloomtap.service --no-pager | grep 'workloads: not permitted to read the network namespace' |
	 grep 'CAP_SYS_PTRACE' | grep -q 'CAP_SYS_ADMIN'"
check "as shipped: its table names none of them" bash -c \
	"! /usr/sbin/bloomtap -j workloads $VH | grep -qE '\"(${WANT[0]}|${WANT[2]}|${WANT[4]})\"'"
# the two capabilities alone: every process is read (CAP_SYS_PTRACE,
# through ProtectProc=invisible too), and no namespace is entered: the
# unit's RestrictNamespaces=yes denies setns(2) by seccomp (EPERM)
warns() { journalctl -b -u bloomtap.service --no-pager | grep 'workloads: not permitted'; }
warned=$(warns | wc -l)
check "a drop-in of the capabilities alone" bash -c "mkdir -p '$(dirname "$DROPIN")' &&
	grep -v '^RestrictNamespaces=' /usr/share/bloomtap/bloomtap-workloads.conf >'$DROPIN' &&
	systemctl daemon-reload && systemctl restart bloomtap.service"
wait_for "its agent's warning" 30 bash -c "[ \$(journalctl -b -u bloomtap.service --no-pager |
	grep -c 'workloads: not permitted') -gt $warned ]" && ok "its agent's warning"
got=$(warns | tail -1 | sed -n 's/.*namespace of \([0-9]*\) processes .* enter \([0-9]*\) namespaces.*/\1 \2/p')
check "the capabilities alone: 0 processes unread, the 4 namespaces not entered (${got:-no warning})" \
	bash -c "read -r p n <<<'$got' && [ \"\$p\" = 0 ] && [ \"\$n\" -ge 4 ]"
check "the capabilities alone: its table names none of them" bash -c \
	"! /usr/sbin/bloomtap -j workloads $VH | grep -qE '\"(${WANT[0]}|${WANT[2]}|${WANT[4]})\"'"
# the package's drop-in: the two capabilities, RestrictNamespaces=net
warned=$(warns | wc -l)
check "the drop-in, as the package ships it, in $DROPIN" \
	install -D -m 0644 /usr/share/bloomtap/bloomtap-workloads.conf "$DROPIN"
check "daemon-reload, restart" bash -c 'systemctl daemon-reload && systemctl restart bloomtap.service'
wait_for "with the drop-in: active" 30 bash -c '[ "$(systemctl is-active bloomtap.service)" = active ]' &&
	ok "with the drop-in: active"
echo "        AmbientCapabilities=$(unit AmbientCapabilities); RestrictNamespaces=$(unit RestrictNamespaces)"
eq "with the drop-in: still the user bloomtap" "$(ps -o user= -p "$(unit MainPID)")" bloomtap
for i in 0 2 4; do
	wait_for "with the drop-in: workloads $VH names ${WANT[i]} ${WANT[i+1]}" 30 wl_table "${WANT[i]}" "${WANT[i+1]}" &&
		ok "with the drop-in: workloads $VH names ${WANT[i]} ${WANT[i+1]}"
done
eq "with the drop-in: no warning from its agent" "$(warns | wc -l)" "$warned"
if [ "$FAIL" -gt 0 ]; then	# what the agent could not do, to say why
	/usr/sbin/bloomtap workloads "$VH" | sed 's/^/        table: /'
	grep -E '^Cap(Eff|Bnd|Amb)|^Seccomp' "/proc/$(unit MainPID)/status" | sed 's/^/        /'
	journalctl -b -u bloomtap.service --no-pager | tail -15 | sed 's/^/        /'
fi
# the drop-in goes, the unit runs as shipped again
wl_cleanup
check "without the drop-in: restart" systemctl restart bloomtap.service
wait_for "as shipped again: active" 30 bash -c '[ "$(systemctl is-active bloomtap.service)" = active ]' &&
	ok "as shipped again: active"
eq "as shipped again: three capabilities" "$(unit AmbientCapabilities)" "cap_net_admin cap_perfmon cap_bpf"

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
