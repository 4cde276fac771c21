#!/usr/bin/env bash
# Training throughput of the transformer reference model against PyTorch, same machine, same run:
#   lowcomm bench model (apps/gpt on OpenBLAS sgemm) and scripts/bench_model_torch.py (the
#   identical model in Debian's PyTorch, whose GEMMs go to OpenBLAS via libopenblas0-pthread),
# for gpt2-124m (B=4, T=64) and the small preset, at the same thread count. Prints tokens/s of
# both, their ratio, and each as a fraction of the sgemm FLOP rate measured by lowcomm in the
# same run (model FLOPs/token = 6·(N − T_max·C) + 12·L·C·T, nanoGPT's estimate_mfu).
#
# Usage: scripts/bench-model.sh [build-dir] [threads]   (defaults: build/release, nproc)
# Env: STEPS (default 5), WARMUP (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
threads=${2:-$(nproc)}
steps=${STEPS:-5}
warmup=${WARMUP:-2}
lowcomm="$build/apps/lowcomm/lowcomm"
[ -x "$lowcomm" ] || { echo "bench-model: $lowcomm not built (cmake --build $build --target lowcomm_cli)" >&2; exit 1; }
if ! /usr/bin/python3 -c "import torch" 2>/dev/null || ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed"; then
  echo "bench-model: needs python3-torch and libopenblas0-pthread (apt-get install -y python3-torch libopenblas0-pthread)" >&2
  exit 1
fi
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# git $(git rev-parse --short HEAD 2>/dev/null || echo unknown); threads $threads; $steps timed steps after $warmup warm-up"
for spec in "gpt2-124m 4 64" "small 4 64"; do
  read -r preset B T <<<"$spec"
  ours=$("$lowcomm" bench model --preset "$preset" -B "$B" -T "$T" --threads "$threads" --steps "$steps" --warmup "$warmup")
  echo "$ours"
  torch=$(OMP_NUM_THREADS=$threads /usr/bin/python3 scripts/bench_model_torch.py --preset "$preset" -B "$B" -T "$T" \
            --threads "$threads" --steps "$steps" --warmup "$warmup")
  echo "$torch"
  # Fields of lowcomm's data row: preset B T threads tokens/s step best fwd+bwd optimizer GFLOP/s of_sgemm.
  row=$(echo "$ours" | awk -v p="$preset" '$1 == p')
  sgemm=$(echo "$ours" | sed -n 's/^# gemm \([0-9.]*\) GFLOP.*/\1/p')
  flops=$(echo "$ours" | sed -n 's/.*= \([0-9.e+]*\)$/\1/p')
  ours_tps=$(echo "$row" | awk '{print $5}')
  torch_tps=$(echo "$torch" | sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p')
  awk -v p="$preset" -v o="$ours_tps" -v t="$torch_tps" -v s="$sgemm" -v f="$flops" 'BEGIN {
    printf "SUMMARY %-10s lowcomm %8.1f tok/s (%4.1f%% of sgemm)  torch %8.1f tok/s (%4.1f%% of sgemm)  lowcomm/torch %.2fx\n",
           p, o, 100 * o * f / (s * 1e9), t, 100 * t * f / (s * 1e9), o / t }'
done
