#!/usr/bin/env bash
# Overlap of communication with compute, measured by training: DeMo (strategy.demo.pipeline none/stale),
# streaming DiLoCo (overlap_steps 0 / TAU) and data-parallel DDP buckets (strategy.data_parallel.
# overlap off/on: compressor none, 0.5 MB buckets, no clipping), each on the consumer and 1gbps scenarios, once in
# network.mode = simulate (the simulated clock's step time) and once in throttle (the exchange
# really held for its modelled time: wall-clock step time), with `lowcomm train` on RANKS ranks.
# The tiny preset with batch 16 × 64 tokens makes a step's compute (about 0.1 s here) of the
# order of an exchange on the consumer link, where overlap matters.
# Prints, per method, scenario and mode, the mean step time over steps 1..STEPS-1 (simulated_s
# differences; step 0 warms up), the mean exposed and hidden communication per step from the log,
# and throttle / simulate.
# Usage: scripts/bench-overlap.sh [build-dir]   (default build/release)
# Env: RANKS (2), STEPS (20), TAU (4)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
ranks=${RANKS:-2}
steps=${STEPS:-20}
tau=${TAU:-4}
lowcomm=$build/apps/lowcomm/lowcomm
out=$(mktemp -d /tmp/bench-overlap.XXXXXX)
trap 'rm -rf "$out"' EXIT
cores=$(nproc --all)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

common=(--set data.source=markov --set model.preset=tiny --set data.batch_size=16 --set data.seq_len=64
        --set train.steps="$steps" --set train.eval_every=0 --set train.checkpoint_every=0
        --set train.progress_every=1000)
declare -A methods=(
  [demo]="--set strategy.name=demo --set schedule.lr=1.5e-3"
  [demo_stale]="--set strategy.name=demo --set schedule.lr=1.5e-3 --set strategy.demo.pipeline=stale"
  [diloco_tau0]="--set strategy.name=diloco --set strategy.diloco.inner_steps=10 --set strategy.diloco.fragments=2 --set compressor.none.value_type=bf16"
  [diloco_tau$tau]="--set strategy.name=diloco --set strategy.diloco.inner_steps=10 --set strategy.diloco.fragments=2 --set compressor.none.value_type=bf16 --set strategy.diloco.overlap_steps=$tau"
  [ddp]="--set strategy.name=data_parallel --set compressor.granularity=bucket --set compressor.bucket_mb=0.5 --set train.grad_clip=0"
  [ddp_overlap]="--set strategy.name=data_parallel --set compressor.granularity=bucket --set compressor.bucket_mb=0.5 --set train.grad_clip=0 --set strategy.data_parallel.overlap=true"
)
order=(demo demo_stale diloco_tau0 "diloco_tau$tau" ddp ddp_overlap)
echo "lowcomm $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $ranks ranks, $steps steps, $cores cores"
for method in "${order[@]}"; do
  for scenario in consumer 1gbps; do
    for mode in simulate throttle; do
      # shellcheck disable=SC2086  # the method's settings are words
      mpiexec -n "$ranks" --oversubscribe "$lowcomm" train --out "$out/$method-$scenario-$mode" --force \
        "${common[@]}" ${methods[$method]} --set network.scenario="$scenario" --set network.mode="$mode" > /dev/null
    done
  done
done
/usr/bin/python3 - "$out" "${order[@]}" <<'PY'
import sys, h5py, numpy as np
out, methods = sys.argv[1], sys.argv[2:]
print(f"{'method':<14} {'scenario':<9} {'sim step s':>10} {'throttle step s':>15} {'ratio':>6} "
      f"{'exposed s':>9} {'hidden s':>8} {'modelled s':>10}")
for method in methods:
    for scenario in ("consumer", "1gbps"):
        step = {}
        for mode in ("simulate", "throttle"):
            with h5py.File(f"{out}/{method}-{scenario}-{mode}/log.h5", "r") as f:
                s = f["steps"]
                clock = s["simulated_s"][:]
                step[mode] = (clock[-1] - clock[0]) / (len(clock) - 1)
                if mode == "simulate":
                    exposed, hidden = s["comm_exposed_s"][1:].mean(), s["comm_hidden_s"][1:].mean()
                    modelled = s["comm_modelled_s"][1:].mean()
        print(f"{method:<14} {scenario:<9} {step['simulate']:>10.3f} {step['throttle']:>15.3f} "
              f"{step['throttle'] / step['simulate']:>6.2f} {exposed:>9.3f} {hidden:>8.3f} {modelled:>10.3f}")
PY
