#!/usr/bin/env bash
# Every test, twice: in the release build, and in the debug build under AddressSanitizer and
# UndefinedBehaviorSanitizer. Installs dependencies and builds first. CTest runs unit tests, MPI
# tests at 1-4 ranks, the CLI tests and an outside project built against the installed package.
# After the release tests, the LOWCOMM_BLAS=FindBLAS configuration (scripts/check-blas-findblas.sh)
# and the Kokkos configuration (preset kokkos: the Kokkos kernels against Reference, and every
# compressor's MPI test and benchmark once more on them; only what those tests need is built).
# `bash scripts/test.sh release` (or `debug`, or `kokkos`) runs one of them.
set -euo pipefail
cd "$(dirname "$0")/.."
presets=("${@:-release}")
[ $# -eq 0 ] && presets=(release kokkos debug)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for preset in "${presets[@]}"; do
  echo "== build and test: $preset =="
  if [ "$preset" = kokkos ]; then
    bash scripts/build.sh kokkos lowcomm_cli kernels_kokkos_test compressors_mpi_test
  else
    bash scripts/build.sh "$preset"
  fi
  ctest --preset "$preset"
  if [ "$preset" = release ]; then
    echo "== LOWCOMM_BLAS=FindBLAS: configure, build and run the GEMM tests =="
    bash scripts/check-blas-findblas.sh
  fi
done
