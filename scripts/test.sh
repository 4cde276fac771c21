#!/usr/bin/env bash
# Every test, twice: in the release build, and in the debug build under AddressSanitizer and
# UndefinedBehaviorSanitizer. Installs dependencies and builds first. CTest runs unit tests, MPI
# tests at 1-4 ranks, the CLI tests and an outside project built against the installed package.
# After the release tests, the LOWCOMM_BLAS=FindBLAS configuration (scripts/check-blas-findblas.sh)
# the Kokkos configuration (preset kokkos: the Kokkos kernels against Reference, and every
# compressor's and strategy's MPI test and benchmark once more on them; only what those tests need
# is built), and
# the CUDA configuration where nvcc is installed (preset cuda: the library and CLI built with the
# CUDA code, and the tests labelled cuda or gpu run, as a cluster's login node with nvcc and no GPU
# would: the kernel dispatch with the CUDA backend compiled in, the CLI's and the installed
# package's CUDA paths, and the GPU tests, which skip saying why; scripts/gpu-check.sh runs them on
# a GPU. The rest of the code is the same as in the release build, whose tests it would repeat).
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
# Each preset's wall time, printed as it ends and summed up at the end: CI's limit is 90 minutes.
timings=()
finished() { timings+=("$1 $(($(date +%s) - $2)) s"); echo "== $1 took ${timings[-1]#* } =="; }
for preset in "${presets[@]}"; do
  echo "== build and test: $preset =="
  started=$(date +%s)
  if [ "$preset" = fuzz ]; then
    bash scripts/fuzz.sh 30
    finished "$preset" "$started"
    continue
  fi
  if [ "$preset" = kokkos ]; then
    bash scripts/build.sh kokkos lowcomm_cli kernels_kokkos_test compressors_mpi_test strategy_mpi_test \
      demo_fixture_test
  elif [ "$preset" = cuda ]; then
    source scripts/cuda-test-targets.sh
    bash scripts/build.sh cuda "${cuda_test_targets[@]}"
  else
    bash scripts/build.sh "$preset"
  fi
  ctest --preset "$preset"
  if [ "$preset" = release ]; then
    echo "== LOWCOMM_BLAS=FindBLAS: configure, build and run the GEMM tests =="
    bash scripts/check-blas-findblas.sh
  fi
  finished "$preset" "$started"
done
echo "== wall time per preset: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g') =="
