#!/usr/bin/env bash
# deploy/: the systemd unit verifies, the Kubernetes manifest and the
# Prometheus configuration are valid.
source "$(dirname "$0")/../lib/lib.sh"
D=$TOP/deploy
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# make deps installs systemd: without systemd-analyze this suite fails
# rather than skip the install, man-page and completion checks with it
command -v systemd-analyze >/dev/null || { fail "systemd-analyze is not installed (make deps installs systemd)"; summary; exit 1; }
# verify: exit 0 and nothing said but that no system bus runs (a build
# machine without systemd as init)
# (Documentation=man:bloomtap(8) is looked up: the page of this build)
mkdir -p "$TMP/man/man8"
python3 "$TOP/deploy/bloomtap-man.py" "$BLOOMTAP" > "$TMP/man/man8/bloomtap.8"
verify() {
	local out rc
	out=$(MANPATH=$TMP/man systemd-analyze verify "$1" 2>&1); rc=$?
	out=$(grep -v '^Failed to connect to bus' <<<"$out")
	[ $rc -eq 0 ] && [ -z "$out" ] || { echo "exit $rc: $out"; return 1; }
}
# verify wants the ExecStart binary where the unit says; point it at the build
sed "s|/usr/local/sbin/bloomtap|$BLOOMTAP|" "$D/bloomtap.service" > "$TMP/bloomtap.service"
check "systemd-analyze verify bloomtap.service" verify "$TMP/bloomtap.service"
check "unit keeps bpf(2) capabilities only" bash -c \
	"grep -q '^CapabilityBoundingSet=CAP_BPF CAP_NET_ADMIN CAP_PERFMON$' '$D/bloomtap.service'"
check "the unit runs as the user bloomtap, never root" bash -c \
	"grep -qx 'User=bloomtap' '$D/bloomtap.service' && ! grep -q '^User=root' '$D/bloomtap.service'"
