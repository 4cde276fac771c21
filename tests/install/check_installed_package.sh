#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds tests/install/consumer against it with
# find_package(lowcomm), and runs it on 2 ranks.
# Usage: BUILD_DIR SOURCE_DIR SCRATCH_DIR MPIEXEC [extra cmake arguments for the consumer...]
set -euo pipefail
build=$1 source=$2 scratch=$3 mpiexec=$4
shift 4
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
test -f "$scratch/prefix/include/lowcomm/lowcomm.hpp"
test -x "$scratch/prefix/bin/lowcomm"
"$scratch/prefix/bin/lowcomm" info >"$scratch/info.txt" && head -1 "$scratch/info.txt"
cmake -S "$source/tests/install/consumer" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
      -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$mpiexec" -n 2 --oversubscribe "$scratch/consumer/consumer"
