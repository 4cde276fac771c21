#!/usr/bin/env bash
# scripts/run-experiment.sh end to end on a two-point experiment of tiny markov runs: both points
# run into runs/<experiment>/, a second call skips them, and a point added to the file while the
# first call runs is left for the next call instead of shifting the others' indices.
#   LOWCOMM=build/release/apps/lowcomm/lowcomm bash tests/cli/run_experiment_test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${LOWCOMM:?set LOWCOMM to the lowcomm binary}"
name=run_experiment_script_test
work=$(mktemp -d)
trap 'rm -rf "$work" "runs/$name"' EXIT
rm -rf "runs/$name"
experiment="$work/$name.toml"
cat > "$experiment" <<'TOML'
[model]
preset = "tiny"
[data]
source = "markov"
batch_size = 2
seq_len = 16
[train]
steps = 3
eval_every = 0
checkpoint_every = 3
[sweep]
name = "run-experiment.sh test"
ranks = 2
[[sweep.method]]
name = "first"
set = { "schedule.lr" = 1e-3 }
[[sweep.method]]
name = "second"
set = { "schedule.lr" = 3e-3 }
TOML
fail() { echo "FAIL: $*"; exit 1; }

# The first point, once started, adds a point before the second to the file: the second must still
# run, and the added one wait for the next call.
LOWCOMM="$LOWCOMM" bash scripts/run-experiment.sh "$experiment" > "$work/first.log" 2>&1 &
runner=$!
while ! grep -q "== \[1/2\] first" "$work/first.log" 2>/dev/null; do
  kill -0 "$runner" 2>/dev/null || break
  sleep 0.2
done
sed -i 's/^name = "second"/name = "added"/; s/^set = { "schedule.lr" = 3e-3 }/&\n[[sweep.method]]\nname = "second"\nset = { "schedule.lr" = 3e-3 }/' "$experiment"
wait "$runner" || { cat "$work/first.log"; fail "the first call failed"; }
for point in first second; do
  [ -f "runs/$name/$point/checkpoints/latest" ] || { cat "$work/first.log"; fail "$point did not run"; }
done
grep -q "== \[2/2\] second" "$work/first.log" || fail "the second point was not the second of two"
[ ! -e "runs/$name/added" ] || fail "the point added during the call ran in it"

# The next call: the added point runs, the others are found complete.
LOWCOMM="$LOWCOMM" bash scripts/run-experiment.sh "$experiment" > "$work/second.log" 2>&1 ||
  { cat "$work/second.log"; fail "the second call failed"; }
[ -f "runs/$name/added/checkpoints/latest" ] || fail "the added point did not run in the next call"
[ "$(grep -c "already holds all 3 steps" "$work/second.log")" = 2 ] || { cat "$work/second.log"; fail "complete points were not skipped"; }

# Called from another folder with a relative path: the path is the caller's, the runs the repository's.
repo=$(pwd) binary=$(realpath "$LOWCOMM")
(cd "$work" && LOWCOMM="$binary" bash "$repo/scripts/run-experiment.sh" "$name.toml") > "$work/third.log" 2>&1 ||
  { cat "$work/third.log"; fail "a relative path from another folder failed"; }
[ "$(grep -c "already holds all 3 steps" "$work/third.log")" = 3 ] || { cat "$work/third.log"; fail "not the same runs"; }
if (cd "$work" && bash "$repo/scripts/run-experiment.sh" no-such.toml) > "$work/missing.log" 2>&1; then
  fail "a missing experiment file was accepted"
fi
grep -q "no experiment file no-such.toml (from $work)" "$work/missing.log" || { cat "$work/missing.log"; fail "no message"; }
echo "run-experiment.sh: two points run, an edit during the call left for the next, complete points skipped, a relative path from elsewhere resolved"
