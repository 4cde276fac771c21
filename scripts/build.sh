#!/usr/bin/env bash
# Builds lowcomm with a CMake preset (default: release), installing dependencies first.
#   bash scripts/build.sh [PRESET [TARGET ...]]   (no targets: everything)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
targets=("${@:2}")
bash scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --parallel "$(nproc)" ${targets[@]:+--target "${targets[@]}"}
