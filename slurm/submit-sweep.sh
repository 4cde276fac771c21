#!/usr/bin/env bash
# Submits an experiment as Slurm job arrays, one array task per grid point.
#     slurm/submit-sweep.sh [SBATCH_OPTIONS...] EXPERIMENT.toml [--set KEY=VALUE ...]
# e.g.
#     slurm/submit-sweep.sh experiments/quickstart.toml
#     slurm/submit-sweep.sh --time=2:00:00 --partition=long experiments/ratio.toml --set train.steps=2000
# Arguments before the first *.toml go to sbatch; --set overrides after it apply to every point.
# N comes from `lowcomm sweep --count`, each point's ranks from `--field ranks`: points with the same
# rank count go into one array (--ntasks=R) with at most LOWCOMM_ARRAY_PARALLEL tasks running at once
# (--array=0-(N-1)%K), so an experiment with a `ranks` axis becomes one array per rank count.
# Output: $LOWCOMM_RUNS/<experiment>/slurm-%A_%a.out; runs: $LOWCOMM_RUNS/<experiment>/<point>/.
# Site settings (partition, account, modules, binary, launcher): slurm/site.sh.
# LOWCOMM_DRY_RUN=1 prints the sbatch commands instead of running them.
set -euo pipefail
LOWCOMM_ROOT=${LOWCOMM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
source "${LOWCOMM_SITE:-$LOWCOMM_ROOT/slurm/site.sh}"
lowcomm_site_setup

sbatch_options=()
while (($#)) && [[ $1 != *.toml ]]; do
  sbatch_options+=("$1")
  shift
done
experiment=${1:?usage: slurm/submit-sweep.sh [SBATCH_OPTIONS...] EXPERIMENT.toml [--set KEY=VALUE ...]}
shift
[[ -r $experiment ]] || { echo "submit-sweep: no experiment file $experiment" >&2; exit 2; }
name=$(basename "$experiment" .toml)

count=$("$LOWCOMM_BIN" sweep "$experiment" --count "$@")
((count > 0)) || { echo "submit-sweep: $experiment has no grid points" >&2; exit 2; }
declare -A indices_of_ranks=()
for ((i = 0; i < count; i++)); do
  ranks=$("$LOWCOMM_BIN" sweep "$experiment" --index "$i" --field ranks "$@")
  indices_of_ranks[$ranks]+="$i "
done

# "0 1 2 5 6" -> "0-2,5-6"
ranges() {
  local out="" start="" prev="" i
  for i in $1; do
    if [[ -z $start ]]; then start=$i
    elif ((i != prev + 1)); then out+="${out:+,}$start$([[ $prev != "$start" ]] && echo "-$prev")"; start=$i
    fi
    prev=$i
  done
  echo "$out${out:+,}$start$([[ $prev != "$start" ]] && echo "-$prev")"
}

[[ -n ${LOWCOMM_DRY_RUN:-} ]] || mkdir -p "$LOWCOMM_RUNS/$name"
echo "== experiment $name: $count points into $LOWCOMM_RUNS/$name/ (launcher: $LOWCOMM_LAUNCHER)"
for ranks in $(printf '%s\n' "${!indices_of_ranks[@]}" | sort -n); do
  array=$(ranges "${indices_of_ranks[$ranks]}")
  command=(sbatch --parsable --array="$array%$LOWCOMM_ARRAY_PARALLEL" --ntasks="$ranks"
           --job-name="$name" --output="$LOWCOMM_RUNS/$name/slurm-%A_%a.out"
           "${sbatch_options[@]}" "$LOWCOMM_ROOT/slurm/sweep.sbatch" "$experiment" "$@")
  if [[ -n ${LOWCOMM_DRY_RUN:-} ]]; then
    echo "${command[*]}"
    continue
  fi
  job=$("${command[@]}")
  job=${job%%;*}
  echo "== array job $job: points $array on $ranks ranks each"
  echo "   squeue -j $job    tail -f $LOWCOMM_RUNS/$name/slurm-${job}_<index>.out"
done
echo "== when done: /usr/bin/python3 -m analysis report $LOWCOMM_RUNS/$name --out report/$name"
