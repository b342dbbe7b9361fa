#!/usr/bin/env bash
# Fetches one kernel of kernels.list from Debian's mirror and makes what
# QEMU boots: CACHE/LABEL/{vmlinuz,initramfs.cpio.gz,kver,modules tree}.
# apt's state for this lives in CACHE/apt, apart from the system's.
# Usage: fetch.sh LABEL CACHE-DIR     (prints the kernel's directory)
set -eo pipefail
here=$(cd "$(dirname "$0")" && pwd)
label=$1 cache=$2
[ -n "$label" ] && [ -n "$cache" ] || { echo "usage: fetch.sh LABEL CACHE-DIR" >&2; exit 2; }
pattern=$(awk -v l="$label" '$1 == l { print $2 }' "$here/kernels.list")
[ -n "$pattern" ] || { echo "fetch: no kernel '$label' in kernels.list" >&2; exit 2; }
mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial"
cache=$(cd "$cache" && pwd)
dir=$cache/$label
# One download, not one a run: a kernel fetched before is used as it is,
# without asking the mirror (KERNELS_REFRESH=1 asks for its newest build).
if [ -z "$KERNELS_REFRESH" ] && [ -s "$dir/vmlinuz" ] && [ -s "$dir/initramfs.cpio.gz" ] &&
   [ -s "$dir/kver" ] && [ "$(cat "$dir/initramfs.sum" 2>/dev/null)" = "$(sha256sum <"$here/init")" ]; then
	echo "$dir"; exit 0
fi
apt_opts=(-o "Dir::Etc::sourcelist=$here/sources.list" -o Dir::Etc::sourceparts=-
	  -o "Dir::State::lists=$cache/apt/lists" -o "Dir::Cache=$cache/apt/cache"
	  -o APT::Sandbox::User=root -q)
# the package index: once a day is enough
if [ -z "$(find "$cache/apt/lists" -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
	apt-get "${apt_opts[@]}" update >"$cache/apt/update.log" 2>&1 ||
		{ echo "fetch: apt-get update failed (see $cache/apt/update.log)" >&2; exit 1; }
fi
pkg=$(apt-cache "${apt_opts[@]}" pkgnames linux-image- | grep -E "$pattern" | sort -V | tail -1)
[ -n "$pkg" ] || { echo "fetch: nothing on the mirror matches $pattern" >&2; exit 1; }
kver=${pkg#linux-image-}
if [ "$(cat "$dir/kver" 2>/dev/null)" != "$kver" ] || [ ! -s "$dir/initramfs.cpio.gz" ] ||
   [ "$(cat "$dir/initramfs.sum" 2>/dev/null)" != "$(sha256sum <"$here/init")" ]; then
	rm -rf "$dir"; mkdir -p "$dir/root"
	(cd "$dir" && apt-get "${apt_opts[@]}" download "$pkg" >/dev/null) ||
		{ echo "fetch: apt-get download $pkg failed" >&2; exit 1; }
	dpkg-deb -x "$dir"/*.deb "$dir/root"
	rm -f "$dir"/*.deb
	cp "$dir/root/boot/vmlinuz-$kver" "$dir/vmlinuz"
	depmod -b "$dir/root" "$kver"
	# the initramfs: static busybox, veth, the modules that reach the host's
	# root over virtio 9p (Debian builds them as modules), and init
	ird=$(mktemp -d); trap 'rm -rf "$ird"' EXIT
	mkdir -p "$ird/bin" "$ird/modules"
	cp /bin/busybox "$ird/bin/busybox"
	n=0
	for m in virtio_pci 9pnet_virtio 9p veth; do
		modprobe -d "$dir/root" -S "$kver" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
		n=$((n + 1)) out=$ird/modules/$(printf '%02d' $n)-$(basename "${ko%.xz}")
		case $ko in *.xz) xz -dc "$ko" >"$out" ;; *) cp "$ko" "$out" ;; esac
	done
	cp "$here/init" "$ird/init"; chmod 755 "$ird/init"
	(cd "$ird" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$dir/initramfs.cpio.gz"
	echo "$kver" >"$dir/kver"
	sha256sum <"$here/init" >"$dir/initramfs.sum"
fi
echo "$dir"
