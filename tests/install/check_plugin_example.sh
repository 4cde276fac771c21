#!/usr/bin/env bash
# Builds examples/threshold_compressor against an installed lowcomm, outside the tree, and runs it
# by name through the installed `lowcomm` command on 2 ranks.
# Usage: BUILD_DIR SOURCE_DIR SCRATCH_DIR MPIEXEC [extra cmake arguments...]
set -euo pipefail
build=$1 source=$2 scratch=$3 mpiexec=$4
shift 4
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$source/examples/threshold_compressor" -B "$scratch/plugin" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
      -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$scratch/plugin" >/dev/null
plugin="$scratch/plugin/liblowcomm_threshold.so"
lowcomm="$scratch/prefix/bin/lowcomm"
"$lowcomm" --plugin "$plugin" info >"$scratch/info.txt"
grep -E "^  threshold +entries with" "$scratch/info.txt"
LOWCOMM_PLUGINS="$plugin" "$lowcomm" info >"$scratch/info-env.txt"
grep -E "compressor\.threshold\.tau +default 0\.5" "$scratch/info-env.txt"
out=$("$mpiexec" -n 2 --oversubscribe "$lowcomm" --plugin "$plugin" bench compressors \
      --set bench.compressors=threshold --set bench.shapes=small --set bench.iterations=1 \
      --set compressor.threshold.tau=1.0)
echo "$out"
grep -E "^  threshold +48x48 " <<<"$out"
