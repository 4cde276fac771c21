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
      --set bench.compressors=threshold --set bench.shapes=test --set bench.iterations=1 \
      --set compressor.threshold.tau=1.0)
echo "$out"
grep -E "^  threshold +48x48 " <<<"$out"

# Plug-in faults a plug-in author meets, each with a clear message and the documented status.
# The same library through LOWCOMM_PLUGINS and --plugin: loaded once, with a note.
both=$(LOWCOMM_PLUGINS="$plugin" "$lowcomm" --plugin "$plugin" info 2>&1)
grep -q "is loaded already" <<<"$both" || { echo "FAIL: no note for a plug-in loaded twice: $both"; exit 1; }
grep -qE "^  threshold +entries with" <<<"$both"
# Two builds of it (another path): the second registration is refused naming both, exit 1, no abort.
cp "$plugin" "$scratch/second-build.so"
set +e
twice=$("$lowcomm" --plugin "$plugin" --plugin "$scratch/second-build.so" info 2>&1)
status=$?
set -e
[[ $status == 1 ]] || { echo "FAIL: a name registered twice exited $status: $twice"; exit 1; }
grep -q "compressor named 'threshold' is already registered (by $plugin); $scratch/second-build.so registers it again" \
  <<<"$twice" || { echo "FAIL: the duplicate's message does not name both libraries: $twice"; exit 1; }
# A library that registers nothing: a warning; an unknown name then lists who registered what.
printf 'int lowcomm_nothing_here = 1;\n' >"$scratch/empty.cpp"
c++ -shared -fPIC "$scratch/empty.cpp" -o "$scratch/empty.so"
set +e
nothing=$("$lowcomm" --plugin "$scratch/empty.so" --plugin "$plugin" bench compressors \
          --set bench.compressors=thresold --set bench.shapes=test 2>&1)
set -e
grep -q "plug-in '$scratch/empty.so' registered nothing" <<<"$nothing" ||
  { echo "FAIL: no warning for a plug-in that registers nothing: $nothing"; exit 1; }
grep -q "threshold (from $plugin)" <<<"$nothing" ||
  { echo "FAIL: the unknown-name message does not say which plug-in registered what: $nothing"; exit 1; }
echo "plug-in faults: loaded twice (noted), registered twice (refused naming both), registered nothing (warned)"
