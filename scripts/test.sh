#!/usr/bin/env bash
# Every test: builds the release preset (installing dependencies first) and runs CTest: unit
# tests, MPI tests at 1-4 ranks, the CLI, and an outside project built against the installed
# package. Pass "debug" to run them under AddressSanitizer + UndefinedBehaviorSanitizer instead.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
bash scripts/build.sh "$preset"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset "$preset"
