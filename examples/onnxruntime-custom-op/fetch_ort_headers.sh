#!/usr/bin/env bash
# Puts ONNX Runtime's C/C++ API headers in DEST/include/onnxruntime (default DEST: ./ort-headers
# next to this script) and prints that include directory.
#
# The onnxruntime pip wheel ships libonnxruntime.so but no headers, and no PyPI package ships
# them; Debian does: libonnxruntime-dev (trixie: ONNX Runtime 1.21, C API version 21). This script
# downloads that one .deb with apt-get into a private apt state directory (the machine's
# sources.list, package lists and installed packages are left alone; its apt.conf.d settings,
# e.g. a proxy, still apply) and unpacks only the headers. A custom op library built against
# C API version N runs on every ONNX Runtime >= the release that introduced N (ORT keeps older API
# tables), so version 21 headers serve the pip wheel's 1.2x/1.3x runtimes.
#
# Environment: ORT_DEBIAN_SUITE (default trixie; forky/sid carry newer releases).
# Needs apt-get, dpkg-deb and the Debian archive keyring (/usr/share/keyrings/debian-archive-keyring.gpg,
# which on bookworm already holds the trixie keys).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-$here/ort-headers}"
suite="${ORT_DEBIAN_SUITE:-trixie}"
include="$dest/include/onnxruntime"

if [ -f "$include/onnxruntime_c_api.h" ]; then
    echo "$include"
    exit 0
fi

for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fetch_ort_headers.sh: needs $tool (Debian/Ubuntu)" >&2; exit 1; }
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || { echo "fetch_ort_headers.sh: needs $keyring (apt-get install debian-archive-keyring)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/etc/sources.list.d" "$work/etc/preferences.d" "$work/lists/partial" \
         "$work/cache/archives/partial" "$work/deb"
cat >"$work/etc/sources.list.d/debian-$suite.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: $keyring
EOF

apt_opts=(
    -o "Dir::Etc::SourceList=/dev/null"
    -o "Dir::Etc::SourceParts=$work/etc/sources.list.d"
    -o "Dir::Etc::Preferences=/dev/null"
    -o "Dir::Etc::PreferencesParts=$work/etc/preferences.d"
    -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=root"
    -o "Acquire::Languages=none"
    -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
)
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$work/deb" && apt-get "${apt_opts[@]}" -qq download libonnxruntime-dev >&2)
deb="$(ls "$work"/deb/libonnxruntime-dev_*.deb)"
echo "fetch_ort_headers.sh: $(basename "$deb") (Debian $suite)" >&2

dpkg-deb -x "$deb" "$work/root"
mkdir -p "$dest/include"
rm -rf "$include"
cp -r "$work/root/usr/include/onnxruntime" "$include"
cp "$work/root/usr/share/doc/libonnxruntime-dev/copyright" "$dest/include/onnxruntime/DEBIAN-COPYRIGHT" 2>/dev/null || true
basename "$deb" >"$dest/PACKAGE"
echo "$include"
