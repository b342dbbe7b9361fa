#!/usr/bin/env bash
# The Debian package (make deb): lintian finds no error or warning; it
# installs with apt, prints its version, makes the user bloomtap and
# enables nothing; the installed agent runs as the unit runs it (that
# user, three capabilities, the unit's own ExecStartPre) on a namespace
# lab: attaches, counts, archives, serves /metrics and answers a trace;
# and dpkg --purge leaves the file system as it found it.
#
# It installs into this machine's root (what an operator does): skipped,
# saying so, when a bloomtap is installed already (the operator's own,
# never replaced; the systemd guest installs the .deb on a fresh Debian). The agent's bpffs is the test's own
# (a mount namespace, as tests/live/privs.sh), so the host's pins are untouched.
source "$(dirname "$0")/../lib/lib.sh"
need_root "package"
if [ -z "$BT_PKG_INNER" ]; then
	exec unshare --mount --propagation private env BT_PKG_INNER=1 bash "$0" "$@"
fi

VERSION=$(make -s -C "$TOP" print-version)
DEB=${BT_DEB:-$TOP/$(make -s -C "$TOP" print-deb)}
ID=$$
NSA=bt-pk-a-$ID NSB=bt-pk-b-$ID
VA=btka$ID VB=btkb$ID
PORT=9486
CAPS=+bpf,+net_admin,+perfmon
TMP=$(mktemp -d)
AGENT=
INSTALLED=
SAVED=()
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	cleanup_netns
	# a failed run does not leave the package behind
	[ -n "$INSTALLED" ] && dpkg --purge bloomtap >/dev/null 2>&1
	for d in "${SAVED[@]}"; do rm -rf "$d"; mv "$d.package-test-$ID" "$d"; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

[ -f "$DEB" ] || { fail "no package at $DEB (make deb builds it)"; summary; exit 1; }
if dpkg-query -W -f='${Status}' bloomtap 2>/dev/null | grep -q 'ok installed'; then
	skip_all "bloomtap $(dpkg-query -W -f='${Version}' bloomtap) is installed on this machine: the test would replace it (dpkg --purge bloomtap lets it run; the systemd guest installs the .deb all the same)"
fi
# What an earlier run or install left (any `bloomtap run` makes
# /var/lib/bloomtap) is set aside for the test and put back after it:
# purge must find the paths as the package made them, and the machine's
# own stay as they were.
for d in /var/lib/bloomtap /run/bloomtap /etc/bloomtap; do
	[ -e "$d" ] || continue
	mv "$d" "$d.package-test-$ID" || { fail "setting $d aside"; summary; exit 1; }
	SAVED+=("$d")
done

# ---- lintian ----
CHANGES=$(ls "$(dirname "$DEB")"/deb/bloomtap_"$VERSION"_*.changes 2>/dev/null | head -1)
lintian --pedantic --fail-on none "${CHANGES:-$DEB}" > "$TMP/lintian.txt" 2>&1
sed 's/^/        /' "$TMP/lintian.txt"
eq "lintian: no error" "$(grep -c '^E:' "$TMP/lintian.txt")" 0
eq "lintian: no warning but those overridden with a reason" "$(grep -c '^W:' "$TMP/lintian.txt")" 0
check "lintian: every override has its comment" python3 - "$TOP/debian/bloomtap.lintian-overrides" <<'EOF'
import sys
prev = ""
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#") and not prev.startswith("#"):
        sys.exit("no comment above: " + line.strip())
    prev = line
EOF

# ---- what the machine holds before ----
snapshot() {	# every path on the root file system but the volatile ones
	find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /var/tmp -o -path /var/log -o -path /var/cache -o -path "$TOP" -o -path /root \
		-o -path /var/lib/apt/lists -o -path /var/lib/containers \) -prune -o -print | sort
}
snapshot > "$TMP/before"

