#!/usr/bin/env bash
# bloomtap workloads: the node's workloads found from the node itself.
# Real containers made by podman (runc, deploy/containers.conf) from an
# image imported from the host's busybox-static (no registry), on a podman
# network of 198.19.X.0/24 (the containers send nothing): a container
# (name and id), a pod of a Kubernetes Pod manifest (podman kube play: its
# pod name, its containers), a container under a kubepods cgroup parent
# with the kubelet's /var/log/pods and /var/log/containers entries laid out
# under a root of the test's own (--root), a plain `ip netns add`
# namespace with an address, one named with a tab and a dollar (escaped in
# text, exact in JSON), and two namespaces that vanish between the walk
# and the entering (held there by BLOOMTAP_TEST_PAUSE): one by name, one
# held by a process. Every container, pod, network, namespace and cgroup
# made is removed on exit, also on failure.
source "$(dirname "$0")/../lib/lib.sh"
need_root "workloads"
need_podman "workloads"

ID=$$
IMG=localhost/btwl-test:$ID
NET=btwl-$ID
SUB=198.19.$((ID % 250)).0/24
CTR=btwl-c-$ID
KCTR=btwl-k-$ID
POD=btwl-pod-$ID
PLAIN=btwl-plain-$ID
ODD=$'btwl odd\t$'$ID
GONE=btwl-gone-$ID
UID_K=$(cat /proc/sys/kernel/random/uuid)
WORK=$(mktemp -d /tmp/bt-workloads.XXXXXX)
HOLDER=
# podman kube play builds its infra image when it is missing: removed
# again only then (and only when no other pod uses it)
PAUSE_BEFORE=$(podman images -q --filter reference=localhost/podman-pause 2>/dev/null)

