#!/usr/bin/env bash
# Pods by name, at packet time (docs/workloads.md): an agent on a host-side
# veth, UDP from a client namespace through it to two pods on a podman
# network of 198.18.X.0/24: one made from a Kubernetes Pod manifest by
# `podman kube play`, one a container under a kubepods cgroup parent with
# the kubelet's /var/log/pods and /var/log/containers entries laid out
# under the agent's BT_WORKLOADS_ROOT. Nothing listens on port 9 in
# either: each datagram dies in the pod (NO_SOCKET). The table, the heavy
# flows and the trace of the client's capture (seen, and dropped here in
# the pod) name each pod as the kubelet's convention names it
# (namespace/pod/container; kube play's pods have no namespace:
# pod/container). podman's state is read through symbolic links from that
# root. Forwarding is saved and restored.
source "$(dirname "$0")/../lib/lib.sh"
need_root "wlpods"
need_podman "wlpods"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "wlpods: this kernel has no BTF (tp_btf needs it)"

ID=$$
N=$((ID % 200 + 20))
IMG=localhost/btwp-test:$ID
NET=btwp-$ID
SUB=198.18.$N.0/24
POD=btwp-pod-$ID
KCTR=btwp-k-$ID
UID_K=$(cat /proc/sys/kernel/random/uuid)
NSC=btwp-c-$ID
VC=bpc$ID VH=bph$ID
L=$(((N + 1) % 256))
PORT=$((20000 + ID % 10000))
WORK=$(mktemp -d /tmp/bt-wlpods.XXXXXX)
ROOT=$WORK/root
FWD=$(sysctl -n net.ipv4.ip_forward)
AGENT=

cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	"$BLOOMTAP" detach "$VH" >/dev/null 2>&1
	podman kube down "$WORK/pod.yaml" >/dev/null 2>&1
	podman rm -f -t 0 "$KCTR" >/dev/null 2>&1
	podman network rm -f "$NET" >/dev/null 2>&1
	podman rmi -f "$IMG" >/dev/null 2>&1
	ip link del "$VH" 2>/dev/null
	cleanup_netns
	sysctl -qw net.ipv4.ip_forward="$FWD"
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

podman_busybox_image "$IMG" "$WORK" || { fail "podman import of busybox-static"; summary; exit 1; }
check "podman network on $SUB" podman network create --subnet "$SUB" "$NET"
cat > "$WORK/pod.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $POD
spec:
  containers:
  - name: web
    image: $IMG
    command: ["/bin/sleep", "600"]
YAML
check "a pod from a Kubernetes manifest (podman kube play)" \
	podman kube play --network "$NET" "$WORK/pod.yaml"
check "a container under a kubepods cgroup parent" podman run -d --name "$KCTR" \
	--network "$NET" --cgroup-parent "/kubepods/besteffort/pod$UID_K" "$IMG" sleep 600
KID=$(podman inspect -f '{{.Id}}' "$KCTR" 2>/dev/null)
mkdir -p "$ROOT/var/log/pods/btwp-kns_kpod-0_$UID_K/app" "$ROOT/var/log/containers"
: > "$ROOT/var/log/pods/btwp-kns_kpod-0_$UID_K/app/0.log"
ln -s "../pods/btwp-kns_kpod-0_$UID_K/app/0.log" \
	"$ROOT/var/log/containers/kpod-0_btwp-kns_app-$KID.log"
# podman's own state, where the root has it: the kube play pod's names
mkdir -p "$ROOT/var/lib" "$ROOT/run"
ln -s /var/lib/containers "$ROOT/var/lib/containers"
ln -s /run/containers "$ROOT/run/containers"
addr_of() { podman inspect -f "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$1" 2>/dev/null; }
# kube play's pod: its infra container holds the namespace, web runs in it
PIP=$(addr_of "$POD-web")
KIP=$(addr_of "$KCTR")
check "the pods have addresses on $SUB ($PIP, $KIP)" \
	bash -c "[ '${PIP%.*}' = 198.18.$N ] && [ '${KIP%.*}' = 198.18.$N ]"
