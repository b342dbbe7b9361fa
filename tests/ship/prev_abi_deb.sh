#!/usr/bin/env bash
# The .deb of the previous ABI, for the upgrade test (tests/ship/systemd.sh):
# built from the last commit of this checkout's history whose
# BT_ABI_VERSION (include/bloomtap.h) is lower than the tree's, in a git
# worktree under the build directory, with its changelog's version given
# a ~abiN suffix (0.2.0~abi17 sorts before 0.2.0 for dpkg). Cached by that
# commit: OUT/prev-abi/COMMIT/*.deb, so a second run builds nothing.
# Usage: prev_abi_deb.sh [OUT]  (OUT: the build directory, default .output)
# Prints the .deb's path; exits 3, saying why, when the history has no
# such commit (a shallow clone).
set -eo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$top/.output}" && cd "${1:-$top/.output}" && pwd)
cd "$top"
abi_of() {	# the BT_ABI_VERSION of include/bloomtap.h at a commit ("" for the tree)
	if [ -n "$1" ]; then git show "$1:include/bloomtap.h" 2>/dev/null; else cat include/bloomtap.h; fi |
		sed -n 's/^#define BT_ABI_VERSION \([0-9]*\).*/\1/p'
}
now=$(abi_of "")
[ -n "$now" ] || { echo "prev_abi_deb.sh: no BT_ABI_VERSION in include/bloomtap.h" >&2; exit 1; }
# the newest commit of the first-parent line below the tree's ABI: HEAD
# itself when the bump is not committed yet; else the parent of the
# newest commit that moved the header to the tree's ABI or past it
commit=
if [ "$(abi_of HEAD)" != "" ] && [ "$(abi_of HEAD)" -lt "$now" ]; then
	commit=$(git rev-parse HEAD)
else
	for c in $(git rev-list --first-parent HEAD -- include/bloomtap.h); do
		a=$(abi_of "$c^") || true
		if [ -n "$a" ] && [ "$a" -lt "$now" ]; then commit=$(git rev-parse "$c^"); break; fi
	done
fi
[ -n "$commit" ] || { echo "prev_abi_deb.sh: no commit with an ABI below $now in this history" \
	"(a shallow clone? git fetch --unshallow)" >&2; exit 3; }
prev=$(abi_of "$commit")
dir=$out/prev-abi/$commit
exec 9>"$out/prev-abi.lock"
flock 9
deb=$(ls "$dir"/bloomtap_*_*.deb 2>/dev/null | head -1) || true
if [ -n "$deb" ]; then echo "$deb"; exit 0; fi

src=$out/prev-abi/src-$commit
rm -rf "$dir" "$src"; git worktree prune
mkdir -p "$out/prev-abi"
trap 'git worktree remove --force "$src" 2>/dev/null; rm -rf "$src"' EXIT
git worktree add --detach --quiet "$src" "$commit" >&2
version=$(sed -n '1s/^bloomtap (\([^)]*\)).*/\1/p' "$src/debian/changelog")~abi$prev
{
	printf 'bloomtap (%s) unstable; urgency=medium\n\n' "$version"
	printf '  * The package of ABI %s (%s), for the upgrade test.\n\n' "$prev" "$(git log -1 --format=%h "$commit")"
	printf ' -- %s  %s\n\n' "$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$src/debian/changelog" | head -1)" \
		"$(git log -1 --format=%aD "$commit")"
	cat "$src/debian/changelog"
} >"$src/debian/changelog.new"
mv "$src/debian/changelog.new" "$src/debian/changelog"
# its own make deb (dpkg-buildpackage in a copy of that tree), quietly
make -s -C "$src" deb >"$out/prev-abi/build-$commit.log" 2>&1 ||
	{ tail -30 "$out/prev-abi/build-$commit.log" >&2; exit 1; }
mkdir -p "$dir.tmp"
cp "$src/.output"/bloomtap_"$version"_*.deb "$dir.tmp/"
mv "$dir.tmp" "$dir"
echo "built ABI $prev's package from $(git log -1 --format='%h (%ad)' --date=short "$commit")" >&2
ls "$dir"/bloomtap_*_*.deb
