#!/usr/bin/env bash
# The container image bloomtap:VERSION, from Debian's packages alone:
# mmdebstrap makes a bookworm root file system (the Essential set, merged
# /usr) from Debian's mirror with the .deb and its runtime libraries
# installed by apt, and podman imports it. No base image from a registry.
#
# usage: deploy/image.sh PATH/TO/bloomtap_VERSION_ARCH.deb VERSION [OCI_ARCHIVE]
#   MIRROR=http://deb.debian.org  the mirror (debian and debian-security)
#   APT_CACHE=DIR  the .debs downloaded kept there and used again (apt checks
#                  each one's hash): a second build fetches the indexes
#                  alone (about 9 MB), so the image has the mirror's newest
set -euo pipefail
DEB=$(realpath "$1") VERSION=$2 OCI=${3:-}
MIRROR=${MIRROR:-http://deb.debian.org}
TOP=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Reproducible: file times and the image's date are the changelog's.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Timestamp)
export SOURCE_DATE_EPOCH

# Documentation, manual pages, locales and iconv modules left out (the
# copyright files stay): nothing in the image reads them.
# the cache's hooks (mmdebstrap(1), "EXAMPLES"), the .debs taken out of
# the image after
CACHE_OPTS=()
if [ -n "${APT_CACHE:-}" ]; then
	mkdir -p "$APT_CACHE"
	CACHE_OPTS=(--skip=essential/unlink
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/'
		--setup-hook="sync-in $APT_CACHE /var/cache/apt/archives/"
		--customize-hook="sync-out /var/cache/apt/archives $APT_CACHE"
		--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb')
fi
mmdebstrap --variant=essential --mode=root --quiet "${CACHE_OPTS[@]}" \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/lib/*/gconv/*' \
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--include="$DEB" \
	bookworm "$TMP/rootfs.tar" \
	"deb $MIRROR/debian bookworm main" \
	"deb $MIRROR/debian bookworm-updates main" \
	"deb $MIRROR/debian-security bookworm-security main" \
	> "$TMP/mmdebstrap.log" 2>&1 || { tail -30 "$TMP/mmdebstrap.log"; exit 1; }

# the image this one replaces, removed once untagged (unless in use)
OLD=$(podman image inspect --format '{{.Id}}' "localhost/bloomtap:$VERSION" 2>/dev/null || true)

# As root in the container: Kubernetes gives capabilities to UID 0 alone
# (deploy/daemonset.yaml drops all but CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON).
podman import --quiet \
	--change 'ENTRYPOINT ["/usr/sbin/bloomtap"]' \
	--change 'CMD ["run", "--config", "/etc/bloomtap/bloomtap.conf"]' \
	--change 'EXPOSE 9477/tcp' \
	--change "LABEL org.opencontainers.image.title=bloomtap" \
	--change "LABEL org.opencontainers.image.version=$VERSION" \
	--change "LABEL org.opencontainers.image.description=XDP observability agent (Debian bookworm packages)" \
	"$TMP/rootfs.tar" "localhost/bloomtap:$VERSION" >/dev/null
NEW=$(podman image inspect --format '{{.Id}}' "localhost/bloomtap:$VERSION")
if [ -n "$OLD" ] && [ "$OLD" != "$NEW" ]; then podman rmi "$OLD" >/dev/null 2>&1 || true; fi
echo "image: localhost/bloomtap:$VERSION, $(podman image inspect --format '{{.Size}}' "localhost/bloomtap:$VERSION") bytes"
if [ -n "$OCI" ]; then
	rm -f "$OCI"
	podman save --quiet --format oci-archive -o "$OCI" "localhost/bloomtap:$VERSION"
	echo "OCI archive: $OCI, $(stat -c %s "$OCI") bytes"
fi