# the names: the pod's from podman's state and the kubelet's logs, the
# container's as its runtime (podman) names it, which comes before the
# kubelet's log name (docs/workloads.md "Where each answer comes from")
WPOD=$POD/$POD-web WK=btwp-kns/kpod-0/$KCTR

client_via_host "$NSC" "$VC" "$VH" "$L" "$SUB" || { fail "the client's namespace"; summary; exit 1; }

BT_WORKLOADS_ROOT=$ROOT "$BLOOMTAP" run --listen "127.0.0.1:$PORT" --archive "$WORK/arch" \
	--interval 3600 "$VH" > "$WORK/agent.log" 2>&1 &
AGENT=$!
wait_for "the agent answers /healthz" 30 curl -sf -m 5 "127.0.0.1:$PORT/healthz"

# table IP: the workload the instance's table gives IP now
table() {
	"$BLOOMTAP" -j workloads "$VH" | python3 -c '
import json, sys
print(" ".join(str(e["workload"]) for e in json.load(sys.stdin) if e["address"] == sys.argv[1]))' "$1"
}
both_named() { [ "$(table "$PIP")" = "$WPOD" ] && [ "$(table "$KIP")" = "$WK" ]; }
wait_for "the table names both pods" 30 both_named
eq "the kube play pod's address: pod/container" "$(table "$PIP")" "$WPOD"
eq "the kubelet's pod's address: namespace/pod/container" "$(table "$KIP")" "$WK"

# send DST SPORT COUNT: datagrams of 500 bytes to DST port 9, as the
# client's veth sent them, captured in $WORK/SPORT.pcap
send() {
	capture_bg "$NSC" "$VC" "$WORK/$2.pcap" "$3" sent,udp:9
	in_ns "$NSC" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[2])))
for _ in range(int(sys.argv[3])):
    s.sendto(b"x" * 500, (sys.argv[1], 9))' "$1" "$2" "$3"
	wait "$CAPTURE_PID"
}
# flow DST SPORT: the heavy flow's "packets:dst_workload"
flow() {
	"$BLOOMTAP" -j heavy "$VH" -n 100 | python3 -c '
import json, sys
for f in json.load(sys.stdin):
    if f["interval"] == "current" and f["sport"] == int(sys.argv[2]) and f["dst"] == sys.argv[1]:
        print("%d:%s" % (f["packets"], f["dst_workload"]))' "$1" "$2"
}
# traced SPORT: the capture's packets as "seen:dst_workload:drop reason:
# the drop's workload" lines, counted
traced() {
	"$BLOOMTAP" -j trace "$VH" "$WORK/$1.pcap" | python3 -c '
import collections, json, sys
c = collections.Counter("%s:%s:%s" % (p["seen"], p["dst_workload"],
                        ",".join("%s@%s" % (d["reason"], d["workload"]) for d in p.get("drops", [])))
                        for p in json.load(sys.stdin))
print(" ".join("%d %s" % (n, k) for k, n in sorted(c.items())))'
}
send "$PIP" 6001 60
send "$KIP" 6002 40
eq "heavy: the kube play pod's flow, by its name" "$(flow "$PIP" 6001)" "60:$WPOD"
eq "heavy: the kubelet's pod's flow, by its name" "$(flow "$KIP" 6002)" "40:$WK"
eq "trace: each datagram to the kube play pod seen, and dropped in it (NO_SOCKET)" \
	"$(traced 6001)" "60 True:$WPOD:NO_SOCKET@$WPOD"
eq "trace: each datagram to the kubelet's pod seen, and dropped in it (NO_SOCKET)" \
	"$(traced 6002)" "40 True:$WK:NO_SOCKET@$WK"
check "the agent logged no error" bash -c "! grep -i 'error' '$WORK/agent.log'"
summary
[ "$FAIL" = 0 ]
