#!/usr/bin/env bash
# Runs every grid point of an experiment file on this machine, one after the other, each with the
# number of MPI ranks the experiment gives it, into runs/<experiment>/<point>/ (log.h5,
# checkpoints/, config.toml). A point already complete is skipped and an interrupted one resumes,
# so the script can simply be run again. On a cluster, slurm/sweep.sbatch runs the points as a
# job array instead.
#   bash scripts/run-experiment.sh experiments/quickstart.toml [--set KEY=VALUE ...]
# The runs go under the repository's runs/ wherever it is called from; a relative EXPERIMENT path
# is taken from the caller's directory.
set -euo pipefail
experiment=${1:?usage: run-experiment.sh EXPERIMENT.toml [--set KEY=VALUE ...]}
shift
if [ ! -f "$experiment" ]; then
  echo "run-experiment.sh: no experiment file $experiment (from $(pwd))" >&2
  exit 2
fi
experiment=$(realpath "$experiment")
cd "$(dirname "$0")/.."
lowcomm=${LOWCOMM:-build/release/apps/lowcomm/lowcomm}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

name=$(basename "$experiment" .toml)
count=$("$lowcomm" sweep "$experiment" --count "$@")
echo "== experiment $name: $count runs into runs/$name/"
# Every point's configuration is written before the first run, so that the grid is the file as it
# was when the script started: an edit made while it runs (a point added in the middle) cannot
# shift the later points' indices and leave some of them out. Run the script again to pick it up.
points=() ranks=()
for ((i = 0; i < count; i++)); do
  point=$("$lowcomm" sweep "$experiment" --index "$i" --field name "$@")
  points+=("$point")
  ranks+=("$("$lowcomm" sweep "$experiment" --index "$i" --field ranks "$@")")
  mkdir -p "runs/$name/$point"
  "$lowcomm" sweep "$experiment" --index "$i" "$@" > "runs/$name/$point/config.toml"
done
for ((i = 0; i < count; i++)); do
  out="runs/$name/${points[i]}"
  echo "== [$((i + 1))/$count] ${points[i]} on ${ranks[i]} ranks"
  mpiexec -n "${ranks[i]}" --oversubscribe "$lowcomm" train --config "$out/config.toml" --out "$out" --resume
done
