# slurm/site.sh: every site setting of lowcomm's Slurm scripts, in this one file.
# shellcheck shell=bash
#
# Sourced (never run) by slurm/train.sbatch and slurm/sweep.sbatch when a job starts, and by
# slurm/submit-sweep.sh / slurm/submit-train.sh before they call sbatch. Every value below is a
# default only: a variable already set in the environment wins (sbatch hands the submitting
# shell's environment to the job), and sbatch options on the command line win over the
# SBATCH_* variables exported here, e.g.
#     LOWCOMM_LAUNCHER=mpirun slurm/submit-sweep.sh --partition=long experiments/ratio.toml
# Edit the defaults here once per cluster (or keep a copy elsewhere and point LOWCOMM_SITE at it).

# --- What sbatch asks for. Empty: the cluster's default. Exported as the SBATCH_* input
#     variables, so they apply to `sbatch` run from a shell that sourced this file and to the
#     submit helpers; `sbatch --partition=...` on the command line still overrides them.
: "${LOWCOMM_PARTITION:=}"          # e.g. gpu
: "${LOWCOMM_ACCOUNT:=}"            # e.g. proj-1234
: "${LOWCOMM_QOS:=}"                # e.g. normal
: "${LOWCOMM_TIME:=}"               # time limit per job (requeued jobs get it again), e.g. 4:00:00
: "${LOWCOMM_ARRAY_PARALLEL:=8}"    # K in --array=0-(N-1)%K: array tasks running at once

# --- What a job runs.
: "${LOWCOMM_MODULES:=}"            # `module load` these first, e.g. "gcc/12 openmpi/4.1 hdf5/1.14"
: "${LOWCOMM_BIN:=${LOWCOMM_ROOT:?LOWCOMM_ROOT must be set before sourcing site.sh}/build/release/apps/lowcomm/lowcomm}"
                                    # or an installed one: $HOME/opt/lowcomm/bin/lowcomm
: "${LOWCOMM_RUNS:=runs}"           # runs/<experiment>/<point>/, relative to the job's directory
                                    # (the submit directory) unless absolute, e.g. $SCRATCH/runs

# --- How ranks are started.
#   srun   (default): `srun --mpi=$LOWCOMM_SRUN_MPI`, ranks are Slurm tasks wired up by PMIx;
#                     `srun --mpi=list` shows what this Slurm offers (pmix, pmix_v4, pmi2, none).
#   mpirun: for sites whose Slurm has no PMIx plugin, or whose MPI was built without Slurm
#           support: the MPI's own launcher inside the allocation (Open MPI reads it from the
#           SLURM_* variables).
: "${LOWCOMM_LAUNCHER:=srun}"
: "${LOWCOMM_SRUN_MPI:=pmix}"
: "${LOWCOMM_SRUN_FLAGS:=}"         # extra srun options, e.g. "--cpu-bind=cores"
: "${LOWCOMM_MPIRUN:=mpirun}"
: "${LOWCOMM_MPIRUN_FLAGS:=}"       # extra mpirun options, e.g. "--bind-to core --map-by slot"

export LOWCOMM_ROOT LOWCOMM_PARTITION LOWCOMM_ACCOUNT LOWCOMM_QOS LOWCOMM_TIME \
  LOWCOMM_ARRAY_PARALLEL LOWCOMM_MODULES LOWCOMM_BIN LOWCOMM_RUNS LOWCOMM_LAUNCHER \
  LOWCOMM_SRUN_MPI LOWCOMM_SRUN_FLAGS LOWCOMM_MPIRUN LOWCOMM_MPIRUN_FLAGS
[[ -n $LOWCOMM_PARTITION ]] && export SBATCH_PARTITION=$LOWCOMM_PARTITION
[[ -n $LOWCOMM_ACCOUNT ]] && export SBATCH_ACCOUNT=$LOWCOMM_ACCOUNT
[[ -n $LOWCOMM_QOS ]] && export SBATCH_QOS=$LOWCOMM_QOS
[[ -n $LOWCOMM_TIME ]] && export SBATCH_TIMELIMIT=$LOWCOMM_TIME

# lowcomm_site_setup: load the modules and check the binary (on the login node before
# submitting, and again in every job).
lowcomm_site_setup() {
  if [[ -n $LOWCOMM_MODULES ]]; then
    if ! type module >/dev/null 2>&1; then
      # A batch shell is not a login shell: bring in the module command the usual ways.
      local init
      for init in /etc/profile.d/lmod.sh /etc/profile.d/modules.sh /usr/share/lmod/lmod/init/bash; do
        [[ -r $init ]] && { source "$init"; break; }
      done
    fi
    type module >/dev/null 2>&1 || {
      echo "lowcomm slurm: LOWCOMM_MODULES='$LOWCOMM_MODULES' is set but there is no 'module' command" >&2
      return 2
    }
    # shellcheck disable=SC2086
    module load $LOWCOMM_MODULES || {
      echo "lowcomm slurm: 'module load $LOWCOMM_MODULES' failed (edit LOWCOMM_MODULES in slurm/site.sh)" >&2
      return 2
    }
  fi
  [[ -x $LOWCOMM_BIN ]] || {
    echo "lowcomm slurm: no lowcomm binary at LOWCOMM_BIN=$LOWCOMM_BIN (build it, see README.md," \
      "or set LOWCOMM_BIN in slurm/site.sh or the environment)" >&2
    return 2
  }
  # Open MPI's mpirun refuses to run as root without these (a test cluster in a container).
  if [[ $(id -u) == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}
