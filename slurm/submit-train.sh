#!/usr/bin/env bash
# Submits one training run (slurm/train.sbatch) with the site settings of slurm/site.sh.
#     slurm/submit-train.sh [SBATCH_OPTIONS...] CONFIG.toml OUT_DIR
# e.g.
#     slurm/submit-train.sh --ntasks=4 --time=1:00:00 run.toml runs/demo
# Without --ntasks the config's "# ranks = R" line (configs written by `lowcomm sweep --index`)
# decides; the output file is OUT_DIR/slurm-%j.out.
set -euo pipefail
LOWCOMM_ROOT=${LOWCOMM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
source "${LOWCOMM_SITE:-$LOWCOMM_ROOT/slurm/site.sh}"
lowcomm_site_setup

sbatch_options=()
while (($#)) && [[ $1 != *.toml ]]; do
  sbatch_options+=("$1")
  shift
done
usage="usage: slurm/submit-train.sh [SBATCH_OPTIONS...] CONFIG.toml OUT_DIR"
config=${1:?$usage}
out=${2:?$usage}
[[ -r $config ]] || { echo "submit-train: no config file $config" >&2; exit 2; }
ranks=$(sed -n 's/^# ranks = \([0-9][0-9]*\)$/\1/p' "$config" | head -n 1)
if [[ -n $ranks && " ${sbatch_options[*]} " != *" --ntasks"* && " ${sbatch_options[*]} " != *" -n"* ]]; then
  sbatch_options=(--ntasks="$ranks" "${sbatch_options[@]}")
fi
mkdir -p "$out"
job=$(sbatch --parsable --output="$out/slurm-%j.out" "${sbatch_options[@]}" \
  "$LOWCOMM_ROOT/slurm/train.sbatch" "$config" "$out")
echo "== job ${job%%;*}: $config into $out; output $out/slurm-${job%%;*}.out"
