#!/usr/bin/env bash
# Builds rota_<version>_amd64.deb from an existing build with Debian's own tools
# (dpkg-buildpackage, debhelper), then checks it with lintian.
#   scripts/make-deb.sh BUILD_DIR OUT_DIR [VERSION]
# VERSION defaults to the build's (rota --version); the package test builds a lower one too, to
# upgrade from. The packaging is packaging/debian; the unit is packaging/rota.service with the
# package's path of rotad.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)"
out="$(mkdir -p "$2" && cd "$2" && pwd)"
version="${3:-$("$build/rota" --version | awk '{print $NF}')}"
for tool in dpkg-buildpackage dh lintian; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing: scripts/install-deps.sh installs it" >&2; exit 1; }
done
stage="$(mktemp -d "$out/stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/rota-$version"
cp -r "$src/packaging/debian" "$stage/rota-$version/debian"
sed -e 's|/usr/local/bin/rotad|/usr/sbin/rotad|' \
    -e 's|^# systemd unit for rotad. Install: see README.md.*|# systemd unit for rotad, from the rota package.|' \
    "$src/packaging/rota.service" > "$stage/rota-$version/debian/rota.service"
date="$(date -u -R)"
cat > "$stage/rota-$version/debian/changelog" <<CHANGES
rota ($version) bookworm; urgency=medium

  * Built from the Rota source tree (git $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)).

 -- Rota developers <rota@localhost>  $date
CHANGES
(cd "$stage/rota-$version" &&
  ROTA_SOURCE_DIR="$src" ROTA_BUILD_DIR="$build" ROTA_DATE="$(date -u +%Y-%m-%d)" \
    dpkg-buildpackage -b -us -uc --no-check-builddeps >"$stage/build.log" 2>&1) ||
  { cat "$stage/build.log" >&2; exit 1; }
deb="rota_${version}_amd64.deb"
mv "$stage/$deb" "$out/$deb"
# Every warning is fixed or overridden with its reason (packaging/debian/rota.lintian-overrides).
lintian --fail-on error,warning --suppress-tags-from-file /dev/null "$out/$deb"
echo "$out/$deb"
