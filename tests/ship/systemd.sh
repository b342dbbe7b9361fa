#!/usr/bin/env bash
# The .deb under systemd as PID 1: boots a Debian bookworm guest (Debian's
# 6.1 kernel and systemd 252, tests/kernels/rootfs.sh makes its disk once)
# under QEMU, which runs tests/ship/systemd_guest.sh from this checkout over
# 9p and powers off. The guest's checks and summary are printed here.
# The package of the previous ABI goes in too, for the upgrade
# (tests/ship/prev_abi_deb.sh builds it from the history, once).
# Env: BT_DEB (the .deb), BT_TEST_CACHE (where the disk is kept,
# /var/cache/bloomtap-tests), VM_TIMEOUT (seconds, default 900).
source "$(dirname "$0")/../lib/lib.sh"
need_root "systemd"
DEB=${BT_DEB:-$TOP/$(make -s -C "$TOP" print-deb)}
CACHE=${BT_TEST_CACHE:-/var/cache/bloomtap-tests}
[ -f "$DEB" ] || { fail "no package at $DEB (make deb builds it)"; summary; exit 1; }
RES=$(mktemp -d)
trap 'rm -rf "$RES"' EXIT
# the package of the previous ABI, for the upgrade: built once from the
# history (a dpkg-buildpackage run), then found by its commit
t0=$(date +%s)
if PREV=$("$TOP/tests/ship/prev_abi_deb.sh" 2>"$RES/prev.err"); then
	echo "  the previous ABI's package: $PREV, made or found in $(($(date +%s) - t0)) s"
	prev_arg="bt_prev_deb=$PREV"
elif [ $? -eq 3 ]; then
	prev_arg="bt_prev_why=no_commit_of_an_older_ABI_in_the_history"
	cat "$RES/prev.err"
else
	sed 's/^/        /' "$RES/prev.err"
	fail "the previous ABI's package (tests/ship/prev_abi_deb.sh)"; summary; exit 1
fi

t0=$(date +%s)
if ! dir=$("$TOP/tests/kernels/rootfs.sh" "$DEB" "$CACHE" 2>"$RES/rootfs.err"); then
	sed 's/^/        /' "$RES/rootfs.err"
	fail "the guest's disk (tests/kernels/rootfs.sh)"; summary; exit 1
fi
echo "  guest: $dir (kernel $(cat "$dir/kver")), made or found in $(($(date +%s) - t0)) s"
# -snapshot: the guest writes to a temporary overlay, the disk stays as made
t0=$(date +%s)
timeout "${VM_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg -cpu max -M q35 -smp 2 -m 2G \
	-nographic -no-reboot -snapshot \
	-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
	-drive "file=$dir/disk.img,format=raw,if=virtio" \
	-append "root=/dev/vda rw console=ttyS0 panic=-1 quiet bt_repo=$TOP bt_run=$TOP/tests/ship/systemd_guest.sh bt_deb=$DEB $prev_arg" \
	-virtfs "local,path=$(dirname "$TOP"),mount_tag=repo,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$RES,mount_tag=results,security_model=none" \
	</dev/null >"$RES/console.log" 2>&1
echo "  the guest ran $(($(date +%s) - t0)) s"
if [ ! -e "$RES/done" ]; then
	echo "  the guest's console, last lines:"; tail -30 "$RES/console.log" | sed 's/^/        /'
	[ -e "$RES/log" ] && sed 's/^/        /' "$RES/log"
	fail "the guest did not finish (VM_TIMEOUT ${VM_TIMEOUT:-900} s)"; summary; exit 1
fi
# the guest's own checks and its closing line, as this suite's
cat "$RES/log"
