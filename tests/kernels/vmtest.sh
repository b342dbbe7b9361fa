#!/usr/bin/env bash
# make test-kernels: boots each kernel of kernels.list under QEMU's software
# emulation (TCG: the machine's KVM runs only kernels built for it) with
# the host's root shared read-only over 9p, runs the suites that need only
# BPF_PROG_TEST_RUN in it, and prints one table, kernel x suite.
# Usage: vmtest.sh [LABEL...]   (default: every kernel of the list, then
# the running kernel natively). Env: BT_BUILD (.output), KERNELS_CACHE,
# KERNEL_SUITES, VM_TIMEOUT (seconds a kernel, default 1800), VM_CPUS (4:
# more than this machine's two, so no test leans on the host's count).
cd "$(dirname "$0")/../.." || exit 1
repo=$PWD here=$repo/tests/kernels
build=${BT_BUILD:-.output}
# the kernels outlive the checkout: a new clone fetches nothing fetched before
cache=${KERNELS_CACHE:-${BT_TEST_CACHE:-/var/cache/bloomtap-tests}/kernels}
suites=${KERNEL_SUITES:-test_unit,test_datapath,test_heavy,test_spie,test_watch,oracle,heavy_oracle,watch_oracle,uppers}
labels=("$@")
# the running kernel first: its oracle suites fill tshark's cache
[ ${#labels[@]} -gt 0 ] || labels=(running $(awk '!/^#/ && NF { print $1 }' "$here/kernels.list"))
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: make test-kernels needs root (bpf(2) in the guests, apt for the kernels)"
	echo "0 passed, 0 failed, ${#labels[@]} skipped"; exit 0
fi
[ -x "$build/bloomtap" ] || { echo "vmtest: build first ($build/bloomtap)" >&2; exit 2; }
mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
# tshark's dissections, kept by file (tests/oracle/oracle.py): user space, the same
# on every kernel, and minutes a suite under emulation
export TSHARK_CACHE=${TSHARK_CACHE:-$cache/tshark}
results=$repo/$build/kernels-results

run_kernel() {	# label; leaves $results/LABEL/{log,kernel.json,done,console.log,seconds}
	local label=$1 res=$results/$1 dir kver t0
	rm -rf "$res"; mkdir -p "$res"
	t0=$(date +%s)
	if [ "$label" = running ]; then
		bt_out=$res bt_build=$build bt_suites=$suites "$here/guest.sh"
	else
		if ! dir=$("$here/fetch.sh" "$label" "$cache" 2>"$res/fetch.err"); then
			# under CI a kernel the README promises is never skipped
			echo "$([ -n "$CI" ] && echo fail || echo skip): $(tail -1 "$res/fetch.err")" >"$res/skip"
			return
		fi
		kver=$(cat "$dir/kver")
		timeout "${VM_TIMEOUT:-1800}" qemu-system-x86_64 -accel tcg -cpu max -M q35 -smp "${VM_CPUS:-4}" -m 2G \
			-nographic -no-reboot -kernel "$dir/vmlinuz" -initrd "$dir/initramfs.cpio.gz" \
			-append "console=ttyS0 panic=-1 quiet bt_kver=$kver bt_kdir=$dir/root bt_run=$here/guest.sh bt_build=$build bt_suites=$suites bt_tshark=$TSHARK_CACHE" \
			-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
			-virtfs "local,path=$res,mount_tag=results,security_model=none" \
			</dev/null >"$res/console.log" 2>&1
		[ -e "$res/done" ] || echo "fail: the guest did not finish in ${VM_TIMEOUT:-1800} s (VM_TIMEOUT; console: $res/console.log), in suite $(grep -E '^== [a-z0-9_/-]+: ' "$res/log" 2>/dev/null | tail -1 | cut -d: -f1 | cut -c4-) at: $(tail -1 "$res/log" 2>/dev/null)" >"$res/skip"
	fi
	echo $(($(date +%s) - t0)) >"$res/seconds"
}

for l in "${labels[@]}"; do
	echo "== kernel $l"
	run_kernel "$l"
	[ -e "$results/$l/log" ] && grep -E '^== [a-z-]+ +[0-9]+ passed|^kernel ' "$results/$l/log"
	[ -e "$results/$l/skip" ] && cat "$results/$l/skip"
done
python3 "$here/table.py" "$results" "${labels[@]}"
