#!/usr/bin/env bash
# Every test, twice: in the release build, and in the debug build under AddressSanitizer and
# UndefinedBehaviorSanitizer. Installs dependencies and builds first. CTest runs unit tests, MPI
# tests at 1-4 ranks, the CLI tests and an outside project built against the installed package.
# After the release tests, the LOWCOMM_BLAS=FindBLAS configuration (scripts/check-blas-findblas.sh)
# the Kokkos configuration (preset kokkos: the Kokkos kernels against Reference, and every
# compressor's and strategy's MPI test and benchmark once more on them; only what those tests need
# is built), and
# the CUDA configuration where nvcc is installed (preset cuda: everything built with the CUDA code,
# and every test but the long ones run, as a cluster's login node with nvcc and no GPU would: each
# passes, or skips saying why (the GPU tests); scripts/gpu-check.sh runs them on a GPU).
# Last, every fuzz target for 30 s (preset fuzz: scripts/fuzz.sh, docs/reliability.md; the fixed
# defects' inputs first).
# `bash scripts/test.sh release` (or `debug`, `kokkos`, `cuda`, `fuzz`) runs one.
set -euo pipefail
cd "$(dirname "$0")/.."
presets=("${@:-release}")
if [ $# -eq 0 ]; then
  presets=(release kokkos)
  if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    presets+=(cuda)
  else
    echo "== no nvcc: the CUDA configuration is not built =="
  fi
  presets+=(debug fuzz)
fi
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for preset in "${presets[@]}"; do
  echo "== build and test: $preset =="
  if [ "$preset" = fuzz ]; then
    bash scripts/fuzz.sh 30
    continue
  fi
  if [ "$preset" = kokkos ]; then
    bash scripts/build.sh kokkos lowcomm_cli kernels_kokkos_test compressors_mpi_test strategy_mpi_test \
      demo_fixture_test
  else
    bash scripts/build.sh "$preset"
  fi
  ctest --preset "$preset"
  if [ "$preset" = release ]; then
    echo "== LOWCOMM_BLAS=FindBLAS: configure, build and run the GEMM tests =="
    bash scripts/check-blas-findblas.sh
  fi
done
