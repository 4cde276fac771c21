#!/usr/bin/env bash
# The network model against real shaped links on this machine (docs/network-model.md, "Checked
# against shaped links"). As root it builds W network namespaces, each joined to a bridge by a
# veth pair, shapes every link in both directions with tbf (upload: the namespace's egress;
# download: the bridge side's egress towards it), and runs `lowcomm bench collectives` with one
# Open MPI rank per namespace over the TCP BTL, the ring algorithms pinned (coll_tuned dynamic
# rules) and messages up to 64 MiB sent eagerly: above the eager limit the TCP BTL waits a round
# trip for the receiver's go-ahead and sends in segments, a protocol cost the model does not price
# (1.75x the modelled time at 16 MiB and 100 Mbit/s with the defaults; docs/network-model.md). The bench runs in simulate mode: its collectives cross the real links, and its log holds
# the measured time beside the model's prediction for the same rate.
#   bash scripts/shaped-links.sh [--quick] [OUT]   (default OUT: runs/shaped-links)
# Full grid: W = 2, 3, 4 at 10, 100 and 1000 Mbit/s, 1 KiB up to 1, 16 and 64 MiB (about 8 min).
# --quick (the CTest): W = 2 and 3 at 100 Mbit/s, 64 KiB to 1 MiB. Then:
#   /usr/bin/python3 scripts/shaped_links_report.py OUT      # table and plot of modelled vs measured
# WORLDS="2 3" and RATES="100" narrow the grid; SHAPE_QUEUE_MS sets tbf's queue (default 20 ms).
# Exits 77 (CTest's skip) with the reason when namespaces cannot be made (not root, no `ip`/`tc`).
# Everything it makes is named lcsl* and removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
out=${1:-runs/shaped-links}
lowcomm=$(realpath "${LOWCOMM:-build/release/apps/lowcomm/lowcomm}")
[ -x "$lowcomm" ] || { echo "shaped-links: no lowcomm at $lowcomm (bash scripts/build.sh)" >&2; exit 1; }

skip() { echo "shaped-links: skipped: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null && command -v tc >/dev/null || skip "needs ip and tc (apt-get install iproute2)"

cleanup() {
  for ns in $(ip netns list 2>/dev/null | awk '/^lcsl/ {print $1}'); do ip netns del "$ns" 2>/dev/null || true; done
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '/lcsl/ {print $2}' | cut -d@ -f1); do
    ip link del "$link" 2>/dev/null || true
  done
}
trap cleanup EXIT
cleanup

# One namespace per rank, 10.77.0.(r+1)/24, behind bridge lcslbr (10.77.0.254) in this namespace,
# which the ranks' PMIx and daemon connections reach. $1 = ranks, $2 = rate in Mbit/s.
links_up() {
  local world=$1 rate=$2
  # A short queue (tbf latency) keeps TCP from filling a deep buffer whose delay every MPI
  # handshake would wait behind; the burst holds a few full-size frames.
  local shape="tbf rate ${rate}mbit burst $((rate * 125 > 16000 ? rate * 125 : 16000)) latency ${SHAPE_QUEUE_MS:-20}ms"
  ip link add lcslbr type bridge || skip "cannot create a bridge"
  ip addr add 10.77.0.254/24 dev lcslbr
  ip link set lcslbr up
  for ((r = 0; r < world; r++)); do
    ip netns add "lcsl$r" || skip "cannot create network namespaces"
    ip link add "lcsl${r}h" type veth peer name "lcsl${r}n"
    ip link set "lcsl${r}n" netns "lcsl$r"
    ip link set "lcsl${r}h" master lcslbr up
    ip netns exec "lcsl$r" ip addr add "10.77.0.$((r + 1))/24" dev "lcsl${r}n"
    ip netns exec "lcsl$r" ip link set "lcsl${r}n" up
    ip netns exec "lcsl$r" ip link set lo up
    # An MPI exchange after an idle gap must not restart from TCP slow start.
    ip netns exec "lcsl$r" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
    ip netns exec "lcsl$r" tc qdisc add dev "lcsl${r}n" root $shape || skip "tc cannot add a tbf qdisc"
    tc qdisc add dev "lcsl${r}h" root $shape
  done
}

# $1 = ranks, $2 = rate, $3 = largest size, $4 = smallest size: one bench into $out.
bench() {
  local world=$1 rate=$2 max=$3 min=$4
  local log="$out/w${world}-${rate}mbit.h5"
  # The quick grid's sizes are small enough for 5 iterations (its 10 % check on a shared machine
  # missed by 0.9 % once with 3); the full grid's largest take seconds each.
  local iterations=$((quick == 1 ? 5 : 3))
  local settings=(--set network.mode=simulate --set network.scenario=ideal
                  --set "network.upload_mbps=$rate" --set "network.download_mbps=$rate"
                  --set network.latency_ms=0.05 --set "bench.min_bytes=$min" --set "bench.max_bytes=$max"
                  --set bench.factor=4 --set "bench.iterations=$iterations" --set bench.warmup=1)
  local mpmd=()
  for ((r = 0; r < world; r++)); do
    [ $r -eq 0 ] || mpmd+=(:)
    mpmd+=(-n 1 ip netns exec "lcsl$r" "$lowcomm" bench collectives "${settings[@]}" --log "$log")
  done
  echo "== W = $world, $rate Mbit/s, $min to $max bytes -> $log"
  rm -f "$log"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=10.77.0.0/24 \
    mpiexec --oversubscribe --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 \
      --mca oob_tcp_if_include 10.77.0.0/24 --mca coll_tuned_use_dynamic_rules 1 \
      --mca coll_tuned_allreduce_algorithm 4 --mca coll_tuned_allgather_algorithm 4 \
      --mca btl_tcp_eager_limit "${EAGER_BYTES:-67108864}" --mca btl_tcp_max_send_size "${EAGER_BYTES:-67108864}" \
      ${MPI_EXTRA:-} "${mpmd[@]}"
}

mkdir -p "$out"
if [ $quick -eq 1 ]; then
  worlds=(2 3) rates=(100)
else
  worlds=(2 3 4) rates=(10 100 1000)
fi
# WORLDS="2" RATES="100" narrow the grid (to rerun one point).
[ -z "${WORLDS:-}" ] || read -r -a worlds <<<"$WORLDS"
[ -z "${RATES:-}" ] || read -r -a rates <<<"$RATES"
for world in "${worlds[@]}"; do
  for rate in "${rates[@]}"; do
    if [ $quick -eq 1 ]; then min=65536 max=1048576; else min=1024; max=$((rate == 10 ? 1048576 : rate == 100 ? 16777216 : 67108864)); fi
    links_up "$world" "$rate"
    bench "$world" "$rate" "$max" "$min"
    cleanup
  done
done
echo "shaped-links: logs in $out; /usr/bin/python3 scripts/shaped_links_report.py $out"
