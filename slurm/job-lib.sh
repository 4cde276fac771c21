# slurm/job-lib.sh: what train.sbatch and sweep.sbatch share (sourced, after slurm/site.sh).
# shellcheck shell=bash
# No site settings here: those are all in slurm/site.sh.
#
# How a run survives the end of its time limit (or a preemption notice):
#   1. The scripts ask for `--signal=B:USR1@120`: 120 s before the limit Slurm sends SIGUSR1 to
#      the batch shell ("B:"), and only to it.
#   2. The shell traps USR1 and forwards it to the launcher it started in the background and is
#      waiting for: srun forwards SIGUSR1 to every task it runs, Open MPI's mpirun forwards
#      SIGUSR1 to every rank. Without "B:" (plain `--signal=USR1@120`) Slurm would signal the job
#      *steps* instead: that reaches the ranks of an srun launch directly, but ranks started by
#      mpirun from the batch shell live in the batch step, which is not signalled, so they would
#      never hear of it. Trapping in the shell works for both launchers (and a rank that gets the
#      signal twice, e.g. from `scancel --full --signal=USR1`, only sets the same flag twice).
#   3. `lowcomm train` finishes the step, all ranks agree, write a checkpoint, flush the log and
#      exit 0.
#   4. The shell sees exit status 0 with checkpoints/latest short of train.steps and requeues
#      this job (`scontrol requeue`: the job or this one array task goes back to the queue, keeps
#      its id, and SLURM_RESTART_COUNT counts the restarts). The script starts again from the top
#      and runs `lowcomm train --resume`, which continues from the checkpoint and appends to the
#      same log; the output file continues too (--open-mode=append).
# A run that fails (non-zero exit) is never requeued, nor one that made no progress.

lowcomm_die() {
  echo "lowcomm slurm: $*" >&2
  exit 2
}

# The step count of a run config (the `steps` key of its [train] table; 200 when not there).
lowcomm_config_steps() {
  awk '/^\[/ { in_train = ($0 == "[train]") }
       in_train && /^[ \t]*steps[ \t]*=/ { sub(/^[^=]*=[ \t]*/, ""); sub(/[ \t#].*/, ""); print; found = 1; exit }
       END { if (!found) print 200 }' "$1"
}

# The step of the last complete checkpoint in OUT (0 when there is none).
lowcomm_checkpoint_step() {
  local latest=$1/checkpoints/latest
  if [[ -s $latest ]]; then tr -dc '0-9' <"$latest"; else echo 0; fi
}

# The launcher selected by LOWCOMM_LAUNCHER, as an array: lowcomm_launcher RANKS.
lowcomm_launcher() {
  local ranks=$1
  case $LOWCOMM_LAUNCHER in
    srun)
      # srun --mpi=list prints the plugins this Slurm was built with (pmix, pmix_v4, pmi2, ...).
      local plugins
      plugins=$(srun --mpi=list 2>&1 || true)
      if ! grep -Eqw -- "$LOWCOMM_SRUN_MPI" <<<"$plugins"; then
        echo "$plugins" >&2
        lowcomm_die "this Slurm has no '$LOWCOMM_SRUN_MPI' MPI plugin (srun --mpi=list above):" \
          "set LOWCOMM_SRUN_MPI to one it lists that your MPI supports, or LOWCOMM_LAUNCHER=mpirun"
      fi
      # shellcheck disable=SC2206
      launcher=(srun "--mpi=$LOWCOMM_SRUN_MPI" --ntasks="$ranks" --kill-on-bad-exit=1 $LOWCOMM_SRUN_FLAGS)
      ;;
    mpirun)
      command -v "$LOWCOMM_MPIRUN" >/dev/null || lowcomm_die "no '$LOWCOMM_MPIRUN' on PATH (LOWCOMM_MPIRUN)"
      # shellcheck disable=SC2206
      launcher=("$LOWCOMM_MPIRUN" -n "$ranks" $LOWCOMM_MPIRUN_FLAGS)
      ;;
    *) lowcomm_die "LOWCOMM_LAUNCHER=$LOWCOMM_LAUNCHER: use srun or mpirun" ;;
  esac
}

