#!/usr/bin/env bash
# Coverage-guided fuzzing of every reader of bytes lowcomm did not write (tests/fuzz,
# docs/reliability.md). Builds preset `fuzz` (Clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer), then runs each target for SECONDS from its committed seeds
# (tests/fuzz/corpus/<target>/) and a working corpus that grows from run to run
# (build/fuzz/corpus/<target>/), with its dictionary where it has one
# (tests/fuzz/dictionaries/<target>.dict), after the inputs of the defects fuzzing found and
# that were fixed (tests/fuzz/regressions/<target>/), which must run clean. A crash, a sanitizer
# report, a leak, an uncaught exception other than lowcomm::Error, or an input running past 10 s
# stops it: libFuzzer writes the input to build/fuzz/findings/<target>/ and the script exits
# non-zero after the other targets.
# Prints a line per target: executions, executions/s, coverage (libFuzzer's edge count "cov") and
# the corpus's size.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET ...]      (default 30 s each, every target)
#   JOBS=2 bash scripts/fuzz.sh 600                  (two targets at once: one per core)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
jobs=${JOBS:-1}
bash scripts/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)"
if [ ${#targets[@]} -eq 0 ]; then
  for source in tests/fuzz/*.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi

run_target() {
  local target=$1 work=build/fuzz/corpus/$1 findings=build/fuzz/findings/$1 log=build/fuzz/logs/$1.log
  mkdir -p "$work" "$findings" build/fuzz/logs
  local status=0
  # The inputs of defects found and fixed, once each, before any fuzzing.
  if compgen -G "tests/fuzz/regressions/$target/*" >/dev/null; then
    if ! "build/fuzz/tests/fuzz/fuzz_$target" tests/fuzz/regressions/"$target"/* >"$log" 2>&1; then
      printf 'fuzz %-18s FAILED: a fixed defect is back (tests/fuzz/regressions/%s)\n' "$target" "$target" >&2
      tail -40 "$log" >&2
      return 1
    fi
  fi
  # The working corpus first (new inputs are written to the first folder), then the seeds; the
  # target's dictionary (tests/fuzz/dictionaries/<target>.dict) where it has one.
  local dictionary=()
  [ -f "tests/fuzz/dictionaries/$target.dict" ] && dictionary=(-dict="tests/fuzz/dictionaries/$target.dict")
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "build/fuzz/tests/fuzz/fuzz_$target" "$work" "tests/fuzz/corpus/$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 -print_final_stats=1 \
    -artifact_prefix="$findings/" ${dictionary[@]+"${dictionary[@]}"} >"$log" 2>&1 || status=$?
  local execs cov corpus rate
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corpus=$(find "$work" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    printf 'fuzz %-18s ok     %10s executions %8s/s  cov %6s edges  corpus %5s inputs  (%s s)\n' \
      "$target" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$corpus" "$seconds"
  else
    printf 'fuzz %-18s FAILED (exit %s): %s; the input is in %s\n' "$target" "$status" \
      "$(grep -m1 -E 'ERROR|runtime error|deadly signal|timeout|out-of-memory' "$log" || echo 'see the log')" "$findings" >&2
    tail -40 "$log" >&2
    return 1
  fi
}

failed=0
running=0
for target in "${targets[@]}"; do
  [ -x "build/fuzz/tests/fuzz/fuzz_$target" ] || { echo "fuzz: no target '$target' (tests/fuzz/$target.cpp)" >&2; exit 2; }
  if [ "$jobs" -gt 1 ]; then
    run_target "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || failed=1; running=$((running - 1)); fi
  else
    run_target "$target" || failed=1
  fi
done
while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
exit "$failed"