# ---- install ----
check "apt-get install the .deb" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$DEB"
dpkg-query -W -f='${Status}' bloomtap 2>/dev/null | grep -q 'ok installed' && INSTALLED=1
eq "dpkg knows its version" "$(dpkg-query -W -f='${Version}' bloomtap)" "$VERSION"
eq "bloomtap --version prints the package's version" "$(/usr/sbin/bloomtap --version)" "bloomtap $VERSION"
check "its runtime dependencies are computed (libbpf1, libpcap0.8 among them)" bash -c \
	"dpkg-query -W -f='\${Depends}' bloomtap | grep -q 'libbpf1 (>=' &&
	 dpkg-query -W -f='\${Depends}' bloomtap | grep -q 'libpcap0.8 (>='"
check "the configuration is a conffile" bash -c \
	"dpkg-query -W -f='\${Conffiles}' bloomtap | grep -q '^ /etc/bloomtap/bloomtap.conf '"
IFS=: read -r _ _ UID_ GID_ _ HOME_ SHELL_ < <(getent passwd bloomtap)
check "postinst made the system user bloomtap (uid $UID_)" test -n "$UID_" -a "${UID_:-1000}" -lt 1000
eq "its home is the archive's directory, no login" "$HOME_ $SHELL_" "/var/lib/bloomtap /usr/sbin/nologin"
eq "and its group" "$(getent group bloomtap | cut -d: -f3)" "$GID_"
eq "the unit is not enabled" "$(systemctl --root=/ is-enabled bloomtap.service 2>&1)" "disabled"
check "the unit runs the installed binary" grep -qx \
	'ExecStart=/usr/sbin/bloomtap run --config /etc/bloomtap/bloomtap.conf --recreate-incompatible' /lib/systemd/system/bloomtap.service
check "systemd-analyze verify the installed unit" bash -c \
	"out=\$(systemd-analyze verify /lib/systemd/system/bloomtap.service 2>&1 | grep -v '^Failed to connect to bus'); [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
eq "man bloomtap finds the page" "$(man -w bloomtap)" /usr/share/man/man8/bloomtap.8.gz
check "the page documents run" bash -c "MANPAGER=cat MANWIDTH=100 man 8 bloomtap 2>/dev/null | grep -q 'bloomtap run \\[options\\] IFACE'"
check "bash completion is loaded for bloomtap" bash -c \
	"source /usr/share/bash-completion/bash_completion; _completion_loader bloomtap; complete -p bloomtap | grep -q _bloomtap"
check "the Grafana dashboard is JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \
	/usr/share/bloomtap/grafana/bloomtap.json
check "the container's seccomp profile: the tree's" cmp /usr/share/bloomtap/bloomtap-seccomp.json \
	"$TOP/deploy/bloomtap-seccomp.json"

# ---- the agent from the installed files, as the unit runs it ----
mount -t bpf bpffs /sys/fs/bpf || { fail "a bpffs of the test's own"; summary; exit 1; }
# the unit's ExecStartPre (its + runs as root), read from the installed unit
PRE=$(python3 - /lib/systemd/system/bloomtap.service <<'EOF'
import shlex, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
for line in text.splitlines():
    if line.startswith("ExecStartPre=+"):
        print(shlex.split(line[len("ExecStartPre=+"):])[2])
EOF
)
check "the unit's ExecStartPre prepares bpffs" /bin/sh -c "$PRE"
# what systemd makes for StateDirectory= and RuntimeDirectory=
install -d -o bloomtap -g bloomtap -m 0700 /var/lib/bloomtap /run/bloomtap
veth_pair "$NSA" "$VA" "$NSB" "$VB" 23 || { fail "namespaces"; summary; exit 1; }
sed -e "s/^interface = .*/interface = $VB/" -e "s/^listen = .*/listen = 127.0.0.1:$PORT/" \
	/etc/bloomtap/bloomtap.conf > "$TMP/bloomtap.conf"
echo "archive-flush = 0.3" >> "$TMP/bloomtap.conf"
chmod 0755 "$TMP"; chmod 0644 "$TMP/bloomtap.conf"
nsenter --net=/var/run/netns/"$NSB" setpriv --reuid=bloomtap --regid=bloomtap --init-groups \
	--inh-caps=-all,$CAPS --ambient-caps=-all,$CAPS --bounding-set=-all,$CAPS --no-new-privs \
	/usr/sbin/bloomtap run --config "$TMP/bloomtap.conf" > "$TMP/agent.log" 2>&1 &