# lowcomm_run CONFIG OUT RANKS: trains CONFIG into OUT on RANKS ranks (--resume: a first start,
# a restart after requeue and a resubmission are the same command), then requeues this job when
# the run stopped on a signal before its last step. Exits the script.
lowcomm_run() {
  local config=$1 out=$2 ranks=$3
  local steps before after status
  steps=$(lowcomm_config_steps "$config")
  before=$(lowcomm_checkpoint_step "$out")
  if ((before >= steps)); then
    echo "lowcomm slurm: $out already holds all $steps steps: nothing to do"
    exit 0
  fi
  local allocated=${SLURM_NTASKS:-1}
  if ((ranks > allocated)); then
    lowcomm_die "this run needs $ranks ranks but the job has $allocated task(s):" \
      "submit with --ntasks=$ranks (slurm/submit-sweep.sh and slurm/submit-train.sh do)"
  fi
  ((ranks < allocated)) && echo "lowcomm slurm: note: using $ranks of the job's $allocated tasks"

  local launcher
  lowcomm_launcher "$ranks"
  echo "lowcomm slurm: job ${SLURM_JOB_ID:-?}${SLURM_ARRAY_TASK_ID:+ (array ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID})}" \
    "restart ${SLURM_RESTART_COUNT:-0} on $(hostname) at $(date '+%F %T'): $out from step $before of $steps," \
    "$ranks ranks via ${launcher[*]}"

  "${launcher[@]}" "$LOWCOMM_BIN" train --config "$config" --out "$out" --resume &
  lowcomm_launcher_pid=$!
  lowcomm_terminated=0
  # USR1 reaching this shell is forwarded to the launcher (see the top of this file). SIGTERM
  # (scancel, the time limit, a node shutdown) is forwarded as SIGUSR1, which the app treats the
  # same way, because srun answers a SIGTERM of its own by killing the tasks (SIGKILL) at once;
  # a terminated job is not requeued (scancel must stay a cancel).
  trap 'echo "lowcomm slurm: batch shell got SIGUSR1 at $(date +%T): forwarding it to the ranks"
        kill -USR1 "$lowcomm_launcher_pid" 2>/dev/null' USR1
  trap 'echo "lowcomm slurm: batch shell got SIGTERM at $(date +%T): asking the ranks to checkpoint"
        lowcomm_terminated=1; kill -USR1 "$lowcomm_launcher_pid" 2>/dev/null' TERM
  while :; do
    wait "$lowcomm_launcher_pid"
    status=$?
    # `wait` returns early (status > 128) when a trapped signal arrives: wait again while the
    # launcher is still there (kill -0 also succeeds for a launcher that exited but was not reaped).
    if ((status > 128)) && kill -0 "$lowcomm_launcher_pid" 2>/dev/null; then continue; fi
    break
  done
  trap - USR1 TERM

  after=$(lowcomm_checkpoint_step "$out")
  if ((status != 0)); then
    echo "lowcomm slurm: lowcomm train failed with status $status (last checkpoint: step $after of $steps);" \
      "not requeued: fix the cause, then submit again to resume" >&2
    exit "$status"
  fi
  if ((after >= steps)); then
    echo "lowcomm slurm: $out complete: $steps steps"
    exit 0
  fi
  if ((lowcomm_terminated)); then
    echo "lowcomm slurm: terminated (SIGTERM): checkpointed at step $after of $steps, not requeued;" \
      "submit again to resume"
    exit 0
  fi
  if ((after <= before)); then
    lowcomm_die "lowcomm train stopped at step $after of $steps without progress since the start" \
      "of this job: not requeued (to avoid a loop); submit again to resume"
  fi
  local target=${SLURM_JOB_ID:?}
  [[ -n ${SLURM_ARRAY_JOB_ID:-} && -n ${SLURM_ARRAY_TASK_ID:-} ]] && target=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
  echo "lowcomm slurm: stopped at step $after of $steps (checkpointed): requeueing $target"
  if ! scontrol requeue "$target"; then
    lowcomm_die "'scontrol requeue $target' failed (JobRequeue=0 on this cluster, or --no-requeue?):" \
      "submit the same command again to resume from step $after"
  fi
  # The requeue ends this job (its processes are killed); a requeued batch job becomes eligible
  # again after about two minutes (Slurm's delay), then starts from the top with --resume.
  exit 0
}

