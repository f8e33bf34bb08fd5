#!/usr/bin/env bash
# busybox-image.sh LAYOUT TAG [umoci config flags...]: an OCI image built
# offline from Debian's busybox-static, into the OCI layout LAYOUT (created)
# under TAG: busybox and its common applets on an empty base, /tmp writable
# by all, /etc/motd saying "inside the image". Extra flags go to `umoci
# config` (--config.cmd, --config.user, --config.env ...). With IMAGE_EXTRA
# set to programs of this machine, each is copied to /opt/tessera/ with the
# shared libraries `ldd` names (scripts/gpu-check.sh puts its probe in so).
# For the demo and the container tests: nothing is pulled from the internet.
set -euo pipefail
layout=$1 tag=$2
shift 2
for tool in umoci /bin/busybox; do
  command -v "$tool" >/dev/null || { echo "busybox-image.sh: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
bundle=$(mktemp -d "${TMPDIR:-/tmp}/busybox-image.XXXXXX")
trap 'rm -rf "$bundle"' EXIT
[ -e "$layout/index.json" ] || umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci unpack --image "$layout:$tag" "$bundle/b" >/dev/null
root=$bundle/b/rootfs
mkdir -p "$root/bin" "$root/tmp" "$root/etc"
cp /bin/busybox "$root/bin/busybox"
for applet in sh echo cat sleep id head tail touch hostname ls env uname; do ln -s busybox "$root/bin/$applet"; done
chmod 1777 "$root/tmp"
echo "inside the image" >"$root/etc/motd"
for program in ${IMAGE_EXTRA:-}; do
  mkdir -p "$root/opt/tessera"
  cp "$program" "$root/opt/tessera/"
  for lib in $(ldd "$program" | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done
umoci repack --image "$layout:$tag" "$bundle/b"
[ $# -eq 0 ] || umoci config --image "$layout:$tag" "$@"
