#!/usr/bin/env bash
# The Debian package as a fresh host gets it (cmake/packaging.cmake). CPack makes it from
# the build tree as it is (nothing is compiled; the package lands in a temporary directory)
# and dpkg-deb shows: the file is chaosbench_<version>_<arch>.deb; Depends names the Debian
# package of every library the binary links, the programs it runs (iproute2, iptables,
# openssh-client) and no CUDA library; the binary links nothing from the CUDA toolkit, and
# the payload, unpacked, runs (version, validate on a packaged scenario, doctor) with
# LD_LIBRARY_PATH unset and, as root, with the CUDA toolkit's directories hidden (a mount
# namespace with empty directories over them), where doctor's cuda_parts names the CUDA
# library the CUDA layer's module misses; apt-get resolves its dependencies on this host.
# Usage: package_test.sh BUILD_DIR CPACK. Skips (with the reason) without cpack, dpkg-deb,
# dpkg-shlibdeps or file. Cleans up on every exit.
set -uo pipefail
build=$(cd "$1" && pwd)
cpack=$2
for tool in dpkg-deb dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool (scripts/bootstrap.sh installs dpkg-dev and file)"; exit 0; }
done
[ -x "$cpack" ] || { echo "skipped: no cpack at $cpack"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/script_checks.sh"

"$cpack" --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; echo "FAILED: cpack"; exit 1; }
version=$("$build/bin/chaosbench" version | awk 'NR == 1 { print $2 }')
deb="$work/out/chaosbench_${version}_$(dpkg --print-architecture).deb"
check "the package is $(basename "$deb")" test -f "$deb"
[ -f "$deb" ] || { ls "$work/out"; exit 1; }
dpkg-deb -I "$deb" >"$work/info" && dpkg-deb -c "$deb" >"$work/contents"
check "dpkg-deb reads it" test $? -eq 0
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
echo "Installed-Size: $(dpkg-deb -f "$deb" Installed-Size) KiB"
# has_dependency PACKAGE: PACKAGE stands in Depends (as a name, any version, any alternative).
has_dependency() { tr ',|' '\n\n' <<<"$depends" | awk '{ print $1 }' | grep -qx "$1"; }
for program_package in iproute2 iptables openssh-client; do
  check "Depends names $program_package" has_dependency "$program_package"
done
lacks() { ! grep -qiE "$1" <<<"$2"; }  # lacks PATTERN TEXT
check "Depends names no CUDA library" lacks "cuda|nccl|cublas" "$depends"
check "Maintainer, Section and Description are set" \
  test -n "$(dpkg-deb -f "$deb" Maintainer)" -a -n "$(dpkg-deb -f "$deb" Section)" -a -n "$(dpkg-deb -f "$deb" Description)"
for f in usr/bin/chaosbench usr/share/doc/chaosbench/README.md usr/share/chaosbench/scenarios/demo.json; do
  check "the payload has /$f" grep -q " ./$f\$" "$work/contents"
done

dpkg-deb -x "$deb" "$work/root"
bin="$work/root/usr/bin/chaosbench"
# names_for PACKAGE: the names a dependency on PACKAGE may take: its own, what it provides
# (libspdlog1.10: libspdlog1.10-fmt9) and what its shlibs file maps its libraries to
# (libopenblas0-pthread: libopenblas0), as dpkg-shlibdeps reads them.
names_for() {
  echo "$1"
  dpkg-query -W -f '${Provides}\n' "$1" 2>/dev/null | tr ',' '\n' | awk 'NF { print $1 }'
  dpkg-query --control-show "$1" shlibs 2>/dev/null | awk '!/^#/ && NF >= 3 { print $3 }'
}
depends_on_any() {  # depends_on_any NAME...
  local n
  for n in "$@"; do has_dependency "$n" && return 0; done
  return 1
}
# Every library the packaged binary links comes from a Debian package that Depends names.
ldd_out=$(env -u LD_LIBRARY_PATH ldd "$bin")
for soname in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  path=$(awk -v s="$soname" '$1 == s { print $3 }' <<<"$ldd_out")
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null)
  owner=$(head -1 <<<"$owner" | cut -d: -f1)
  check "$soname ($path) is Debian's ${owner:-?}, which Depends names" depends_on_any $(names_for "${owner:-?}")
done
check "ldd finds every library the binary links" lacks "not found" "$ldd_out"
check "the binary links nothing from the CUDA toolkit" lacks "/usr/local/cuda|libcudart|libnccl|libcublas" "$ldd_out"

# run_bare COMMAND...: the command with LD_LIBRARY_PATH unset and, as root, the CUDA
# toolkit's directories hidden under empty ones in a mount namespace of its own.
hidden=()
for d in /usr/local/cuda /usr/local/cuda-*; do [ -d "$d" ] && hidden+=("$(readlink -f "$d")"); done
mapfile -t hidden < <(printf '%s\n' "${hidden[@]}" | sort -u | grep .)
bare=0
if [ "$(id -u)" -eq 0 ] && [ ${#hidden[@]} -gt 0 ] && unshare -m true 2>/dev/null; then bare=1; fi
run_bare() {
  if [ $bare -eq 1 ]; then
    env -u LD_LIBRARY_PATH unshare -m bash -c 'for d in "${@:2:$1}"; do mount -t tmpfs -o ro none "$d" || exit 99; done
      shift $(($1 + 1)); exec "$@"' _ ${#hidden[@]} "${hidden[@]}" "$@"
  else
    env -u LD_LIBRARY_PATH "$@"
  fi
}
if [ $bare -eq 1 ]; then
  echo "the packaged binary runs with the CUDA toolkit hidden: ${hidden[*]}"
else
  echo "note: the CUDA toolkit stays visible (hiding it needs root, unshare and a toolkit to hide)"
fi
out=$(run_bare "$bin" --version)
check "usr/bin/chaosbench --version runs" grep -qx "chaosbench $version" <<<"$out"
check "usr/bin/chaosbench validate runs on a packaged scenario" \
  run_bare "$bin" validate --quiet "$work/root/usr/share/chaosbench/scenarios/demo.json"
export CHAOSBENCH_CACHE_DIR="$work/cache"  # doctor's BLAS probe caches its choice here, not on the host
doctor=$(run_bare "$bin" doctor 2>&1)
check "usr/bin/chaosbench doctor runs" test $? -eq 0
if [ -f "$work/root/usr/lib/libchaosbench_cuda_workers.so" ]; then
  check "doctor looks for the CUDA layer's module beside the packaged binary" \
    grep -q "cuda_parts .*$work/root/usr/lib/libchaosbench_cuda_workers.so" <<<"$doctor"
  if [ $bare -eq 1 ]; then
    check "without the toolkit, doctor's cuda_parts names the CUDA library that is missing" \
      grep -qE "missing +cuda_parts +the CUDA layer [^ ]+ does not load: lib(cudart|nccl)[^ ]*: cannot open" <<<"$doctor"
  fi
fi
[ $failures -gt 0 ] && grep -E "cuda|BLAS" <<<"$doctor"

if command -v apt-get >/dev/null; then
  apt_out=$(apt-get install -s "$deb" 2>&1)
  check "apt-get resolves its dependencies on this host (apt-get install -s)" grep -q "^Inst chaosbench " <<<"$apt_out"
  [ $failures -gt 0 ] && tail -5 <<<"$apt_out"
fi

end_checks
