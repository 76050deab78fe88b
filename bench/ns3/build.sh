#!/usr/bin/env bash
# Build bench/ns3/p2p_bulk.cc against the ns-3 headers and shared libraries that
# ship inside the PyPI `ns3` wheel. Output: bench/ns3/build/p2p_bulk (rpath set,
# runs without LD_LIBRARY_PATH).
#
# Environment:
#   PYTHON       python interpreter whose site-packages holds (or gets) ns3 [python3]
#   NS3_VERSION  pip requirement used when ns3 is missing            [ns3==3.44.post0]
#   CXX          C++ compiler                                        [g++]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
NS3_REQ="${NS3_VERSION:-ns3==3.44.post0}"
CXX="${CXX:-g++}"
out_dir="$here/build"
out="$out_dir/p2p_bulk"

# Locate the wheel's root directory (site-packages/ns3) WITHOUT importing `ns`,
# which would pull in cppyy and load every ns-3 library. `ns3` is a namespace
# package (no __init__.py), so use importlib's search locations.
find_ns3_root() {
    "$PYTHON" - <<'EOF'
import importlib.util
import os
import sys

spec = importlib.util.find_spec("ns3")
if spec is None or not spec.submodule_search_locations:
    sys.exit(1)
for loc in spec.submodule_search_locations:
    if os.path.isdir(os.path.join(loc, "include", "ns3")):
        print(loc)
        sys.exit(0)
sys.exit(1)
EOF
}

if ! ns3_root="$(find_ns3_root)"; then
    echo "build.sh: ns3 wheel not found for $PYTHON; installing $NS3_REQ" >&2
    "$PYTHON" -m pip install --quiet "$NS3_REQ"
    ns3_root="$(find_ns3_root)"
fi

inc="$ns3_root/include"
lib=""
for d in lib64 lib; do
    if compgen -G "$ns3_root/$d/libns3*-core*.so" >/dev/null; then
        lib="$ns3_root/$d"
        break
    fi
done
if [[ -z "$lib" ]]; then
    echo "build.sh: no libns3*-core*.so under $ns3_root/{lib64,lib}" >&2
    exit 1
fi

# Library names carry the version (libns3.44-core.so): derive the prefix from core.
core="$(basename "$(compgen -G "$lib/libns3*-core*.so" | head -n1)")"
prefix="${core%-core*.so}"   # e.g. libns3.44
prefix="${prefix#lib}"       # e.g. ns3.44
suffix="${core##*-core}"     # e.g. .so (or -default.so for debug builds)
suffix="${suffix%.so}"
modules=(applications internet traffic-control point-to-point network bridge core)
libs=()
for m in "${modules[@]}"; do
    libs+=("-l${prefix}-${m}${suffix}")
done

# ns-3 >= 3.42 requires C++20. These defines match the wheel's exported CMake
# targets (release build with logging and asserts compiled in).
defines=(-DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE
         "-DP2P_NS3_VERSION=\"${prefix#ns}\"")

mkdir -p "$out_dir"
echo "build.sh: ns-3 include=$inc lib=$lib (${prefix})" >&2
"$CXX" -std=c++20 -O2 -pipe \
    "${defines[@]}" \
    -isystem "$inc" \
    "$here/p2p_bulk.cc" \
    -o "$out.tmp" \
    -L"$lib" -Wl,--no-as-needed "${libs[@]}" -Wl,--as-needed \
    -Wl,-rpath,"$lib" -lpthread
mv -f "$out.tmp" "$out"
echo "build.sh: built $out" >&2
