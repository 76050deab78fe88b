#!/usr/bin/env bash
# Build bench/ns3/p2p_bulk.cc against an ns-3's headers and shared libraries:
#   - by default those that ship inside the PyPI `ns3` wheel; output
#     bench/ns3/build/p2p_bulk;
#   - with NS3_ROOT, an ns-3 source tree the user has configured and built there
#     (`./ns3 configure ...` then `./ns3 build`); output
#     bench/ns3/build/p2p_bulk-<version>, <version> being `git describe --tags` of
#     that tree (e.g. ns-3.48-85-g140646449a33) or, without git, the version in its
#     library names (e.g. ns3-dev).
# The rpath is set (the binary runs without LD_LIBRARY_PATH) and the binary's JSON
# `ns3_version` names the ns-3 it was built against. This script builds no ns-3.
# The path of the binary is printed on stderr.
#
# Environment:
#   PYTHON       python interpreter whose site-packages holds (or gets) ns3 [python3]
#   NS3_VERSION  pip requirement used when ns3 is missing            [ns3==3.44.post0]
#   NS3_ROOT     a built ns-3 tree: headers in NS3_ROOT/build/include, libraries in
#                NS3_ROOT/build/lib, its settings in NS3_ROOT/cmake-cache/CMakeCache.txt
#                                                                    [unset: the wheel]
#   CXX          C++ compiler                                        [g++]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
NS3_REQ="${NS3_VERSION:-ns3==3.44.post0}"
CXX="${CXX:-g++}"
out_dir="$here/build"

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

# Value of one entry of a CMakeCache.txt ("NAME:TYPE=value"), empty if absent.
cmake_cache_get() {
    sed -n "s/^$2:[A-Z]*=//p" "$1" | head -n1
}

if [[ -n "${NS3_ROOT:-}" ]]; then
    tree="$(cd "$NS3_ROOT" 2>/dev/null && pwd)" || {
        echo "build.sh: NS3_ROOT=$NS3_ROOT: not a directory" >&2
        exit 1
    }
    ns3_root="$tree/build"
    cache="$tree/cmake-cache/CMakeCache.txt"
    if [[ ! -d "$ns3_root/include/ns3" || ! -f "$cache" ]]; then
        echo "build.sh: NS3_ROOT=$NS3_ROOT: needs build/include/ns3 and cmake-cache/CMakeCache.txt" \
             "(run ./ns3 configure and ./ns3 build there first)" >&2
        exit 1
    fi
else
    if ! ns3_root="$(find_ns3_root)"; then
        echo "build.sh: ns3 wheel not found for $PYTHON; installing $NS3_REQ" >&2
        "$PYTHON" -m pip install --quiet "$NS3_REQ"
        ns3_root="$(find_ns3_root)"
    fi
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

# Library names carry the version (libns3.44-core.so, libns3-dev-core-optimized.so):
# derive the prefix and the build-profile suffix from core.
core="$(basename "$(compgen -G "$lib/libns3*-core*.so" | head -n1)")"
prefix="${core%-core*.so}"   # e.g. libns3.44
prefix="${prefix#lib}"       # e.g. ns3.44
suffix="${core##*-core}"     # e.g. .so (or -optimized.so, -default.so)
suffix="${suffix%.so}"
modules=(applications internet traffic-control point-to-point network bridge core)
libs=()
for m in "${modules[@]}"; do
    libs+=("-l${prefix}-${m}${suffix}")
done

if [[ -n "${NS3_ROOT:-}" ]]; then
    # The defines the tree's own modules were compiled with (the headers' inline
    # code must see the same ones) and the C++ standard the tree requires, both
    # read from the tree's CMake settings.
    build_type="$(cmake_cache_get "$cache" CMAKE_BUILD_TYPE | tr '[:upper:]' '[:lower:]')"
    case "$build_type" in
        debug | default | relwithdebinfo) defines=(-DNS3_BUILD_PROFILE_DEBUG) ;;
        release)
            if [[ "$(cmake_cache_get "$cache" NS3_NATIVE_OPTIMIZATIONS)" == ON ]]; then
                defines=(-DNS3_BUILD_PROFILE_OPTIMIZED)
            else
                defines=(-DNS3_BUILD_PROFILE_RELEASE)
            fi
            ;;
        *) defines=(-DNS3_BUILD_PROFILE_RELEASE) ;;
    esac
    if [[ "$(cmake_cache_get "$cache" NS3_LOG)" == ON ]]; then defines+=(-DNS3_LOG_ENABLE); fi
    if [[ "$(cmake_cache_get "$cache" NS3_ASSERT)" == ON ]]; then defines+=(-DNS3_ASSERT_ENABLE); fi
    std="$(cmake_cache_get "$cache" CMAKE_CXX_STANDARD)"
    if [[ -z "$std" ]]; then
        std="$(sed -n 's/^set(CMAKE_CXX_STANDARD_MINIMUM \([0-9]*\))/\1/p' \
            "$tree/build-support/macros-and-definitions.cmake" 2>/dev/null | head -n1)"
    fi
    std="${std:-20}"
    version="$(git -C "$tree" describe --tags --long --abbrev=12 2>/dev/null || echo "$prefix")"
    out="$out_dir/p2p_bulk-$version"
else
    # ns-3 >= 3.42 requires C++20. These defines match the wheel's exported CMake
    # targets (release build with logging and asserts compiled in).
    defines=(-DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE)
    std=20
    version="${prefix#ns}"   # e.g. 3.44
    out="$out_dir/p2p_bulk"
fi
defines+=("-DP2P_NS3_VERSION=\"$version\"")

mkdir -p "$out_dir"
echo "build.sh: ns-3 $version include=$inc lib=$lib (${prefix}, C++$std, ${defines[*]})" >&2
"$CXX" -std=c++"$std" -O2 -pipe \
    "${defines[@]}" \
    -isystem "$inc" \
    "$here/p2p_bulk.cc" \
    -o "$out.tmp" \
    -L"$lib" -Wl,--no-as-needed "${libs[@]}" -Wl,--as-needed \
    -Wl,-rpath,"$lib" -lpthread
mv -f "$out.tmp" "$out"
echo "build.sh: built $out" >&2