# the exposure systemd computes: 2.5 at most (it was 4.3 as root)
EXPOSURE=$(systemd-analyze security --offline=yes "$TMP/bloomtap.service" 2>&1 |
	sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
check "systemd-analyze security: exposure $EXPOSURE, at most 2.5" \
	python3 -c 'import sys; sys.exit(not 0 < float(sys.argv[1]) <= 2.5)' "${EXPOSURE:-0}"
# a mount unit the unit names is one systemd has
for m in $(grep -oE '[a-z0-9-]+\.mount' "$D/bloomtap.service" | sort -u); do
	check "the unit names $m: it exists" bash -c "systemctl cat '$m' >/dev/null 2>&1 ||
		ls /lib/systemd/system/$m /usr/lib/systemd/system/$m"
done
eq "Documentation= is the man page make install installs" \
	"$(sed -n 's/^Documentation=//p' "$D/bloomtap.service")" "man:bloomtap(8)"
# the example, on lo and a scratch archive, checked without attaching
sed -e 's/^interface = .*/interface = lo/' -e "s|^archive = .*|archive = $TMP/archive|" \
	"$D/bloomtap.conf" > "$TMP/bloomtap.conf"
OUT=$("$BLOOMTAP" run --check --config "$TMP/bloomtap.conf" 2>&1); RC=$?
eq "example configuration passes bloomtap run --check" "$RC" 0
# safe as shipped: the port (loopback) serves /metrics alone; the API is on
# the socket, mode 0600 (it served the API to every local user)
check "the packaged configuration: $(tail -1 <<<"$OUT")" grep -q \
	'^HTTP on 127.0.0.1:9477 (loopback, .*): /metrics and /healthz alone; the API on the socket /run/bloomtap/api.sock' <<<"$OUT"
# and the same check says so of an open one
sed -e '/^listen-metrics-only/d' "$TMP/bloomtap.conf" > "$TMP/open.conf"
OUT=$("$BLOOMTAP" run --check --config "$TMP/open.conf" --listen 0.0.0.0:9477 2>&1)
check "a configuration that opens the API to the network: run --check warns" grep -q \
	'warning: the API is open to the network: HTTP on 0.0.0.0:9477 (beyond loopback, no password' <<<"$OUT"
# prometheus-kubernetes.yml and daemonset.yaml: tests/ship/manifests.sh
check "promtool check config prometheus.yml" promtool check config "$D/prometheus.yml"

# ---- make install into a DESTDIR, then uninstall ----
DEST=$TMP/dest
check "make install DESTDIR=... PREFIX=/usr" make -s -C "$TOP" install DESTDIR="$DEST" PREFIX=/usr
for f in usr/sbin/bloomtap usr/lib/systemd/system/bloomtap.service usr/share/man/man8/bloomtap.8 \
	 usr/share/bash-completion/completions/bloomtap usr/share/bloomtap/bloomtap.conf.example \
	 usr/share/bloomtap/grafana/bloomtap.json usr/share/bloomtap/bloomtap-seccomp.json \
	 usr/share/bloomtap/bloomtap-workloads.conf \
	 etc/bloomtap/bloomtap.conf usr/share/bloomtap/installed \
	 usr/lib/sysusers.d/bloomtap.conf; do
	check "installed: /$f" test -s "$DEST/$f"
done
eq "the binary's mode" "$(stat -c %a "$DEST/usr/sbin/bloomtap")" 755
eq "the unit runs the installed binary" "$(grep '^ExecStart=' "$DEST/usr/lib/systemd/system/bloomtap.service")" \
	"ExecStart=/usr/sbin/bloomtap run --config /etc/bloomtap/bloomtap.conf --recreate-incompatible"
check "the installed binary runs" "$DEST/usr/sbin/bloomtap" --version
sed "s|/usr/sbin/bloomtap|$DEST/usr/sbin/bloomtap|" "$DEST/usr/lib/systemd/system/bloomtap.service" \
	> "$TMP/installed.service"
check "systemd-analyze verify the installed unit" verify "$TMP/installed.service"
check "the sysusers file makes the user bloomtap" bash -c \
	"mkdir -p '$TMP/sysroot/etc' && systemd-sysusers --root='$TMP/sysroot' '$DEST/usr/lib/sysusers.d/bloomtap.conf' &&
	 grep -q '^bloomtap:x:[0-9]*:[0-9]*:.*:/var/lib/bloomtap:/usr/sbin/nologin' '$TMP/sysroot/etc/passwd'"

# reproducible: SOURCE_DATE_EPOCH sets the page's date
M1=$(SOURCE_DATE_EPOCH=86400 python3 "$TOP/deploy/bloomtap-man.py" "$BLOOMTAP")
M2=$(SOURCE_DATE_EPOCH=86400 python3 "$TOP/deploy/bloomtap-man.py" "$BLOOMTAP")
check "the man page with SOURCE_DATE_EPOCH: the same twice, dated by it" bash -c \
	"[ \"\$1\" = \"\$2\" ] && grep -q '^.TH BLOOMTAP 8 \"1970-01-02\"' <<<\"\$1\"" _ "$M1" "$M2"
# the man page: renders without a warning, and holds every command and
# option of --help
MAN=$DEST/usr/share/man/man8/bloomtap.8
eq "man -l renders bloomtap(8) without warnings" "$(MANWIDTH=100 man --warnings -l "$MAN" 2>&1 >/dev/null)" ""
MANWIDTH=1000 man -l "$MAN" 2>/dev/null > "$TMP/man.txt"
CMDS=$("$BLOOMTAP" --help | awk '/^Commands:/ { on = 1; next } on && !NF { on = 0 } on { print $1 }')
check "--help lists commands ($(echo $CMDS | wc -w))" test "$(echo $CMDS | wc -w)" -ge 10
MISSING=
for c in $CMDS "watch load" "watch show" "watch test" "watch set" "watch clear"; do
	grep -q "bloomtap $c " "$TMP/man.txt" || MISSING="$MISSING [$c]"
	for o in $("$BLOOMTAP" $c --help | grep -oE -- '(^| )--[a-z0-9-]+' | tr -d ' ' | sort -u); do
		grep -q -- "$o" "$TMP/man.txt" || MISSING="$MISSING $c:$o"
	done
done
eq "every command and option of --help is in the man page" "$MISSING" ""

# the completion, driven through its function as bash would
comp() {	# words...: what the completion offers for the last one
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _bloomtap
		printf "%s\n" "${COMPREPLY[@]}"' _ "$DEST/usr/share/bash-completion/completions/bloomtap" \
		"$BLOOMTAP" "$@" | sort | tr '\n' ' '
}
eq "completion: commands" "$(comp he)" "heavy "
eq "completion: every command" "$(comp '' | wc -w)" "$(echo $CMDS | wc -w)"
eq "completion: a command's options" "$(comp heavy --ipfix-)" "--ipfix-domain --ipfix-file "
eq "completion: watch's subcommands" "$(comp watch s)" "set show "
eq "completion: an option's values" "$(comp attach --mode '')" "auto native skb "
eq "completion: interface names" "$(comp stats l)" "lo "
eq "completion: a command's unique prefix stands for it (wat load)" "$(comp wat lo)" "load "
eq "completion: and its options (hea --ipfix-)" "$(comp hea --ipfix-)" "--ipfix-domain --ipfix-file "
check "completion: files for replay" bash -c "[[ ' $(comp replay "$DEST/usr/sbin/") ' == *' $DEST/usr/sbin/bloomtap '* ]]"
if [ "$(id -u)" = 0 ]; then
	"$BLOOMTAP" replay --instance "deploy-comp-$$" "$PCAPS/dnscap__dns.pcap" >/dev/null 2>&1
	eq "completion: instance names" "$(comp heavy --instance deploy-comp-)" "deploy-comp-$$ "
	"$BLOOMTAP" detach --instance "deploy-comp-$$" >/dev/null 2>&1
fi

# installed twice, then uninstalled: nothing left (the second install
# dropped the configuration from the manifest, and uninstall left it)
check "make install again over the first" make -s -C "$TOP" install DESTDIR="$DEST" PREFIX=/usr
check "the configuration is still in the manifest" grep -qx /etc/bloomtap/bloomtap.conf "$DEST/usr/share/bloomtap/installed"
check "make uninstall" make -s -C "$TOP" uninstall DESTDIR="$DEST" PREFIX=/usr
eq "installed twice, uninstalled once: no file left" "$(cd "$DEST" && find . -type f | sort | tr '\n' ' ')" ""
check "make install once more" make -s -C "$TOP" install DESTDIR="$DEST" PREFIX=/usr
echo "# an operator's line" >> "$DEST/etc/bloomtap/bloomtap.conf"
check "make uninstall" make -s -C "$TOP" uninstall DESTDIR="$DEST" PREFIX=/usr
eq "uninstall removed every file install put there, and kept a changed configuration" \
	"$(cd "$DEST" && find . -type f | sort | tr '\n' ' ')" "./etc/bloomtap/bloomtap.conf "
expect_fail "uninstall with nothing installed says so" "nothing installed" \
	make -s -C "$TOP" uninstall DESTDIR="$DEST" PREFIX=/usr

summary
[ $FAIL -eq 0 ]
