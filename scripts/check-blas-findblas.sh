#!/usr/bin/env bash
# The LOWCOMM_BLAS=FindBLAS path (how a cluster build picks MKL, BLIS or its site BLAS), checked
# with the BLAS this machine has: configure lowcomm with CMake's FindBLAS on Debian's generic
# libblas (the reference CBLAS interface of whatever BLAS the alternatives select), build the GEMM
# and DCT tests, and run them. Skips (exit 0, says so) where no generic libblas is installed.
# Usage: scripts/check-blas-findblas.sh [build-dir]   (default: build/findblas)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/findblas}
if ! ls /usr/lib/*/libblas.so >/dev/null 2>&1 && ! ls /usr/lib/libblas.so >/dev/null 2>&1; then
  echo "check-blas-findblas: no generic libblas.so here; skipped"
  exit 0
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOWCOMM_BLAS=FindBLAS -DBLA_VENDOR=Generic \
      -DLOWCOMM_ENABLE_CUDA=OFF -DLOWCOMM_BUILD_APPS=OFF | tee "$build.configure.log" | grep "lowcomm:"
grep -q "matrix products use CBLAS" "$build.configure.log" || { echo "check-blas-findblas: FindBLAS was not used" >&2; exit 1; }
rm -f "$build.configure.log"
cmake --build "$build" -j"$(nproc)" --target kernels_encoding_test kernels_transform_test
"$build/tests/kernels/kernels_encoding_test" --gtest_filter='Gemm*:Orthonormalize*' --gtest_brief=1
# The DCT's products are the only ones with row strides other than the dense defaults.
"$build/tests/kernels/kernels_transform_test" --gtest_filter='Dct*' --gtest_brief=1
