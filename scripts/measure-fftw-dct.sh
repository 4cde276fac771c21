#!/usr/bin/env bash
# Measures FFTW's r2r DCT against lowcomm's block DCT (scripts/measure_fftw_dct.cpp says what is
# timed), on one thread, for GPT-2 shapes. The result (docs/benchmarks.md, "FFTW's DCT") is why
# lowcomm does not use FFTW; this script is how to check it again on another machine.
# Needs a release build (cmake --preset release && cmake --build --preset release) and
# libfftw3-dev (apt-get install -y libfftw3-dev), which the build itself does not need.
#
# Usage: scripts/measure-fftw-dct.sh [build-dir]   (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
[ -e "$build/liblowcomm.so" ] || { echo "measure-fftw-dct: no $build/liblowcomm.so; build the release preset first" >&2; exit 1; }
[ -e /usr/include/fftw3.h ] || { echo "measure-fftw-dct: needs libfftw3-dev (apt-get install -y libfftw3-dev)" >&2; exit 1; }
binary=$(mktemp -d)/measure_fftw_dct
trap 'rm -rf "$(dirname "$binary")"' EXIT
g++ -O2 -std=c++20 scripts/measure_fftw_dct.cpp -Iinclude -I"$build/include" -L"$build" -llowcomm -lfftw3f \
    -Wl,-rpath,"$PWD/$build" -o "$binary"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg); git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
for planning in estimate measure; do
  for shape in "768 768" "768 3072" "3072 768" "50304 768"; do
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$binary" $shape "$planning"
  done
done