AGENT=$!
agent_on_lab "" "$NSA" "$NSB" "$VB" 198.18.23.2 "$PORT" /var/lib/bloomtap/archive /run/bloomtap/api.sock
eq "the agent runs as bloomtap" "$(awk '/^Uid:/ {print $2}' /proc/$AGENT/status)" "$UID_"
eq "the metrics name the package's version" "$(in_ns "$NSB" curl -s -m 5 "127.0.0.1:$PORT/metrics" |
	grep -c "^bloomtap_build_info{version=\"$VERSION\"} 1")" 1
kill -TERM "$AGENT"; wait "$AGENT"; AGENT=
check "detached by the installed tool" in_ns "$NSB" /usr/sbin/bloomtap detach "$VB"
# the unit's three capabilities name no workload (docs/workloads.md
# "Privileges"): said once, and nothing else
check "the workloads' warning: the two capabilities it lacks, named" \
	grep -q "workloads: not permitted .*CAP_SYS_PTRACE.*CAP_SYS_ADMIN" "$TMP/agent.log"
check "nothing else logged as an error or a warning" bash -c \
	"! grep -E 'error|warning' '$TMP/agent.log' | grep -v 'workloads: not permitted'"
cleanup_netns
umount /sys/fs/bpf

# ---- an upgrade keeps the admin's configuration ----
# the same tree (BT_SRC, the .deb's: a mutant's under make test-mutants),
# one changelog entry newer, built as make deb builds
NEXT=$VERSION+upgradetest1
mkdir -p "$TMP/src"
(cd "${BT_SRC:-$TOP}" && tar -c --exclude=./.output* --exclude=./.git .) | tar -x -C "$TMP/src"
{ printf 'bloomtap (%s) unstable; urgency=medium\n\n  * An upgrade, for tests/package.sh.\n\n' "$NEXT"
  printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' "$TOP/debian/control")" "$(date -R)"
  cat "$TOP/debian/changelog"; } > "$TMP/src/debian/changelog"
if (cd "$TMP/src" && dpkg-buildpackage -us -uc -b > "$TMP/build.log" 2>&1); then
	echo "# the admin's line" >> /etc/bloomtap/bloomtap.conf
	check "apt-get install the next version over it" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q "$TMP"/bloomtap_"$NEXT"_*.deb
	eq "upgraded: bloomtap --version" "$(/usr/sbin/bloomtap --version)" "bloomtap $NEXT"
	check "the admin's edit of the conffile kept" grep -qx "# the admin's line" /etc/bloomtap/bloomtap.conf
	eq "the same user" "$(getent passwd bloomtap | cut -d: -f3)" "$UID_"
	eq "and still not enabled" "$(systemctl --root=/ is-enabled bloomtap.service 2>&1)" "disabled"
else
	fail "the next version's package builds"; tail -20 "$TMP/build.log" | sed 's/^/        /'
fi

# ---- remove, then purge ----
# remove takes the program and keeps what an operator would miss: the
# archive, the user (the archive's owner) and the configuration
check "dpkg --remove bloomtap" dpkg --remove bloomtap
check "removed: the program is gone" test ! -e /usr/sbin/bloomtap
check "removed: the archive stays (the agent's windows)" bash -c "ls /var/lib/bloomtap/archive/*.btw >/dev/null"
eq "removed: the user stays" "$(getent passwd bloomtap | cut -d: -f3)" "$UID_"
check "removed: the configuration stays" grep -qx "# the admin's line" /etc/bloomtap/bloomtap.conf
check "dpkg --purge bloomtap" dpkg --purge bloomtap
dpkg-query -W -f='${Status}' bloomtap 2>/dev/null | grep -q 'ok installed' || INSTALLED=
snapshot > "$TMP/after"
diff "$TMP/before" "$TMP/after" > "$TMP/diff"
eq "purge leaves no file behind (paths before and after: $(wc -l < "$TMP/before"))" \
	"$(grep -c '^[<>]' "$TMP/diff")" 0
sed 's/^/        /' "$TMP/diff" | head -20
eq "nor the user and group bloomtap" "$(getent passwd bloomtap; getent group bloomtap)" ""
check "nor /run/bloomtap" test ! -e /run/bloomtap
summary
[ $FAIL -eq 0 ]
