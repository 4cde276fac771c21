#!/usr/bin/env bash
# slurm/ against a real Slurm: starts a private one-node Slurm (munged, slurmctld, slurmd) in a
# temporary folder, then
#   1. submits a 2-point job array of a tiny experiment with slurm/submit-sweep.sh (srun --mpi=pmix)
#      and checks both runs completed: output files named %A_%a, every step in each HDF5 log;
#   2. submits two longer single array tasks by hand (`sbatch --array=i slurm/sweep.sbatch`), one
#      launching ranks with srun, one with mpirun (LOWCOMM_LAUNCHER=mpirun), sends each batch
#      shell SIGUSR1 once its live log shows progress (what `--signal=B:USR1@120` does before a
#      time limit), and checks that each checkpointed, requeued itself (Restarts=1,
#      slurm_restart_count), resumed (resume_count >= 1) and completed every step.
# Usage: run_slurm_test.sh LOWCOMM_BINARY. Needs root (the daemons run as root, as on these test
# machines); installs Debian's slurmctld slurmd slurm-client munge when they are missing; exits 77
# (skipped) when not root or when they cannot be installed. Everything it starts is stopped by
# process id and everything it writes is removed, also on failure.
set -uo pipefail

lowcomm=$(realpath "${1:?usage: run_slurm_test.sh LOWCOMM_BINARY}")
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python=/usr/bin/python3
SKIP=77

log() { echo "[slurm test $(date +%T)] $*"; }
fail() {
  echo "[slurm test] FAILED: $*" >&2
  diagnostics
  exit 1
}

# --- Slurm and munge ---------------------------------------------------------------------------
have_slurm() { command -v slurmctld && command -v slurmd && command -v sbatch && command -v munged; } >/dev/null
if ! have_slurm; then
  if [[ $(id -u) != 0 ]]; then
    log "SKIP: Slurm is not installed and installing it needs root (apt-get install slurmctld slurmd slurm-client munge)"
    exit $SKIP
  fi
  log "installing slurmctld slurmd slurm-client munge (apt-get)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd slurm-client munge >/tmp/lowcomm-slurm-apt.$$.log 2>&1 &&
     ! { DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -q slurmctld slurmd slurm-client munge; } >>/tmp/lowcomm-slurm-apt.$$.log 2>&1; then
    tail -n 20 /tmp/lowcomm-slurm-apt.$$.log
    rm -f /tmp/lowcomm-slurm-apt.$$.log
    log "SKIP: could not install Slurm"
    exit $SKIP
  fi
  rm -f /tmp/lowcomm-slurm-apt.$$.log
  have_slurm || { log "SKIP: Slurm still missing after apt-get"; exit $SKIP; }
fi
if [[ $(id -u) != 0 ]]; then
  log "SKIP: this test runs slurmctld/slurmd as root (SlurmUser=root); run it as root"
  exit $SKIP
fi
[[ -x $python ]] && $python -c 'import h5py' 2>/dev/null || fail "needs $python with h5py (python3-h5py)"

