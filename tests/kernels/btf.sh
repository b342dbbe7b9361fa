#!/usr/bin/env bash
# The BTF of one kernel of kernels.list, for naming drop reasons as that
# kernel does (BLOOMTAP_DROP_REASONS_BTF): CACHE/LABEL/vmlinux.btf, the
# raw .BTF section of the vmlinux in the kernel's vmlinuz. The kernel is
# fetched.sh's (one download, shared with make test-kernels); the vmlinux
# is found the way the kernel's scripts/extract-vmlinux finds it (each
# compressor's magic in the bzImage, tried until one decompresses to an
# ELF file) and dropped once its 4 MB of BTF are out.
# Usage: btf.sh LABEL CACHE-DIR     (prints the BTF file's path)
set -eo pipefail
here=$(cd "$(dirname "$0")" && pwd)
label=$1 cache=$2
[ -n "$label" ] && [ -n "$cache" ] || { echo "usage: btf.sh LABEL CACHE-DIR" >&2; exit 2; }
dir=$("$here/fetch.sh" "$label" "$cache")
out=$dir/vmlinux.btf
if [ -s "$out" ] && [ "$out" -nt "$dir/vmlinuz" ]; then
	echo "$out"; exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# try MAGIC PLACEHOLDER DECOMPRESSOR...: from each offset where the magic
# may start (tr turns its first byte into a line break and the rest into
# the placeholder, which grep then finds at a line's start)
try() {
	local magic=$1 mark=$2 pos; shift 2
	for pos in $(tr "$magic\n$mark" "\n$mark=" <"$dir/vmlinuz" | grep -abo "^$mark" | cut -d: -f1); do
		tail -c+"$pos" "$dir/vmlinuz" | "$@" >"$tmp/vmlinux" 2>/dev/null || true
		if objcopy -O binary --only-section=.BTF "$tmp/vmlinux" "$tmp/btf" 2>/dev/null &&
		   [ -s "$tmp/btf" ]; then
			mv "$tmp/btf" "$out"; echo "$out"; exit 0
		fi
	done
}
try '\3757zXZ\000' abcde xz -dc
try '(\265/\375' xxx zstd -dc
try '\037\213\010' xy gzip -dc
try '\002!L\030' xxx lz4 -dc
echo "btf: no vmlinux with BTF in $dir/vmlinuz" >&2
exit 1