cleanup() {
	[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null && wait "$HOLDER" 2>/dev/null
	[ -f "$WORK/pod.yaml" ] && podman kube down "$WORK/pod.yaml" >/dev/null 2>&1
	podman pod rm -f "$POD" >/dev/null 2>&1
	podman rm -f -t 0 "$CTR" "$KCTR" >/dev/null 2>&1
	podman network rm -f "$NET" >/dev/null 2>&1
	podman rmi -f "$IMG" >/dev/null 2>&1
	[ -z "$PAUSE_BEFORE" ] &&
		podman rmi $(podman images -q --filter reference=localhost/podman-pause) >/dev/null 2>&1
	# the kubepods parent podman made under every hierarchy (conmon's
	# cgroup inside it), then its parents when nobody else's are in them
	for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
		[ -d "$h/kubepods/besteffort/pod$UID_K" ] || continue
		find "$h/kubepods/besteffort/pod$UID_K" -depth -type d -exec rmdir {} \; 2>/dev/null
		rmdir "$h/kubepods/besteffort" "$h/kubepods" 2>/dev/null
	done
	for ns in "$PLAIN" "$ODD" "$GONE"; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

podman_busybox_image "$IMG" "$WORK" || { fail "podman import of busybox-static"; summary; exit 1; }
check "podman network on $SUB" podman network create --subnet "$SUB" "$NET"

check "a podman container" podman run -d --name "$CTR" --network "$NET" "$IMG" sleep 600
CID=$(podman inspect -f '{{.Id}}' "$CTR" 2>/dev/null)
cat > "$WORK/pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $POD
  namespace: btwl-ns
spec:
  containers:
  - name: web
    image: $IMG
    command: ["/bin/sleep", "600"]
EOF
check "a pod from a Kubernetes manifest (podman kube play)" \
	podman kube play --network "$NET" "$WORK/pod.yaml"
check "a container under a kubepods cgroup parent" podman run -d --name "$KCTR" \
	--network "$NET" --cgroup-parent "/kubepods/besteffort/pod$UID_K" "$IMG" sleep 600
KID=$(podman inspect -f '{{.Id}}' "$KCTR" 2>/dev/null)
# the kubelet's layout for that pod, under a root of the test's own
ROOT=$WORK/root
mkdir -p "$ROOT/var/log/pods/btwl-kns_kpod-0_$UID_K/app" "$ROOT/var/log/containers"
: > "$ROOT/var/log/pods/btwl-kns_kpod-0_$UID_K/app/0.log"
ln -s "../pods/btwl-kns_kpod-0_$UID_K/app/0.log" \
	"$ROOT/var/log/containers/kpod-0_btwl-kns_app-$KID.log"

check "a plain namespace" ip netns add "$PLAIN"
check "its address" ip -n "$PLAIN" addr add 198.19.250.1/32 dev lo
check "a namespace with a tab and a dollar in its name" ip netns add "$ODD"
PLAIN_INO=$(stat -L -c %i "/run/netns/$PLAIN")
ODD_INO=$(stat -L -c %i "/run/netns/$ODD")

"$BLOOMTAP" -j workloads > "$WORK/wl.json" 2> "$WORK/wl.err"
eq "workloads -j exits 0" $? 0
BT_WORKLOADS_ROOT=$ROOT "$BLOOMTAP" -j workloads > "$WORK/wlk.json" 2>> "$WORK/wl.err"
eq "workloads -j with BT_WORKLOADS_ROOT exits 0" $? 0
"$BLOOMTAP" workloads > "$WORK/wl.txt" 2>> "$WORK/wl.err"
eq "workloads (text) exits 0" $? 0
# q FILE EXPR: EXPR over the workloads, w the list; by_ctr(ID) the
# workload holding a container, by_ino(N) a namespace's
q() {
	python3 - "$1" "$2" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
def by_ctr(i):
    return next((x for x in w if any(c["id"] == i for c in x["containers"])), None)
def ctr(i):
    x = by_ctr(i)
    return next(c for c in x["containers"] if c["id"] == i) if x else None
def by_ino(n):
    return next((x for x in w if x["netns"]["inode"] == int(n)), None)
print(eval(sys.argv[2]))
PY
}
F=$WORK/wl.json
eq "the container: kind" "$(q $F "by_ctr('$CID')['kind']")" container
eq "the container: name" "$(q $F "ctr('$CID')['name']")" "$CTR"
eq "the container: runtime" "$(q $F "by_ctr('$CID')['runtime']")" podman
eq "the container: its address is on the podman network" \
	"$(q $F "any(a['address'].startswith('${SUB%.0/24}.') for a in by_ctr('$CID')['addresses'])")" True
eq "the container: its PID, as podman says" \
	"$(q $F "ctr('$CID')['pids']")" "[$(podman inspect -f '{{.State.Pid}}' "$CTR")]"
eq "the container: its namespace's inode, as /proc says" "$(q $F "by_ctr('$CID')['netns']['inode']")" \
	"$(stat -L -c %i /proc/"$(podman inspect -f '{{.State.Pid}}' "$CTR")"/ns/net)"
WEB=$(podman inspect -f '{{.Id}}' "$POD-web" 2>/dev/null)
eq "the kube pod: kind" "$(q $F "by_ctr('$WEB')['kind']")" pod
eq "the kube pod: its pod's name" "$(q $F "by_ctr('$WEB')['pod']")" "$POD"
eq "the kube pod: podman's pod id" "$(q $F "by_ctr('$WEB')['pod_id']")" \
	"$(podman pod inspect -f '{{.Id}}' "$POD")"
eq "the kube pod: the container's name" "$(q $F "ctr('$WEB')['name']")" "$POD-web"
eq "the kube pod: its infra container beside it, marked" \
	"$(q $F "[c['infra'] for c in by_ctr('$WEB')['containers']]")" "[False, True]"
# podman kube play keeps no Kubernetes namespace (metadata.namespace is
# in neither its database nor the container's bundle): none is invented
eq "the kube pod: no namespace made up" "$(q $F "by_ctr('$WEB')['namespace']")" None
eq "the kubepods container, without the kubelet's files: its pod UID" \
	"$(q $F "by_ctr('$KID')['pod_uid']")" "$UID_K"
F=$WORK/wlk.json
eq "the kubepods container: kind" "$(q $F "by_ctr('$KID')['kind']")" pod
eq "the kubepods container: namespace from /var/log/pods" "$(q $F "by_ctr('$KID')['namespace']")" btwl-kns
eq "the kubepods container: pod from /var/log/pods" "$(q $F "by_ctr('$KID')['pod']")" kpod-0
eq "the kubepods container: container from /var/log/containers" "$(q $F "ctr('$KID')['name']")" app
eq "the kubepods container: runtime from its cgroup" "$(q $F "by_ctr('$KID')['runtime']")" podman
F=$WORK/wl.json
eq "the plain namespace: kind" "$(q $F "by_ino($PLAIN_INO)['kind']")" netns
eq "the plain namespace: name" "$(q $F "by_ino($PLAIN_INO)['netns']['name']")" "$PLAIN"
eq "the plain namespace: address" "$(q $F "by_ino($PLAIN_INO)['addresses']")" \
	"[{'address': '198.19.250.1', 'prefixlen': 32, 'ifname': 'lo'}]"
eq "the odd name, exact in JSON" "$(q $F "by_ino($ODD_INO)['netns']['name'] == '''$ODD'''")" True
check "the odd name, escaped in text" grep -qF "netns $ODD_INO btwl\\x20odd\\x09\$$ID" "$WORK/wl.txt"
eq "the text lists the container by name" "$(grep -c "^container $CTR runtime podman" "$WORK/wl.txt")" 1
eq "nothing on stderr" "$(cat "$WORK/wl.err")" ""

# descriptors run out (a socket a namespace): 7 leave room for the walk
# and two sockets, while four of the test's namespaces have addresses.
# Every namespace is still listed; those without a socket without their
# addresses (and names that needed a file are missing: no error either)
(ulimit -n 7; "$BLOOMTAP" -j workloads) > "$WORK/fd.json" 2> "$WORK/fd.err"
eq "with 7 descriptors: exits 0" $? 0
eq "with 7 descriptors: the plain namespace listed" "$(q "$WORK/fd.json" "by_ino($PLAIN_INO)['kind']")" netns
eq "with 7 descriptors: the odd one listed" "$(q "$WORK/fd.json" "by_ino($ODD_INO)['kind']")" netns
eq "with 7 descriptors: the container listed" "$(q "$WORK/fd.json" "by_ctr('$CID')['kind']")" container
eq "with 7 descriptors: the kube pod listed" "$(q "$WORK/fd.json" "by_ctr('$WEB')['kind']")" pod
eq "with 7 descriptors: the kubepods container listed" "$(q "$WORK/fd.json" "by_ctr('$KID')['kind']")" pod
eq "with 7 descriptors: two of those four addresses' namespaces dumped at most" \
	"$(q "$WORK/fd.json" "sum(1 for x in (by_ino($PLAIN_INO), by_ctr('$CID'), by_ctr('$WEB'), by_ctr('$KID')) if x['addresses']) <= 2")" True

# vanishing mid-scan: seen by the walk, gone before it is entered
ip netns add "$GONE"
unshare --net sleep 600 &
HOLDER=$!
held() { [ "$(stat -L -c %i /proc/$HOLDER/ns/net)" != "$(stat -L -c %i /proc/self/ns/net)" ]; }
wait_for "the holder's namespace" 10 held
GONE_INO=$(stat -L -c %i "/run/netns/$GONE")
HELD_INO=$(stat -L -c %i /proc/$HOLDER/ns/net)
BLOOMTAP_TEST_PAUSE=workloads-enter:$WORK/go "$BLOOMTAP" -j workloads > "$WORK/gone.json" 2> "$WORK/gone.err" &
SCAN=$!
wait_for "the scan paused between the walk and the entering" 30 grep -q "paused at workloads-enter" "$WORK/gone.err"
ip netns del "$GONE"
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null; HOLDER=
touch "$WORK/go"
wait "$SCAN"
eq "a scan whose namespaces vanish exits 0" $? 0
eq "the namespace deleted by name is left out" "$(q "$WORK/gone.json" "by_ino($GONE_INO)")" None
eq "the namespace of a process that exited is left out" "$(q "$WORK/gone.json" "by_ino($HELD_INO)")" None
eq "the others are still there" "$(q "$WORK/gone.json" "by_ino($PLAIN_INO)['kind']")" netns

# incremental: a refresh enters nothing and dumps nothing unchanged; a
# new address in a namespace already entered is dumped on the next one
"$BLOOMTAP" workloads --repeat 3 > /dev/null 2> "$WORK/rep.err"
check "--repeat: refreshes entered no namespace and dumped no address again" \
	grep -q "over 3 (0 entered, 0 dumps, 0 named in all)" "$WORK/rep.err"

# without the capabilities to read other processes' namespaces and to
# enter them, the scan says so (once) and names what it needs
check "root with every capability: no warning" bash -c "! grep -q 'not permitted' '$WORK/wl.err'"
setpriv --inh-caps=-sys_admin,-sys_ptrace --bounding-set=-sys_admin,-sys_ptrace \
	"$BLOOMTAP" workloads > /dev/null 2> "$WORK/caps.err"
eq "workloads without CAP_SYS_ADMIN and CAP_SYS_PTRACE exits 0" $? 0
check "... and names both capabilities" grep -q "CAP_SYS_PTRACE.*CAP_SYS_ADMIN, setns" "$WORK/caps.err"
check "... counting the plain namespace it could not enter" \
	grep -Eq "or to enter [1-9][0-9]* namespaces" "$WORK/caps.err"

# errors
expect_fail "a --root that does not exist: refused (a typo would lose every name)" \
	"--root /nonexistent-$ID: No such file or directory" "$BLOOMTAP" workloads --root "/nonexistent-$ID"
expect_fail "two arguments are refused" "expected [IFACE], got too many arguments" \
	"$BLOOMTAP" workloads extra more
expect_fail "an interface with no instance: refused" "no bloomtap instance 'btwl-none-$ID'" \
	"$BLOOMTAP" workloads "btwl-none-$ID"
check "--help" "$BLOOMTAP" workloads --help
summary
[ "$FAIL" = 0 ]
