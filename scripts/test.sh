#!/usr/bin/env bash
# Every test, in three builds (docs/reliability.md, "What CI runs", says where the minutes go):
# - preset ci: the release build with the Kokkos kernels and, where nvcc is installed, the CUDA
#   code (one GPU architecture) compiled in, so that one build covers the release, kokkos and cuda
#   configurations: every test, the Kokkos kernels against Reference with every compressor's and
#   strategy's MPI test once more on them, and the tests labelled cuda or gpu on the host side (the
#   kernel dispatch with the CUDA backend compiled in, the CLI's and the installed package's CUDA
#   paths; the GPU tests skip saying why, scripts/gpu-check.sh runs them on a GPU). CTest runs unit
#   tests, MPI tests at 1-4 ranks, the CLI tests and an outside project built against the
#   installed package.
# - preset debug: AddressSanitizer and UndefinedBehaviorSanitizer, without the tests labelled long,
#   its matrix products through CMake's FindBLAS (the path a cluster's site BLAS takes);
# - preset fuzz: every fuzz target for 30 s, two at a time (scripts/fuzz.sh, docs/reliability.md;
#   the fixed defects' inputs first).
# Installs dependencies and builds first.
# `bash scripts/test.sh release` (or `ci`, `debug`, `kokkos`, `cuda`, `fuzz`) runs one; `release`
# also checks the FindBLAS configuration on its own (scripts/check-blas-findblas.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
presets=("${@:-release}")
if [ $# -eq 0 ]; then
  presets=(ci debug fuzz)
  if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "== no nvcc: the CUDA code is not built =="
  fi
fi
export PATH="$PATH:/usr/local/cuda/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Each preset's wall time, printed as it ends and summed up at the end: CI's limit is 90 minutes,
# and the aim 35 (docs/reliability.md).
timings=()
finished() { timings+=("$1 $(($(date +%s) - $2)) s"); echo "== $1 took ${timings[-1]#* } =="; }
all_started=$(date +%s)
for preset in "${presets[@]}"; do
  echo "== build and test: $preset =="
  started=$(date +%s)
  if [ "$preset" = fuzz ]; then
    JOBS=2 bash scripts/fuzz.sh 30
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
  if [ "$preset" = debug ]; then
    # The configuration this build stands for: FindBLAS found a BLAS and its cblas.h.
    cmake --preset debug | grep "matrix products use CBLAS" ||
      { echo "test.sh: the debug build's matrix products do not go through FindBLAS" >&2; exit 1; }
  fi
  ctest --preset "$preset"
  if [ "$preset" = release ]; then
    echo "== LOWCOMM_BLAS=FindBLAS: configure, build and run the GEMM tests =="
    bash scripts/check-blas-findblas.sh
  fi
  finished "$preset" "$started"
done
echo "== wall time per preset: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g'); in all $(($(date +%s) - all_started)) s =="
