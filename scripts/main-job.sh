#!/usr/bin/env bash
# The main job on its built-in defaults: builds lowcomm, then benchmarks the collectives on 4
# local MPI ranks under two modelled networks (consumer internet and 10 Gbps datacenter),
# printing the tables and writing one HDF5 run log per network to runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p runs
for scenario in consumer 10gbps; do
  echo "== lowcomm bench collectives, network.scenario=$scenario =="
  rm -f "runs/bench-$scenario.h5"
  mpiexec -n 4 --oversubscribe build/release/apps/lowcomm/lowcomm bench collectives \
    --set "network.scenario=$scenario" --log "runs/bench-$scenario.h5"
done
echo
echo "Run logs: $(pwd)/runs/bench-consumer.h5 and $(pwd)/runs/bench-10gbps.h5 (docs/log-format.md)"