# --- A private cluster in a temporary folder ---------------------------------------------------
tmp=$(mktemp -d /tmp/lowcomm-slurm-test.XXXXXX) || exit 1
chmod 755 "$tmp"
pids=()      # daemons started here, stopped in this order reversed
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n ${SLURM_CONF:-} && -r ${SLURM_CONF:-} ]] && ((${#pids[@]} >= 2)); then
    scancel --full --quiet --user=root 2>/dev/null
    for _ in $(seq 20); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.5; done
  fi
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

diagnostics() {
  [[ -n ${tmp:-} && -r ${SLURM_CONF:-} ]] || return 0
  echo "==================== diagnostics ===================="
  local f
  for f in $(find "$tmp/work" -name 'slurm-*.out' 2>/dev/null | sort); do
    echo "---- $f"
    grep -v '^step ' "$f" | tail -n 40
  done
  echo "---- squeue"; squeue 2>&1
  echo "---- sinfo"; sinfo -N -l 2>&1
  for f in ${jobs_to_show:-}; do echo "---- scontrol show job $f"; scontrol show job "$f" 2>&1; done
  for f in slurmctld slurmd munged; do
    [[ -r $tmp/log/$f.log ]] && { echo "---- tail $f.log"; tail -n 30 "$tmp/log/$f.log"; }
  done
  echo "====================================================="
}

# Environment of a job started from an allocation must not leak in (ctest under salloc).
for v in $(compgen -v SLURM_; compgen -v SBATCH_; compgen -v SALLOC_; compgen -v SRUN_); do unset "$v"; done
unset LOWCOMM_PARTITION LOWCOMM_ACCOUNT LOWCOMM_QOS LOWCOMM_TIME LOWCOMM_MODULES LOWCOMM_RUNS \
  LOWCOMM_LAUNCHER LOWCOMM_SRUN_MPI LOWCOMM_SRUN_FLAGS LOWCOMM_MPIRUN LOWCOMM_MPIRUN_FLAGS LOWCOMM_SITE

mkdir -p "$tmp"/{state,spool,log,work} && mkdir -m 700 "$tmp/munge" || fail "mkdir in $tmp"
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    ss -Htan 2>/dev/null | awk '{print $4}' | grep -q ":$port\$" || { echo "$port"; return; }
  done
}
host=$(hostname -s)
memory_mb=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
ctld_port=$(free_port)
slurmd_port=$(free_port)
# Absolute paths everywhere: the daemons change directory to /. A private munged (own key and
# socket, AuthInfo=socket=...) so that the test neither needs nor disturbs a system one.
cat >"$tmp/slurm.conf" <<EOF
ClusterName=lowcommtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
JobRequeue=1
MinJobAge=600
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$memory_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
export SLURM_CONF=$tmp/slurm.conf

head -c 1024 /dev/urandom >"$tmp/munge/key" && chmod 400 "$tmp/munge/key"
munged --foreground --force --key-file="$tmp/munge/key" --socket="$tmp/munge/socket" \
  --pid-file="$tmp/munge/pid" --seed-file="$tmp/munge/seed" --log-file="$tmp/log/munged.log" \
  --num-threads=10 >>"$tmp/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $tmp/munge/socket ]] && break; sleep 0.1; done
munge --socket="$tmp/munge/socket" -n </dev/null | unmunge --socket="$tmp/munge/socket" >/dev/null ||
  fail "munged does not answer (munge -n | unmunge)"

slurmctld -D -f "$SLURM_CONF" >>"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >>"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
log "slurm.conf at $SLURM_CONF (ports $ctld_port/$slurmd_port); waiting for node $host to be idle"
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
  [[ $state == idle ]] && break
  sleep 1
done
[[ $state == idle ]] || fail "node $host is '$state', not idle, after 60 s"
mpi_plugins=$(srun --mpi=list 2>&1)
log "srun --mpi=list: $(echo $mpi_plugins)"
grep -qw pmix <<<"$mpi_plugins" || fail "this Slurm has no pmix plugin: slurm/ defaults to srun --mpi=pmix"

# --- Helpers -----------------------------------------------------------------------------------
job_field() { scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

# wait_for_jobs TIMEOUT JOB[:RESTARTS]...: until every job (an id, or <array id>_<index>) is in a
# final state, after at least RESTARTS requeues (default 0). It watches each job's state and restart
# count in `scontrol show job`, not its absence from squeue, which a task can leave for a moment
# between its requeue and its next start.
# Slurm holds a requeued batch job for about two minutes (Reason=BeginTime); the wait moves its
# start to 3 s from then, once per requeue, to keep the test short. Not to "now": slurmd refuses to
# launch a job whose credential it revoked within the same second ("Job N already killed, do not
# launch batch job"), and the requeued task then fails without running; the hold exists to avoid that.
wait_for_jobs() {
  local timeout=$1 deadline=$((SECONDS + $1)) spec id wanted state restarts unfinished
  local -A released=()
  shift
  while ((SECONDS < deadline)); do
    unfinished=0
    for spec in "$@"; do
      id=${spec%%:*}
      wanted=0
      [[ $spec == *:* ]] && wanted=${spec#*:}
      state=$(job_field "$id" JobState)
      restarts=$(job_field "$id" Restarts)
      if [[ $(job_field "$id" Reason) == BeginTime && -z ${released[$id:$restarts]:-} ]]; then
        scontrol update JobId="$id" StartTime=now+3 2>/dev/null && released[$id:$restarts]=1
      fi
      case $state in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
          ((${restarts:-0} >= wanted)) || unfinished=1 ;;
        *) unfinished=1 ;;  # PENDING, RUNNING, REQUEUED, COMPLETING, or no record yet
      esac
    done
    ((unfinished == 0)) && return 0
    sleep 1
  done
  fail "jobs $* not all finished (with their requeues) after $timeout s"
}

# log_rows LOG: rows of steps/step in a (possibly live) log, 0 when it cannot be read yet.
log_rows() {
  $python - "$1" 2>/dev/null <<'EOF' || echo 0
import sys, h5py
with h5py.File(sys.argv[1], "r", libver="latest", swmr=True) as log:
    print(log["steps/step"].shape[0])
EOF
}

# check_log LOG STEPS MIN_RESUMES MAX_RESUMES [RESTART_COUNT]: a complete log (of an array task
# unless ARRAY_TASK=0).
check_log() {
  $python - "$@" <<'EOF'
import sys, h5py
path, steps, min_resumes, max_resumes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
restart = sys.argv[5] if len(sys.argv) > 5 else None
with h5py.File(path, "r", libver="latest", swmr=True) as log:
    group = log["steps"]
    rows = {name: d.shape[0] for name, d in group.items()}
    steps_logged = group["step"][:].tolist()
    attrs = dict(log.attrs)
problems = []
if set(rows.values()) != {steps}:
    problems.append(f"rows per column {rows}, expected {steps}")
if steps_logged != list(range(len(steps_logged))):
    problems.append(f"steps column is not 0..{steps - 1} without gaps or repeats")
resumes = int(attrs.get("resume_count", -1))
if not min_resumes <= resumes <= max_resumes:
    problems.append(f"resume_count {resumes}, expected {min_resumes}..{max_resumes}")
import os
array_keys = ("slurm_array_job_id", "slurm_array_task_id") if os.environ.get("ARRAY_TASK", "1") == "1" else ()
for key in ("slurm_job_id",) + array_keys:
    if key not in attrs:
        problems.append(f"no {key} attribute")
if restart is not None and str(attrs.get("slurm_restart_count")) != restart:
    problems.append(f"slurm_restart_count {attrs.get('slurm_restart_count')!r}, expected {restart}")
print(f"{path}: {len(steps_logged)} steps, resume_count {resumes}, slurm_restart_count "
      f"{attrs.get('slurm_restart_count')}, array {attrs.get('slurm_array_job_id')}_{attrs.get('slurm_array_task_id')}")
for p in problems:
    print("  problem:", p)
sys.exit(1 if problems else 0)
EOF
}

# --- The experiment ----------------------------------------------------------------------------
work=$tmp/work
cd "$work" || fail "cd $work"
write_experiment() {  # NAME STEPS CHECKPOINT_EVERY
  cat >"$work/$1.toml" <<EOF
# slurm test: two methods on 2 ranks, the Markov source, a few seconds per run
[data]
source = "markov"
batch_size = 2
seq_len = 16
val_windows = 4

[train]
steps = $2
eval_every = 20
checkpoint_every = $3
progress_every = 10

[network]
mode = "simulate"

[sweep]
name = "$1"
ranks = 2

[[sweep.method]]
name = "adamw"
set = { "strategy.name" = "data_parallel", "compressor.name" = "none" }

[[sweep.method]]
name = "topk"
set = { "strategy.name" = "data_parallel", "compressor.name" = "topk", "compressor.topk.ratio" = 0.01 }
EOF
}
write_experiment tiny 40 10
write_experiment requeue 400 50
export LOWCOMM_BIN=$lowcomm LOWCOMM_ARRAY_PARALLEL=2

# --- 1. a 2-point array through slurm/submit-sweep.sh --------------------------------------------
log "1. job array: slurm/submit-sweep.sh tiny.toml"
submitted=$(bash "$src/slurm/submit-sweep.sh" tiny.toml 2>&1) || { echo "$submitted"; fail "submit-sweep.sh failed"; }
echo "$submitted"
array_job=$(sed -n 's/^== array job \([0-9]*\):.*/\1/p' <<<"$submitted")
[[ -n $array_job ]] || fail "no array job id in the output of submit-sweep.sh"
jobs_to_show=$array_job
wait_for_jobs 300 "${array_job}_0" "${array_job}_1"
for index in 0 1; do
  out=runs/tiny/slurm-${array_job}_${index}.out
  [[ -s $out ]] || fail "no output file $out (expected %A_%a naming)"
  state=$(job_field "${array_job}_${index}" JobState)
  [[ $state == COMPLETED ]] || fail "array task ${array_job}_${index} is $state, not COMPLETED"
  grep -q 'via srun --mpi=pmix' "$out" || fail "$out: ranks were not launched with srun --mpi=pmix"
  grep -q 'complete: 40 steps' "$out" || fail "$out: no 'complete: 40 steps'"
done
for point in adamw topk; do
  check_log "runs/tiny/$point/log.h5" 40 0 0 || fail "runs/tiny/$point/log.h5 is not a complete 40-step log"
  [[ $(cat "runs/tiny/$point/checkpoints/latest") == 40 ]] || fail "runs/tiny/$point: last checkpoint is not step 40"
done
log "1. passed: both array tasks completed, logs hold 40 steps each"

# --- 2. USR1 before the time limit: checkpoint, requeue, resume, complete -------------------------
log "2. two longer array tasks by hand (srun and mpirun), each sent SIGUSR1 once it is running"
submit_requeue() {  # INDEX LAUNCHER
  LOWCOMM_LAUNCHER=$2 LOWCOMM_ROOT=$src sbatch --parsable --array="$1" --ntasks=2 \
    --output="$work/runs/requeue/slurm-%A_%a.out" "$src/slurm/sweep.sbatch" requeue.toml
}
mkdir -p runs/requeue
job_srun=$(submit_requeue 0 srun) || fail "sbatch (srun) failed"
job_mpirun=$(submit_requeue 1 mpirun) || fail "sbatch (mpirun) failed"
# 3. (meanwhile) one run through slurm/submit-train.sh, ranks from the config's "# ranks = 2"
# line; and train.sbatch in an allocation too small for the config, which must say so.
"$lowcomm" sweep tiny.toml --index 0 --set train.steps=20 >one.toml || fail "lowcomm sweep --index 0"
submitted=$(bash "$src/slurm/submit-train.sh" one.toml runs/one 2>&1) || { echo "$submitted"; fail "submit-train.sh failed"; }
job_train=$(sed -n 's/^== job \([0-9]*\):.*/\1/p' <<<"$submitted")
[[ -n $job_train ]] || { echo "$submitted"; fail "no job id in the output of submit-train.sh"; }
job_small=$(LOWCOMM_ROOT=$src sbatch --parsable --ntasks=1 --output="$work/small-%j.out" \
  "$src/slurm/train.sbatch" one.toml runs/small) || fail "sbatch --ntasks=1 train.sbatch failed"
jobs_to_show="$array_job $job_srun $job_mpirun $job_train $job_small"
declare -A signalled=()
deadline=$((SECONDS + 180))
while ((${#signalled[@]} < 2)); do
  ((SECONDS < deadline)) || fail "the requeue runs did not log 10 steps within 180 s"
  for pair in "$job_srun:0:adamw" "$job_mpirun:1:topk"; do
    IFS=: read -r job index point <<<"$pair"
    [[ -n ${signalled[$job]:-} ]] && continue
    rows=$(log_rows "runs/requeue/$point/log.h5")
    if ((rows >= 10)); then
      ((rows < 400)) || fail "$point finished all 400 steps before it could be signalled"
      # What --signal=B:USR1@120 does 120 s before the time limit: SIGUSR1 to the batch shell only.
      scancel --batch --signal=USR1 "${job}_${index}" || fail "scancel --batch --signal=USR1 ${job}_${index}"
      log "   sent SIGUSR1 to the batch shell of ${job}_${index} ($point) with $rows steps logged"
      signalled[$job]=1
    fi
  done
  sleep 0.5
done
wait_for_jobs 400 "${job_srun}_0:1" "${job_mpirun}_1:1" "$job_train" "$job_small"
for pair in "$job_srun:0:adamw:srun" "$job_mpirun:1:topk:mpirun"; do
  IFS=: read -r job index point launcher <<<"$pair"
  out=runs/requeue/slurm-${job}_${index}.out
  [[ -s $out ]] || fail "no output file $out"
  grep -q "via $launcher" "$out" || fail "$out: ranks not launched via $launcher"
  grep -q 'batch shell got SIGUSR1' "$out" || fail "$out: the batch shell did not report SIGUSR1"
  grep -q 'signal 10 received: stopped after step' "$out" || fail "$out: lowcomm train did not stop on SIGUSR1"
  grep -q "requeueing ${job}_${index}" "$out" || fail "$out: the script did not requeue ${job}_${index}"
  grep -q 'restart 1 on' "$out" || fail "$out: no restart 1 (SLURM_RESTART_COUNT) in the output"
  grep -q 'complete: 400 steps' "$out" || fail "$out: the resumed run did not complete 400 steps"
  state=$(job_field "${job}_${index}" JobState)
  restarts=$(job_field "${job}_${index}" Restarts)
  [[ $state == COMPLETED ]] || fail "${job}_${index} is $state, not COMPLETED"
  [[ $restarts == 1 ]] || fail "${job}_${index}: Restarts=$restarts, expected 1 (scontrol show job)"
  check_log "runs/requeue/$point/log.h5" 400 1 1 1 || fail "runs/requeue/$point/log.h5 is not a complete resumed log"
  [[ $(cat "runs/requeue/$point/checkpoints/latest") == 400 ]] || fail "runs/requeue/$point: last checkpoint is not step 400"
  log "   ${job}_${index} ($launcher): stopped on SIGUSR1 at $(sed -n 's/.*stopped after step \([0-9]*\).*/\1/p' "$out" | head -n 1)," \
    "requeued (Restarts=1), resumed and completed 400 steps"
done
log "2. passed"

[[ $(job_field "$job_train" JobState) == COMPLETED ]] || fail "train.sbatch job $job_train is not COMPLETED"
grep -q 'complete: 20 steps' "runs/one/slurm-$job_train.out" || fail "runs/one/slurm-$job_train.out: no 'complete: 20 steps'"
ARRAY_TASK=0 check_log runs/one/log.h5 20 0 0 || fail "runs/one/log.h5 is not a complete 20-step log"
[[ $(job_field "$job_small" JobState) == FAILED ]] || fail "train.sbatch with --ntasks=1 for a 2-rank config did not fail"
grep -q 'needs 2 ranks but the job has 1 task' "small-$job_small.out" ||
  fail "small-$job_small.out does not say the run needs 2 ranks"
[[ ! -e runs/small/log.h5 ]] || fail "train.sbatch started a run in an allocation too small for it"
log "3. passed: submit-train.sh ran a 20-step run; a 1-task allocation for 2 ranks failed with a clear message"
log "PASSED"
