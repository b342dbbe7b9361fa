#!/usr/bin/env bash
# The container image (make image): its size and what it holds beyond the
# agent's runtime libraries; the OCI archive; and the image run by podman
# against a namespace lab, as the DaemonSet runs it (host network, which
# here is namespace B's; bpffs and the archive from the host; the default
# command reads /etc/bloomtap/bloomtap.conf): it attaches, counts,
# archives, serves /metrics and answers a trace. Once with --privileged,
# once with only the DaemonSet's three capabilities.
#
# podman runs with deploy/containers.conf (runc, explicit ulimits).
source "$(dirname "$0")/../lib/lib.sh"
need_root "image"
export CONTAINERS_CONF=$TOP/deploy/containers.conf

VERSION=$(make -s -C "$TOP" print-version)
IMAGE=localhost/bloomtap:$VERSION
OCI=${BT_OCI:-$TOP/.output/bloomtap_$VERSION.oci.tar}
DEB=${BT_DEB:-$TOP/$(make -s -C "$TOP" print-deb)}
SECCOMP=${BT_SECCOMP:-$TOP/deploy/bloomtap-seccomp.json}
ID=$$
NSA=bt-im-a-$ID NSB=bt-im-b-$ID
VA=btia$ID VB=btib$ID
PORT=9487
TMP=$(mktemp -d)
CTR=bt-image-$ID
cleanup() {
	podman rm -f -t 0 "$CTR" >/dev/null 2>&1
	# the pins are the host's bpffs': detach with the image's own tool
	[ -e /sys/fs/bpf/bloomtap/"$VB" ] && in_ns "$NSB" podman run --rm --privileged --network host \
		-v /sys/fs/bpf:/sys/fs/bpf "$IMAGE" detach --force "$VB" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

podman image exists "$IMAGE" || { fail "no image $IMAGE (make image builds it)"; summary; exit 1; }

# ---- size and contents ----
SIZE=$(podman image inspect --format '{{.Size}}' "$IMAGE")
check "the image is small: $((SIZE / 1000000)) MB, at most 80" test "$SIZE" -le 80000000
in_image() { podman run --rm --entrypoint "$1" "$IMAGE" "${@:2}"; }
eq "bloomtap --version in the image" "$(podman run --rm "$IMAGE" --version)" "bloomtap $VERSION"
in_image /usr/bin/dpkg-query -W -f='${Package} ${Essential}\n' | sed 's/:[^ ]*//' |
	sort > "$TMP/pkgs-ess"
cut -d' ' -f1 "$TMP/pkgs-ess" > "$TMP/pkgs"
# what apt installs with these packages, recursively (its view of the same
# mirror)
closure() {
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances "$@" 2>/dev/null | grep -v '^ ' | sed 's/:.*//; s/[<>]//g'
}
# the runtime closure: the .deb's dependencies
DEPS=$(dpkg-deb -f "$DEB" Depends | sed 's/([^)]*)//g; s/|/,/g; s/,/ /g')
closure $DEPS | sort -u > "$TMP/closure"
BEYOND=$(comm -23 "$TMP/pkgs" "$TMP/closure" | grep -vx bloomtap | tr '\n' ' ')
echo "        $(wc -l < "$TMP/pkgs") packages; beyond the runtime closure: $BEYOND"
# and the rest is Debian's Essential set (mmdebstrap's essential variant)
# with what it depends on: nothing else came in
{ cat "$TMP/closure"; closure $(awk '$2 == "yes" { print $1 }' "$TMP/pkgs-ess"); } | sort -u > "$TMP/allowed"
eq "nothing in the image beyond the runtime closure and the Essential set's" \
	"$(comm -23 "$TMP/pkgs" "$TMP/allowed" | grep -vx bloomtap | tr '\n' ' ')" ""
for p in apt perl libperl5.36 usrmerge; do
	check "not in the image: $p" bash -c "! grep -qx '$p' '$TMP/pkgs'"
done
check "the image holds the seccomp profile, the tree's" bash -c \
	"podman run --rm --entrypoint /usr/bin/cat '$IMAGE' /usr/share/bloomtap/bloomtap-seccomp.json |
	 cmp - '$TOP/deploy/bloomtap-seccomp.json'"
eq "no manual pages or documentation but copyrights" \
	"$(in_image /usr/bin/find /usr/share/man /usr/share/doc -type f ! -name copyright)" ""
check "the OCI archive holds the image" python3 - "$OCI" "$IMAGE" <<'EOF'
import json, sys, tarfile
t = tarfile.open(sys.argv[1])
assert json.load(t.extractfile("oci-layout"))["imageLayoutVersion"] == "1.0.0"
refs = [m.get("annotations", {}).get("org.opencontainers.image.ref.name")
        for m in json.load(t.extractfile("index.json"))["manifests"]]
assert any(r and sys.argv[2].endswith(r) or r == sys.argv[2] for r in refs), refs
EOF

# the archive alone: loaded into a store of its own, it runs
check "the OCI archive loads into another store and runs" bash -c \
	"podman --root '$TMP/store' --runroot '$TMP/runroot' load -q -i '$OCI' >/dev/null &&
	 podman --root '$TMP/store' --runroot '$TMP/runroot' run --rm '$IMAGE' --version | grep -qx 'bloomtap $VERSION'"
podman --root "$TMP/store" --runroot "$TMP/runroot" rmi -a -f >/dev/null 2>&1

# ---- the image against a namespace lab ----
veth_pair "$NSA" "$VA" "$NSB" "$VB" 24 || { fail "namespaces"; summary; exit 1; }
mkdir -p "$TMP/etc" "$TMP/state"
cat > "$TMP/etc/bloomtap.conf" <<EOF
interface = $VB
listen = 127.0.0.1:$PORT
api-socket = /run/bloomtap/api.sock
archive = /var/lib/bloomtap/archive
archive-flush = 0.3
window = 0.5
interval = 2
EOF
LIMIT=$(python3 -c 'import sys, yaml
ds = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d["kind"] == "DaemonSet")
print(ds["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"])' "$TOP/deploy/daemonset.yaml")
LIMIT_BYTES=$(numfmt --from=iec-i "$LIMIT")

run_lab() {	# label, podman options...: the agent's image on the lab, checked, stopped
	local label=$1; shift
	rm -rf "$TMP/state"/*
	in_ns "$NSB" podman run -d --name "$CTR" --network host "$@" \
		-v /sys/fs/bpf:/sys/fs/bpf -v "$TMP/state:/var/lib/bloomtap" \
		-v "$TMP/etc:/etc/bloomtap:ro" "$IMAGE" > /dev/null ||
		{ fail "$label: podman run"; return; }
	agent_on_lab "$label" "$NSA" "$NSB" "$VB" 198.18.24.2 "$PORT" "$TMP/state/archive"
	# the memory cgroup's peak: the agent and the maps the kernel charged
	# to it; what the DaemonSet's limit must hold
	local cg peak=
	cg=$(podman inspect --format '{{.State.CgroupPath}}' "$CTR")
	for f in "/sys/fs/cgroup/memory$cg/memory.max_usage_in_bytes" "/sys/fs/cgroup$cg/memory.peak"; do
		[ -r "$f" ] && peak=$(cat "$f") && break
	done
	check "$label: its memory peak ($((${peak:-0} / 1000000)) MB) fits the DaemonSet's limit ($LIMIT)" \
		test -n "$peak" -a "${peak:-0}" -le "$LIMIT_BYTES"
	podman stop -t 20 "$CTR" >/dev/null
	eq "$label: SIGTERM stops it cleanly" "$(podman inspect --format '{{.State.ExitCode}}' "$CTR")" 0
	podman logs "$CTR" > "$TMP/agent.log" 2>&1
	check "$label: nothing logged as an error or a warning" bash -c "! grep -E 'error|warning' '$TMP/agent.log'"
	podman rm "$CTR" >/dev/null
	check "$label: the image's tool detaches" in_ns "$NSB" podman run --rm --network host "$@" \
		-v /sys/fs/bpf:/sys/fs/bpf "$IMAGE" detach "$VB"
}
run_lab "privileged" --privileged
# as deploy/daemonset.yaml: not privileged, every capability dropped but
# three, a read-only root file system, and the seccomp profile that lets them call bpf(2): the runtime's
# default allows it to CAP_SYS_ADMIN alone
THREE="--cap-drop=all --cap-add=bpf,net_admin,perfmon --read-only"
xdp_probe() { awk '$1 == "bpf_xdp_programs" {print $2}' <<<"$1"; }
KERNEL=$(podman run --rm $THREE "$IMAGE" kernel)
eq "three capabilities under the runtime's default seccomp profile: bpf(2) refused" "$(xdp_probe "$KERNEL")" unknown
check "and bloomtap kernel says a seccomp filter may be why" grep -q 'a seccomp filter is on here' <<<"$KERNEL"
eq "under bloomtap's profile: bpf(2) answers" \
	"$(xdp_probe "$(podman run --rm $THREE --security-opt seccomp="$SECCOMP" "$IMAGE" kernel)")" yes
run_lab "three capabilities" $THREE --security-opt seccomp="$SECCOMP"

# docs/install.md's podman lines as they stand, from a copy of the tree's
# files (what a clone has: nothing a build made), with the lab's container
# name and directories
mkdir -p "$TMP/clone"
git -C "$TOP" ls-files -z | (cd "$TOP" && xargs -0 cp --parents -t "$TMP/clone")
sed -n '/^<!-- podman-run -->$/,/^<!-- \/podman-run -->$/p' "$TOP/docs/install.md" |
	grep -v '^<!--\|^```' | sed -e "s|--name bloomtap|--name $CTR|" \
	-e "s|-v /var/lib/bloomtap:|-v $TMP/state:|" -e "s|-v /etc/bloomtap:|-v $TMP/etc:|" > "$TMP/doc-lines"
eq "docs/install.md's podman lines: the export and the run" "$(grep -c '^export \|^podman run' "$TMP/doc-lines")" 2
rm -rf "$TMP/state"/*
check "docs/install.md's podman lines, run in a copy of the tree" \
	in_ns "$NSB" bash -ec "cd '$TMP/clone'; $(cat "$TMP/doc-lines")"
agent_on_lab "docs/install.md's podman run" "$NSA" "$NSB" "$VB" 198.18.24.2 "$PORT" "$TMP/state/archive"
podman stop -t 20 "$CTR" >/dev/null
eq "docs/install.md's podman run: SIGTERM stops it cleanly" \
	"$(podman inspect --format '{{.State.ExitCode}}' "$CTR")" 0
podman rm "$CTR" >/dev/null
check "the image's tool detaches" in_ns "$NSB" podman run --rm --network host $THREE \
	--security-opt seccomp="$SECCOMP" -v /sys/fs/bpf:/sys/fs/bpf "$IMAGE" detach "$VB"
summary
[ $FAIL -eq 0 ]
