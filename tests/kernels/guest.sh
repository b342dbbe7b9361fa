#!/usr/bin/env bash
# Runs in a test kernel as PID 1 (see init), or on the host for the running
# kernel's row: the suites named in bt_suites against bt_build, each
# suite's summary and the verifier's figures written to bt_out.
# The guest powers off when done; the host reads bt_out.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${bt_out:-/mnt}
guest=false
if [ $$ -eq 1 ]; then
	guest=true
	mount -t bpf bpf /sys/fs/bpf
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
	# what udev would make: bash's <(...) opens /dev/fd/N
	ln -sf /proc/self/fd /dev/fd
	ip link set lo up
	# the oracles' python has its packages under the host's $HOME
	[ -d /root/.pyenv/shims ] && PATH=/root/.pyenv/shims:$PATH
	export TSHARK_CACHE=$bt_tshark
	# the kernel's own modules (nftables, qdiscs) from its unpacked
	# package: the host's /lib/modules has none of them
	mkdir -p /tmp/kbin
	printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$bt_kdir" >/tmp/kbin/modprobe
	chmod 755 /tmp/kbin/modprobe
	echo /tmp/kbin/modprobe >/proc/sys/kernel/modprobe
	PATH=/tmp/kbin:$PATH
	# every step is several times slower under TCG: the labs' bounds too
	export BT_WAIT_SCALE=${BT_WAIT_SCALE:-4}
fi
cd "$repo" || exit 1
bt=$repo/$bt_build/bloomtap

# A kernel bloomtap cannot run on: it must say so, naming the feature and
# the first Linux that has it, before any verifier speaks. The suites are
# skipped with that reason.
refusal() {
	local why=$1 msg rc pass=0 fail=0 s
	echo "== refusal: $bt replay"
	msg=$("$bt" replay --instance kt-refusal "$repo/../shared/data/pcaps/dnscap__dns.pcap" 2>&1); rc=$?
	echo "$msg"
	if [ $rc -ne 0 ] && grep -q "lacks .*Linux [0-9.]* or later" <<<"$msg" &&
	   ! grep -qiE 'verifier|processed [0-9]+ insns|^[0-9]+: \(' <<<"$msg"; then
		pass=1; echo "ok: refused, naming the feature"
	else
		fail=1; echo "FAIL: not the refusal expected (exit $rc)"
	fi
	echo "== refusal          $pass passed, $fail failed, 0 skipped"
	for s in ${bt_suites//,/ }; do
		echo "== $s: (not run)"
		echo "SKIP: $why"
		echo "== $s 0 passed, 0 failed, 1 skipped"
	done
}

{
	echo "kernel $(uname -r)"
	"$bt" -v -j kernel --verifier >"$out/kernel.json" 2>"$out/kernel.err"
	echo "kernel-probe rc=$?"
	why=$(tail -1 "$out/kernel.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
m = [f for f in d["features"] if f["required"] and f["present"] is False]
print("this kernel lacks %s (Linux %s), which bloomtap needs" % (m[0]["name"], m[0]["since"]) if m else "")')
	if [ -n "$why" ]; then
		refusal "$why"
	else
		ONLY_BUILD=$bt_build SUITES=${bt_suites//,/ } tests/run.sh
		echo "run rc=$?"
	fi
} >"$out/log" 2>&1
touch "$out/done"
if $guest; then
	sync
	echo o >/proc/sysrq-trigger
	sleep 10
fi
