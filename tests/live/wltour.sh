#!/usr/bin/env bash
# The README's second lab (a container's traffic, by name), run line for
# line as it stands, with its names made unique to this run (the podman
# network and container, the namespace, the interfaces, the files), the
# image the host's busybox-static (no registry here) and B pointed at the
# build under test: every line must succeed, and the lab must show what
# the README says it shows. Forwarding is saved and restored.
source "$(dirname "$0")/../lib/lib.sh"
need_root "workload tour"
need_podman "workload tour"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "workload tour: this kernel has no BTF (tp_btf needs it)"

TMP=$(mktemp -d)
N=wt$$
IMG=localhost/btwt-test:$$
FWD=$(sysctl -n net.ipv4.ip_forward)
PORT=$((30000 + $$ % 10000))
cleanup() {
	pkill -f -- "--archive $TMP/archive" 2>/dev/null
	"$BLOOMTAP" detach "${N}vh" >/dev/null 2>&1
	podman rm -f -t 0 "$N-web" >/dev/null 2>&1
	podman network rm -f "$N-net" >/dev/null 2>&1
	podman rmi -f "$IMG" >/dev/null 2>&1
	ip netns del "$N-c" 2>/dev/null
	sysctl -qw net.ipv4.ip_forward="$FWD"
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

podman_busybox_image "$IMG" "$TMP" || { fail "podman import of busybox-static"; summary; exit 1; }
# the block between the markers, its names made unique; the agent on a
# port of its own (another suite's may hold 9477)
readme_block workload-lab |
	sed -e "s|^B=.*|B=$BLOOMTAP|" -e "s|docker.io/library/busybox|$IMG|" \
	    -e "s|run lab-vh |run --listen 127.0.0.1:$PORT lab-vh |" \
	    -e "s|lab-vc|${N}vc|g" -e "s|lab-vh|${N}vh|g" -e "s|lab-net|$N-net|g" \
	    -e "s|lab-web|$N-web|g" -e "s|lab-c|$N-c|g" -e "s|/tmp/lab-wl|$TMP/archive|g" > "$TMP/lab.sh"
check "the README's workload lab has its lines ($(wc -l < "$TMP/lab.sh"))" test "$(wc -l < "$TMP/lab.sh")" -ge 15
check "no ip netns exec in it" bash -c "! grep -q 'ip netns exec' '$TMP/lab.sh'"
check "every name made unique" bash -c "! grep -q 'lab-' '$TMP/lab.sh'"
cd "$TOP" || exit 1
# bounded: a line that waits for a state that never comes (the table's
# name) would wait for ever, as it would for a reader of the README
timeout 180 bash -e "$TMP/lab.sh" > "$TMP/out" 2>&1
RC=$?
eq "every line of the workload lab succeeded (exit)" "$RC" 0
[ $RC -eq 0 ] || sed 's/^/        /' "$TMP/out" | tail -20
check "heavy: the ping flow, from the client's namespace to the container" \
	grep -q -- "$N-c > $N-web" "$TMP/out"
check "trace: the 3 datagrams dropped here, NO_SOCKET, in the container" bash -c \
	"[ \$(grep -c 'reason NO_SOCKET, in workload $N-web' '$TMP/out') -ge 3 ]"
check "nothing left: the namespace" bash -c "! ip netns list | grep -q '^$N-'"
check "nothing left: the container" bash -c "! podman container exists '$N-web'"
check "nothing left: pins" test ! -e "/sys/fs/bpf/bloomtap/${N}vh"
summary
[ $FAIL -eq 0 ]
