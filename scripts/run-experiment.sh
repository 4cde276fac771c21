#!/usr/bin/env bash
# Runs every grid point of an experiment file on this machine, one after the other, each with the
# number of MPI ranks the experiment gives it, into runs/<experiment>/<point>/ (log.h5,
# checkpoints/, config.toml). A point already complete is skipped and an interrupted one resumes,
# so the script can simply be run again. On a cluster, slurm/sweep.sbatch runs the points as a
# job array instead.
#   bash scripts/run-experiment.sh experiments/quickstart.toml [--set KEY=VALUE ...]
set -euo pipefail
cd "$(dirname "$0")/.."
experiment=${1:?usage: run-experiment.sh EXPERIMENT.toml [--set KEY=VALUE ...]}
shift
lowcomm=${LOWCOMM:-build/release/apps/lowcomm/lowcomm}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

name=$(basename "$experiment" .toml)
count=$("$lowcomm" sweep "$experiment" --count "$@")
echo "== experiment $name: $count runs into runs/$name/"
for ((i = 0; i < count; i++)); do
  point=$("$lowcomm" sweep "$experiment" --index "$i" --field name "$@")
  ranks=$("$lowcomm" sweep "$experiment" --index "$i" --field ranks "$@")
  out="runs/$name/$point"
  mkdir -p "$out"
  "$lowcomm" sweep "$experiment" --index "$i" "$@" > "$out/config.toml"
  echo "== [$((i + 1))/$count] $point on $ranks ranks"
  mpiexec -n "$ranks" --oversubscribe "$lowcomm" train --config "$out/config.toml" --out "$out" --resume
done
