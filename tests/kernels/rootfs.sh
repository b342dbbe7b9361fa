#!/usr/bin/env bash
# The systemd guest's disk: Debian bookworm from Debian's mirror alone
# (mmdebstrap), with systemd as PID 1, Debian's kernel and its modules,
# and the libraries the .deb depends on (the guest has no network: apt
# installs the .deb from what is there). At boot a unit of its own mounts
# the host's checkout over 9p and runs the script named on the kernel's
# command line (bt_run=), then powers off.
#
# Cached by content: CACHE/rootfs-KEY/{disk.img,vmlinuz,initrd.img,kver},
# KEY the hash of this script and of the package list, so a second run
# downloads nothing, and a change to either makes a new one.
# Usage: rootfs.sh DEB CACHE-DIR     (prints the directory)
#   MIRROR=http://deb.debian.org  the mirror (debian and debian-security)
set -eo pipefail
deb=$1 cache=$2
[ -f "$deb" ] && [ -n "$cache" ] || { echo "usage: rootfs.sh DEB CACHE-DIR" >&2; exit 2; }
MIRROR=${MIRROR:-http://deb.debian.org}
# what the guest's test calls (tests/ship/systemd_guest.sh), and the .deb's
# runtime dependencies without their versions
pkgs="systemd-sysv udev dbus init-system-helpers linux-image-amd64 iproute2 curl nftables
      iputils-ping netcat-openbsd kmod procps bpftool python3 man-db
      $(dpkg-deb -f "$deb" Depends | sed -E 's/\([^)]*\)//g; s/[,|]/ /g')"
pkgs=$(tr -s ' \n' '\n' <<<"$pkgs" | grep . | sort -u | tr '\n' ' ')
key=$( { cat "$0"; echo "$pkgs"; } | sha256sum | cut -c1-16)
mkdir -p "$cache"
dir=$(cd "$cache" && pwd)/rootfs-$key
# one maker a key: make test starts one early in the background (tests/run.sh),
# and the systemd suite's own call waits for it here rather than making a second
exec 9>"$dir.lock"
flock 9
if [ -s "$dir/disk.img" ] && [ -s "$dir/kver" ]; then
	echo "$dir"; exit 0
fi
rm -rf "$dir" "$dir.tmp"; mkdir -p "$dir.tmp"
trap 'rm -rf "$dir.tmp"' EXIT
root=$dir.tmp/root

# The unit that runs the test at the end of the boot, and the script it
# runs: the host's checkout is mounted at its own path, so the paths the
# build compiled in (the captures) hold in the guest too.
mkdir -p "$dir.tmp/files"
cat >"$dir.tmp/files/bt-guest.service" <<'EOF'
[Unit]
Description=bloomtap's guest test (tests/kernels/rootfs.sh)
After=multi-user.target
[Service]
Type=simple
ExecStart=/usr/local/sbin/bt-guest
StandardOutput=journal+console
[Install]
WantedBy=multi-user.target
EOF
cat >"$dir.tmp/files/bt-guest" <<'EOF'
#!/bin/sh
# bt_repo=DIR bt_run=SCRIPT from the kernel's command line
for w in $(cat /proc/cmdline); do
	case $w in bt_*=*) export "$w" ;; esac
done
mkdir -p /mnt/results "$(dirname "$bt_repo")"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /mnt/results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose repo "$(dirname "$bt_repo")"
bt_out=/mnt/results bash "$bt_run" >/mnt/results/log 2>&1
echo "rc=$?" >>/mnt/results/log
sync
touch /mnt/results/done
systemctl poweroff
EOF

mmdebstrap --variant=minbase --mode=root --quiet \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--include="$(tr ' ' ',' <<<"$pkgs" | sed 's/,$//')" \
	--customize-hook="copy-in $dir.tmp/files/bt-guest.service /etc/systemd/system" \
	--customize-hook="copy-in $dir.tmp/files/bt-guest /usr/local/sbin" \
	--customize-hook='chmod 755 "$1"/usr/local/sbin/bt-guest' \
	--customize-hook='chroot "$1" systemctl enable bt-guest.service' \
	--customize-hook='echo btguest > "$1"/etc/hostname' \
	--customize-hook='echo "/dev/vda / ext4 defaults 0 1" > "$1"/etc/fstab' \
	--customize-hook='chroot "$1" passwd -d root' \
	bookworm "$root" \
	"deb $MIRROR/debian bookworm main" \
	"deb $MIRROR/debian bookworm-updates main" \
	"deb $MIRROR/debian-security bookworm-security main" \
	>"$dir.tmp/mmdebstrap.log" 2>&1 || { tail -30 "$dir.tmp/mmdebstrap.log" >&2; exit 1; }
kver=$(ls "$root/lib/modules" | sort -V | tail -1)
cp "$root/boot/vmlinuz-$kver" "$dir.tmp/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$dir.tmp/initrd.img"
# an ext4 image made from the directory (no loop device): 3 GiB, sparse
# (its "Creating regular file" goes to stdout even with -q: stdout is
# this script's answer, the directory, so mkfs talks to a log)
mkfs.ext4 -q -F -L btroot -d "$root" "$dir.tmp/disk.img" 3G >"$dir.tmp/mkfs.log" 2>&1 ||
	{ cat "$dir.tmp/mkfs.log" >&2; exit 1; }
rm -rf "$root"
echo "$kver" >"$dir.tmp/kver"
mv "$dir.tmp" "$dir"
trap - EXIT
echo "$dir"
