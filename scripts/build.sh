#!/usr/bin/env bash
# Builds lowcomm with a CMake preset (default: release), installing dependencies first.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
bash scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --parallel "$(nproc)"
