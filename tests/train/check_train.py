#!/usr/bin/env python3
"""End-to-end checks of `lowcomm train` on 2 ranks (run by ctest, see CMakeLists.txt).

    check_train.py LOWCOMM MPIEXEC WORKDIR learn STRATEGY
        the tiny preset on the synthetic Markov source learns well below the uniform loss
        (log 256), and the log's byte counts fit the strategy;
    check_train.py LOWCOMM MPIEXEC WORKDIR resume STRATEGY
        a run stopped by SIGUSR1 (checkpoint, exit 0) and resumed with --resume alone (the
        configuration from its log) ends bitwise identical to an uninterrupted run: final
        parameters and every logged loss;
    check_train.py LOWCOMM MPIEXEC WORKDIR interrupt
        Ctrl-C (SIGINT) on a run started without mpiexec stops it with a checkpoint (exit 0);
        --resume alone continues it, --set train.steps extends it, and a --set that would change
        the steps computed so far is refused naming the key;
    check_train.py LOWCOMM MPIEXEC WORKDIR nonfinite
        a diverging run stops with exit 3, names the step, and leaves a checkpoint; with
        train.nonfinite = skip it finishes;
    check_train.py LOWCOMM MPIEXEC WORKDIR go_back
        a run that diverges after a resume with a huge schedule.lr stops (exit 3) keeping the older
        checkpoints and names the newest good one; --resume-from it with a sane lr completes a
        log without gaps; --resume-from a step not kept is refused listing the kept ones;
    check_train.py LOWCOMM MPIEXEC WORKDIR crash_commit
        rank 0 killed at each stage of a checkpoint's commit (LOWCOMM_TEST_FAULT): --resume ends
        with a complete log, bitwise identical to an uninterrupted run; a log that lacks rows
        before the checkpoint's step is refused on --resume, naming the gap;
    check_train.py LOWCOMM MPIEXEC WORKDIR exclusive
        a second run on a live run's folder is refused, fresh, with --force and with --resume,
        naming the live run; once its holder is killed (SIGKILL), --resume takes the folder;
    check_train.py LOWCOMM MPIEXEC WORKDIR checksums
        bytes flipped inside a checkpoint, or inside a recorded gradient trace, make --resume and
        replay fail naming the file and the dataset, instead of going on with other numbers;
    check_train.py LOWCOMM MPIEXEC WORKDIR backends STRATEGY
        compute.backend = reference (the plain kernels, model and compressors) trains as the
        optimised cpu backend does, to float rounding, and a backend this build lacks is refused;
    check_train.py LOWCOMM MPIEXEC WORKDIR modelled_compute
        cluster.step_compute_ms and cluster.compute_tflops: the clock repeats bitwise, across a
        resume too, and moves by the modelled compute plus the exposed communication
    check_train.py LOWCOMM MPIEXEC WORKDIR clock
        the simulated clock moves on every step of every strategy, also on steps that send
        nothing (DiLoCo's inner steps, DES-LOC's, NoLoCo's, 0/1 Adam's local steps);
    check_train.py LOWCOMM MPIEXEC WORKDIR no_validation
        data.val_windows = 0 evaluates nothing and says nothing of a validation loss;
    check_train.py LOWCOMM MPIEXEC WORKDIR init_from
        train.init_from starts a run from another run's checkpointed parameters (bitwise at
        learning rate 0), and refuses another model shape, no checkpoint, no model/parameters.
Reads the HDF5 files with h5py only (no lowcomm), as a researcher would.
"""
import collections
import json
import math
import re
import os
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

LOWCOMM, MPIEXEC, WORK, MODE = sys.argv[1:5]
ARGS = sys.argv[5:]
RANKS = 2
COMMON = ["--set", "data.source=markov", "--set", "data.batch_size=4", "--set", "data.seq_len=32",
          "--set", "data.val_windows=16", "--set", "model.preset=tiny"]
STRATEGY = {
    "data_parallel": ["--set", "strategy.name=data_parallel", "--set", "schedule.lr=3e-3"],
    "demo": ["--set", "strategy.name=demo", "--set", "schedule.lr=1.5e-3"],
    "demo_stale": ["--set", "strategy.name=demo", "--set", "schedule.lr=1.5e-3", "--set", "strategy.demo.pipeline=stale"],
    # Psyche's DisTrO at the Consilience run's settings: top-k 4 of 64 x 64 blocks, 1-bit values,
    # momentum decay 0.995, the two-step pipeline with its lookahead.
    "psyche": ["--set", "strategy.name=demo", "--set", "schedule.lr=1.5e-3", "--set", "strategy.demo.pipeline=psyche",
               "--set", "strategy.demo.compression_topk=4", "--set", "strategy.demo.compression_decay=0.995",
               "--set", "strategy.demo.wire=compact_1bit"],
    "diloco": ["--set", "strategy.name=diloco", "--set", "strategy.diloco.inner_steps=5",
               "--set", "schedule.lr=3e-3", "--set", "strategy.diloco.outer_momentum=0.5",
               "--set", "strategy.diloco.outer_lr=1"],
    # state in every part: streaming fragments with pending mixes, AdamW moments, compressor residuals
    # Muon (optimizer.muon) under data parallelism, and inside DiLoCo with top-k + error feedback on
    # the pseudo-gradient (MuLoCo's pieces): schedule.lr is Muon's, its AdamW tensors take
    # adamw_lr_scale of it. MuLoCo at 1 % top-k and the reference's 0.015 ends this 100-step run at
    # 5.17; at 10 % and 0.1 at 3.24.
    "data_parallel_muon": ["--set", "strategy.name=data_parallel", "--set", "optimizer.name=muon",
                           "--set", "schedule.lr=0.02"],
    "muloco": ["--set", "strategy.name=diloco", "--set", "strategy.diloco.inner_steps=5", "--set", "optimizer.name=muon",
               "--set", "schedule.lr=0.02", "--set", "optimizer.muon.adamw_lr_scale=0.1",
               "--set", "strategy.diloco.outer_momentum=0.5", "--set", "strategy.diloco.outer_lr=1",
               "--set", "compressor.name=topk", "--set", "compressor.topk.ratio=0.1",
               "--set", "compressor.topk.error_feedback=true"],
    # SparseLoCo: DiLoCo with no outer momentum and outer lr 1, its pseudo-gradient through the
    # sparseloco wire (top 64 of each 64 x 64 block, 12-bit indices, 2-bit codebook) with error
    # feedback decaying at 0.95.
    "sparseloco": ["--set", "strategy.name=diloco", "--set", "strategy.diloco.inner_steps=5", "--set", "schedule.lr=3e-3",
                   "--set", "strategy.diloco.outer_momentum=0", "--set", "strategy.diloco.outer_lr=1",
                   "--set", "compressor.name=sparseloco", "--set", "compressor.sparseloco.error_feedback_decay=0.95"],
    # Signum with majority vote: each rank's momentum (0.9) votes with one sign bit per entry, and
    # plain SGD steps by lr times the sign of the votes' sum.
    "signum_vote": ["--set", "strategy.name=data_parallel", "--set", "optimizer.name=sgd", "--set", "schedule.lr=1e-3",
                    "--set", "compressor.name=majority_vote", "--set", "compressor.majority_vote.momentum=0.9"],
    # 1-bit Adam: five steps of exact Adam on the all-reduced gradient, then the variance frozen and
    # the momentum sent as scaled signs (two phases, error feedback on both sides). Without Adam's
    # bias correction (as DeepSpeed's) the first updates are several lr long: a 20-step lr warm-up;
    # beta2 = 0.95 so that a variance frozen this early is near its size (at 0.999 this run ends
    # at 5.5, at 0.99 at 3.67, here at 3.04).
    "onebit_adam": ["--set", "strategy.name=onebit_adam", "--set", "strategy.onebit_adam.freeze_step=5",
                    "--set", "strategy.onebit_adam.beta2=0.95", "--set", "schedule.lr=1e-3",
                    "--set", "schedule.warmup_steps=20"],
    # 0/1 Adam: variance refreshes on the all-reduced gradient at an interval doubling after every 8,
    # 1-bit gradients between them; after step 10 the variance frozen and local steps synchronised
    # at intervals 1, 2, 4 (doubling every 8 steps). Learning-rate warm-up and beta2 as 1-bit Adam's.
    "zero_one_adam": ["--set", "strategy.name=zero_one_adam", "--set", "strategy.zero_one_adam.var_freeze_step=10",
                      "--set", "strategy.zero_one_adam.var_update_scaler=8",
                      "--set", "strategy.zero_one_adam.local_step_scaler=8",
                      "--set", "strategy.zero_one_adam.local_step_clipper=4",
                      "--set", "strategy.zero_one_adam.beta2=0.95", "--set", "schedule.lr=1e-3",
                      "--set", "schedule.warmup_steps=20"],
    # NoLoCo: every 5 steps each rank meets a random partner (on 2 ranks, the other) point to point.
    "noloco": ["--set", "strategy.name=noloco", "--set", "strategy.noloco.inner_steps=5", "--set", "schedule.lr=3e-3"],
    # DES-LOC: parameters averaged every 4 steps, AdamW's moments every 12 and 24.
    "desloc": ["--set", "strategy.name=desloc", "--set", "strategy.desloc.param_period=4",
               "--set", "strategy.desloc.first_moment_period=12", "--set", "strategy.desloc.second_moment_period=24",
               "--set", "schedule.lr=3e-3"],
    "diloco_streaming": ["--set", "strategy.name=diloco", "--set", "strategy.diloco.inner_steps=4",
                         "--set", "strategy.diloco.fragments=2", "--set", "strategy.diloco.overlap_steps=1",
                         "--set", "strategy.diloco.alpha=0.5", "--set", "compressor.name=topk",
                         "--set", "compressor.topk.error_feedback=true"],
}


def train(out, *extra, check=True, env=None, **popen):
    command = [MPIEXEC, "-n", str(RANKS), "--oversubscribe", LOWCOMM, "train", "--out", out, *COMMON, *extra]
    if popen:
        return subprocess.Popen(command, env=env, **popen)
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def final_parameters(out, step):
    with h5py.File(os.path.join(out, "checkpoints", f"step-{step:08d}", "rank-0000.h5"), "r") as f:
        return f["floats/model/parameters"][:]


def setting(method, key):
    """The value a STRATEGY entry sets for `key`, or None."""
    for item in STRATEGY[method]:
        if item.startswith(key + "="):
            return item.split("=", 1)[1]
    return None


def learn(method):
    out = os.path.join(WORK, f"learn-{method}")
    train(out, "--force", "--set", "train.steps=100", "--set", "train.eval_every=50", *STRATEGY[method])
    strategy = setting(method, "strategy.name")
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        val = f["eval/val_loss"][:]
        sent = f["steps/bytes_sent"][:]
        floor = float(f.attrs["val_loss_floor"])
        assert f.attrs["strategy"] == strategy, f.attrs["strategy"]
        assert f.attrs["optimizer"] == (setting(method, "optimizer.name") or "adamw"), f.attrs["optimizer"]
        # The compressor the exchanges go through: DeMo's transport, the 1-bit optimizers' own
        # exchange, else compressor.name.
        expected_compressor = {"demo": "dct_topk", "onebit_adam": "onebit_allreduce",
                               "zero_one_adam": "onebit_allreduce"}.get(strategy) or \
            setting(method, "compressor.name") or "none"
        assert f.attrs["compressor"] == expected_compressor, (method, f.attrs["compressor"])
        assert f["steps/step"][:].tolist() == list(range(100))
    uniform = math.log(256)
    print(f"{method}: validation loss {val.tolist()} (uniform {uniform:.3f}, floor {floor:.3f})")
    assert val[-1] < uniform - 0.6, f"did not learn: {val[-1]:.3f} vs uniform {uniform:.3f}"
    assert val[-1] > floor, "below the entropy floor: the validation set leaks"
    assert sent.shape == (100, RANKS)
    period = {"diloco": setting(method, "strategy.diloco.inner_steps"),
              "desloc": setting(method, "strategy.desloc.param_period"),
              "noloco": setting(method, "strategy.noloco.inner_steps")}.get(strategy)
    if period:  # bytes only every H steps (DES-LOC: its moments' periods are multiples of K_x)
        synced = [s for s in range(100) if (s + 1) % int(period) == 0]
        assert (sent[synced] > 0).all() and np.delete(sent, synced, axis=0).sum() == 0, sent[:10]
    elif strategy == "zero_one_adam":  # every step until the freeze (t = 11); then only the synchronisations
        frozen = int(setting(method, "strategy.zero_one_adam.var_freeze_step"))
        assert (sent[:frozen] > 0).all() and (sent[frozen:] == 0).any() and (sent[frozen:] > 0).any(), sent.tolist()
    else:
        assert (sent > 0).all()


def resume(strategy):
    straight = os.path.join(WORK, f"straight-{strategy}")
    stopped = os.path.join(WORK, f"stopped-{strategy}")
    run = ["--set", "train.steps=14", "--set", "train.eval_every=7", "--set", "train.checkpoint_every=5",
           *STRATEGY[strategy]]
    train(straight, "--force", *run)

    shutil.rmtree(stopped, ignore_errors=True)
    process = train(stopped, *run, "--set", "train.progress_every=1",
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in process.stdout:  # stop it after its step 7 (mpiexec forwards SIGUSR1 to the ranks)
        lines.append(line)
        if line.startswith("step 6 (7/"):
            process.send_signal(signal.SIGUSR1)
    status = process.wait()
    text = "".join(lines)
    assert status == 0, f"stopped run exited {status}:\n{text}"
    assert "signal 10 received" in text, text
    with open(os.path.join(stopped, "checkpoints", "latest")) as f:
        stop_step = int(f.read())
    assert 7 <= stop_step < 14, (stop_step, text)

    # --resume alone: the configuration is the log's (its markov data, strategy and lengths).
    result = subprocess.run([MPIEXEC, "-n", str(RANKS), "--oversubscribe", LOWCOMM, "train", "--out", stopped,
                             "--resume"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"resumed at step {stop_step}" in result.stdout, result.stdout
    # The progress line's totals carry on from the checkpoint, as its simulated clock does.
    def totals(output):
        return [(float(sent), float(comm)) for sent, comm in
                re.findall(r"\| sent ([0-9.]+) MB \| comm ([0-9.]+) s modelled", output)]
    before, after = totals(text), totals(result.stdout)
    assert before and after and after[0][0] >= before[-1][0] > 0 and after[0][1] >= before[-1][1], (before, after)
    a, b = final_parameters(straight, 14), final_parameters(stopped, 14)
    assert a.tobytes() == b.tobytes(), f"parameters differ: max |diff| {np.abs(a - b).max()}"
    with h5py.File(os.path.join(straight, "log.h5"), "r") as f, h5py.File(os.path.join(stopped, "log.h5"), "r") as g:
        assert f["steps/step"][:].tolist() == g["steps/step"][:].tolist() == list(range(14))
        assert f["steps/loss"][:].tobytes() == g["steps/loss"][:].tobytes()
        assert f["steps/bytes_sent"][:].tolist() == g["steps/bytes_sent"][:].tolist()
        assert f["eval/val_loss"][:].tobytes() == g["eval/val_loss"][:].tobytes()
        assert g.attrs["resume_count"] == 1
    # Nothing left to do: a further --resume says so.
    assert "already holds all 14 steps" in train(stopped, "--resume", *run).stdout
    print(f"{strategy}: stopped at step {stop_step}, resumed, bitwise identical to the straight run")


def interrupt():
    out = os.path.join(WORK, "interrupt")
    shutil.rmtree(out, ignore_errors=True)
    run = [LOWCOMM, "train", "--out", out, *COMMON, "--set", "train.steps=30", "--set", "train.eval_every=0",
           "--set", "train.progress_every=1", "--set", "schedule.lr=2e-3"]
    process = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("step 4 (5/"):
            process.send_signal(signal.SIGINT)  # what Ctrl-C sends to a process in the foreground
    status = process.wait()
    text = "".join(lines)
    assert status == 0, f"interrupted run exited {status}:\n{text}"
    assert "signal 2 received" in text and "continue with --resume" in text, text
    with open(os.path.join(out, "checkpoints", "latest")) as f:
        stopped_at = int(f.read())
    assert 5 <= stopped_at < 30, (stopped_at, text)

    def resume(*extra):
        return subprocess.run([LOWCOMM, "train", "--out", out, "--resume", *extra], capture_output=True, text=True)

    refused = resume("--set", "seed=3", "--set", "train.steps=40")
    assert refused.returncode == 2 and "seed = 3 (was 0)" in refused.stderr and "train.steps" not in \
        refused.stderr.split("not what the steps so far computed with:")[1], refused.stderr
    finished = resume()
    assert finished.returncode == 0 and f"resumed at step {stopped_at}" in finished.stdout, finished.stdout + finished.stderr
    longer = resume("--set", "train.steps=40")
    assert longer.returncode == 0 and "resumed at step 30" in longer.stdout, longer.stdout + longer.stderr
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        assert f["steps/step"][:].tolist() == list(range(40)), f["steps/step"][:]
        assert "lr = 0.002" in f.attrs["latest_config"], f.attrs["latest_config"]
    # a later bare --resume continues with the latest resumption's configuration: 40 steps
    assert "already holds all 40 steps" in resume().stdout
    print(f"interrupt: Ctrl-C stopped the run at step {stopped_at} with a checkpoint; --resume alone finished it, "
          "--set train.steps extended it, --set seed was refused")


def no_validation():
    """data.val_windows = 0: no evaluation line (it used to print a validation loss of 0.0000) and
    no eval row; the run completes."""
    out = os.path.join(WORK, "no-validation")
    result = train(out, "--force", "--set", "train.steps=4", "--set", "train.eval_every=2", "--set", "data.val_windows=0")
    assert "validation loss" not in result.stdout, result.stdout
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        assert f["steps/step"][:].tolist() == [0, 1, 2, 3] and len(f["eval/val_loss"]) == 0, f["eval/val_loss"][:]
    print("no_validation: no evaluation without validation windows")


def nonfinite():
    out = os.path.join(WORK, "nonfinite")
    diverge = ["--set", "optimizer.name=sgd", "--set", "schedule.lr=1e30", "--set", "train.grad_clip=0",
               "--set", "train.steps=6"]
    result = train(out, "--force", *diverge, check=False)
    text = result.stdout + result.stderr
    assert result.returncode == 3, (result.returncode, text)
    assert "lowcomm: step" in text and "NaN or Inf" in text or "the loss is" in text, text
    assert "train.nonfinite = stop" in text, text
    assert os.path.exists(os.path.join(out, "checkpoints", "latest")), os.listdir(out)
    result = train(out, "--force", *diverge, "--set", "train.nonfinite=skip")
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        assert np.isnan(f["steps/loss"][:]).any(), f["steps/loss"][:]
    # Every kept checkpoint before the stop already diverging: the message says so (not that none is
    # kept) and names the least bad one.
    out = os.path.join(WORK, "nonfinite-diverging")
    result = train(out, "--force", "--set", "optimizer.name=sgd", "--set", "schedule.lr=30", "--set",
                   "train.grad_clip=0", "--set", "train.steps=30", "--set", "train.eval_every=0", "--set",
                   "train.checkpoint_every=1", "--set", "train.keep_checkpoints=20", check=False)
    text = result.stdout + result.stderr
    assert result.returncode == 3, (result.returncode, text)
    assert "all hold parameters whose loss was already diverging" in text and "the least bad is step" in text, text
    assert "no checkpoint before" not in text, text
    print("nonfinite: stop exits 3 with a checkpoint; skip finishes; diverged checkpoints are named as such")


def go_back():
    out = os.path.join(WORK, "go-back")
    run = ["--set", "optimizer.name=sgd", "--set", "train.grad_clip=0", "--set", "train.eval_every=0",
           "--set", "train.checkpoint_every=2", "--set", "train.keep_checkpoints=2", "--set", "schedule.lr=3e-3"]
    train(out, "--force", *run, "--set", "train.steps=6")
    diverged = train(out, "--resume", *run, "--set", "train.steps=10", "--set", "schedule.lr=1e30", check=False)
    text = diverged.stdout + diverged.stderr
    assert diverged.returncode == 3, (diverged.returncode, text)
    assert "The newest good one is step 6" in text and "--resume-from 6" in text, text
    kept = sorted(os.listdir(os.path.join(out, "checkpoints")))
    assert "step-00000004" in kept and "step-00000006" in kept and "step-00000007" in kept, kept

    refused = train(out, "--resume-from", "5", *run, "--set", "train.steps=10", check=False)
    text = refused.stdout + refused.stderr
    assert refused.returncode == 2 and "holds no checkpoint of that step; it holds steps 4, 6, 7" in text, text

    train(out, "--resume-from", "6", *run, "--set", "train.steps=10")
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        assert f["steps/step"][:].tolist() == list(range(10)), f["steps/step"][:]
        assert np.isfinite(f["steps/loss"][:]).all(), f["steps/loss"][:]
    assert np.isfinite(final_parameters(out, 10)).all()
    print("diverged after step 6: stopped naming step 6, went back with --resume-from 6, log complete")


def crash_commit():
    run = ["--set", "train.steps=10", "--set", "train.eval_every=5", "--set", "train.checkpoint_every=4",
           *STRATEGY["demo"]]
    straight = os.path.join(WORK, "commit-straight")
    train(straight, "--force", *run)
    with h5py.File(os.path.join(straight, "log.h5"), "r") as f:
        straight_loss = f["steps/loss"][:]
    for point in ("log-flushed", "rank-files-written", "latest-committed"):
        out = os.path.join(WORK, f"commit-{point}")
        shutil.rmtree(out, ignore_errors=True)
        killed = train(out, *run, check=False, env={**os.environ, "LOWCOMM_TEST_FAULT": f"{point}@8"})
        text = killed.stdout + killed.stderr
        assert killed.returncode != 0 and f"kills itself at {point} of step 8" in text, (point, killed.returncode, text)
        train(out, "--resume", *run)
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            steps = f["steps/step"][:].tolist()
            assert steps == list(range(10)), (point, steps)
            assert f["steps/loss"][:].tobytes() == straight_loss.tobytes(), point
        assert final_parameters(out, 10).tobytes() == final_parameters(straight, 10).tobytes(), point
        print(f"killed at {point} of step 8: resumed to a complete log, bitwise identical")

    # A log that lacks rows before the checkpoint's step (what an older lowcomm could leave) is refused.
    gap = os.path.join(WORK, "commit-gap")
    shutil.rmtree(gap, ignore_errors=True)
    train(gap, *run, check=False, env={**os.environ, "LOWCOMM_TEST_FAULT": "latest-committed@8"})
    short = os.path.join(WORK, "commit-short")
    train(short, "--force", *run[2:], "--set", "train.steps=4")  # the same run's log after step 4
    shutil.copy(os.path.join(short, "log.h5"), os.path.join(gap, "log.h5"))
    refused = train(gap, "--resume", *run, check=False)
    text = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "holds 4 step rows but the checkpoint resumes at step 8" in text, \
        (refused.returncode, text)
    print("a log with rows missing before the checkpoint is refused on --resume")


def exclusive():
    out = os.path.join(WORK, "exclusive")
    shutil.rmtree(out, ignore_errors=True)
    run = ["--set", "train.steps=100000", "--set", "train.eval_every=0", "--set", "train.checkpoint_every=5",
           *STRATEGY["data_parallel"]]
    first = train(out, *run, "--set", "train.progress_every=1", stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT, text=True)
    try:
        for line in first.stdout:  # a checkpoint and some log rows exist after step 6
            if line.startswith("step 5 (6/"):
                break
        with open(os.path.join(out, "lock")) as f:
            holder = f.read()
        assert "pid" in holder and "started" in holder, holder
        for flags in ([], ["--force"], ["--resume"]):
            second = train(out, *flags, *run, check=False)
            text = second.stdout + second.stderr
            assert second.returncode == 2 and "is in use by another run" in text and holder.strip() in text, \
                (flags, second.returncode, text)
        assert first.poll() is None, "the first run stopped while the others were refused"
        assert os.path.exists(os.path.join(out, "log.h5")), "--force removed the live run's log"
        os.kill(int(holder.split("pid ")[1].split(",")[0]), signal.SIGKILL)  # rank 0: the holder
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    train(out, "--resume", "--set", "train.steps=12", *run[2:])  # fails the test unless it exits 0
    print("a live run's folder refused a fresh run, --force and --resume; taken back after SIGKILL")


def flip_bytes(path, count):
    """Inverts `count` bytes in the middle of the file, where the datasets' values are."""
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        data = f.read(count)
        f.seek(os.path.getsize(path) // 2)
        f.write(bytes(b ^ 0xFF for b in data))


def checksums():
    out = os.path.join(WORK, "checksums")
    run = ["--set", "train.eval_every=0", "--set", "train.checkpoint_every=5", *STRATEGY["data_parallel"]]
    train(out, "--force", "--set", "train.steps=5", *run, "--record-trace", os.path.join(out, "trace.h5"))
    checkpoint = os.path.join(out, "checkpoints", "step-00000005", "rank-0000.h5")
    flip_bytes(checkpoint, 16)
    refused = train(out, "--resume", "--set", "train.steps=10", *run, check=False)
    text = refused.stdout + refused.stderr
    assert refused.returncode == 1 and checkpoint in text and "cannot read entry floats/" in text \
        and "checksum" in text.lower(), (refused.returncode, text)
    # With older checkpoints kept, the refusal names them as the way back.
    kept_out = os.path.join(WORK, "checksums-kept")
    kept_run = ["--set", "train.eval_every=0", "--set", "train.checkpoint_every=1", "--set", "train.keep_checkpoints=3",
                *STRATEGY["data_parallel"]]
    train(kept_out, "--force", "--set", "train.steps=4", *kept_run)
    flip_bytes(os.path.join(kept_out, "checkpoints", "step-00000004", "rank-0000.h5"), 16)
    refused = train(kept_out, "--resume", "--set", "train.steps=6", *kept_run, check=False)
    text = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "older kept checkpoint (steps 2, 3): --resume-from 3" in text, \
        (refused.returncode, text)

    trace = os.path.join(out, "trace.h5")
    flip_bytes(trace, 64)
    replay = subprocess.run([MPIEXEC, "-n", str(RANKS), "--oversubscribe", LOWCOMM, "replay", "--trace", trace,
                             "--out", os.path.join(out, "replayed.h5"), "--force"], capture_output=True, text=True)
    text = replay.stdout + replay.stderr
    assert replay.returncode != 0 and trace in text and "cannot read" in text and "checksum" in text.lower(), \
        (replay.returncode, text)
    assert not os.path.exists(os.path.join(out, "replayed.h5")), "a failed replay left its output"
    print("a damaged checkpoint and a damaged trace are refused, naming the file and the dataset")


def overlap():
    """DeMo blocking and pipelined (stale) on a slow link: the same bytes every step; the blocking
    step exposes all of its exchange, the pipelined one hides part of each exchange behind the
    next step's compute, and what it exposes plus what it hides is the previous exchange."""
    logs = {}
    for strategy in ("demo", "demo_stale"):
        out = os.path.join(WORK, f"overlap-{strategy}")
        train(out, "--force", "--set", "train.steps=6", "--set", "train.eval_every=0",
              "--set", "network.scenario=consumer", *STRATEGY[strategy])
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            logs[strategy] = {k: f["steps"][k][:] for k in
                              ("bytes_sent", "bytes_received", "comm_modelled_s", "comm_exposed_s", "comm_hidden_s")}
    blocking, stale = logs["demo"], logs["demo_stale"]
    assert blocking["bytes_sent"].tolist() == stale["bytes_sent"].tolist()
    assert blocking["bytes_received"].tolist() == stale["bytes_received"].tolist()
    d = blocking["comm_modelled_s"]
    assert (d > 0).all() and np.allclose(stale["comm_modelled_s"], d, rtol=1e-12), (d, stale["comm_modelled_s"])
    assert np.allclose(blocking["comm_exposed_s"], d, rtol=1e-9) and (blocking["comm_hidden_s"] == 0).all(), blocking
    # Step 0 only starts its exchange; step s waits for step s - 1's.
    assert stale["comm_exposed_s"][0] == 0 and stale["comm_hidden_s"][0] == 0, stale
    charged = stale["comm_exposed_s"][1:] + stale["comm_hidden_s"][1:]
    assert np.allclose(charged, d[:-1], rtol=1e-9), (charged, d)
    # The log keeps the rank that waited longest: on a busy machine one step may hide nothing on
    # it (the other rank started late), so the run as a whole must hide some.
    assert stale["comm_hidden_s"][1:].sum() > 0, stale["comm_hidden_s"]
    print(f"demo: exposed {blocking['comm_exposed_s'].sum():.4f} s blocking; stale exposed "
          f"{stale['comm_exposed_s'].sum():.4f} s, hidden {stale['comm_hidden_s'].sum():.4f} s; the same bytes")

    # DDP's buckets leave during the backward pass: the same training (two ranks sum in one
    # order whatever the buckets), part of the exchange hidden behind the rest of the backward.
    ddp = {}
    for label, extra in (("blocking", []), ("overlap", ["--set", "strategy.data_parallel.overlap=true"])):
        out = os.path.join(WORK, f"overlap-ddp-{label}")
        train(out, "--force", "--set", "train.steps=4", "--set", "train.eval_every=0", "--set", "train.grad_clip=0",
              "--set", "network.scenario=consumer", "--set", "compressor.granularity=bucket",
              "--set", "compressor.bucket_mb=0.5", *STRATEGY["data_parallel"], *extra)
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            ddp[label] = {k: f["steps"][k][:] for k in ("loss", "comm_exposed_s", "comm_hidden_s")}
    assert ddp["blocking"]["loss"].tobytes() == ddp["overlap"]["loss"].tobytes(), ddp
    assert (ddp["blocking"]["comm_hidden_s"] == 0).all() and ddp["overlap"]["comm_hidden_s"].sum() > 0, ddp
    print(f"ddp: buckets hide {ddp['overlap']['comm_hidden_s'].sum():.4f} s of communication in 4 steps, "
          f"the same losses")


def timeline():
    """--timeline: a Chrome trace-event file that parses as JSON, with per rank, per step, a forward,
    a backward, an encode, a decode and an update on the wall clock, the collectives, a checkpoint,
    and the simulated clock's tracks; a path that cannot be written fails before training."""
    out = os.path.join(WORK, "timeline")
    path = os.path.join(WORK, "timeline.json")
    steps = 3
    train(out, "--force", "--set", f"train.steps={steps}", "--set", "train.eval_every=0",
          "--set", "network.scenario=consumer", *STRATEGY["demo_stale"], "--timeline", path)
    assert not os.path.exists(path + ".partial")
    with open(path) as f:
        trace = json.load(f)
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = {(e["pid"], e["args"]["name"]) for e in trace["traceEvents"] if e.get("name") == "process_name"}
    assert names == {(r, f"rank {r}") for r in range(RANKS)} | {(RANKS + r, f"rank {r} (simulated clock)")
                                                               for r in range(RANKS)}, names
    for rank in range(RANKS):
        mine = collections.Counter(e["name"] for e in spans if e["pid"] == rank)
        for name in ("forward", "backward", "encode", "decode", "update", "wait all_gather"):
            assert mine[name] == steps, (rank, name, mine)
        assert mine["checkpoint"] == 1, mine
        simulated = collections.Counter(e["name"] for e in spans if e["pid"] == RANKS + rank)
        assert simulated["all_gather (overlapped)"] == steps and simulated["compute"] > 0, simulated
        assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)
    refused = train(out, "--force", "--set", "train.steps=1", "--timeline", os.path.join(WORK, "no", "such", "t.json"),
                    check=False)
    text = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "--timeline" in text and "cannot create" in text, (refused.returncode, text)
    print(f"timeline: {len(spans)} spans, every rank's steps on both clocks; an unwritable path is refused")


def micro_batches():
    """train.micro_batches = 2 with batch 2 trains on the windows of batch 4 in one step, and follows
    it to float rounding (gradient accumulation); the strategy still runs once per step."""
    logs = {}
    for batch, micro in ((4, 1), (2, 2)):
        out = os.path.join(WORK, f"micro-{micro}")
        train(out, "--force", "--set", "train.steps=4", "--set", "train.eval_every=0",
              "--set", f"data.batch_size={batch}", "--set", f"train.micro_batches={micro}", *STRATEGY["data_parallel"])
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            logs[micro] = {k: f["steps"][k][:] for k in ("loss", "tokens", "bytes_sent")}
    one, two = logs[1], logs[2]
    assert one["tokens"].tolist() == two["tokens"].tolist(), (one["tokens"], two["tokens"])
    assert one["bytes_sent"].tolist() == two["bytes_sent"].tolist(), "the strategy ran more than once a step"
    assert np.allclose(one["loss"], two["loss"], rtol=1e-4, atol=0), (one["loss"], two["loss"])
    print(f"micro_batches: losses {two['loss'].tolist()} follow one batch of 4 {one['loss'].tolist()}")


def disk_full():
    """A checkpoint that does not fit (LOWCOMM_TEST_FREE_BYTES stands for a full disk) stops the run with
    exit 1 and a message saying how much it needs, before any file is created: no crash, no .partial,
    no half-made step folder, the log readable with its rows; with space again, --resume starts over."""
    out = os.path.join(WORK, "disk-full")
    run = ["--set", "train.steps=6", "--set", "train.checkpoint_every=3", "--set", "train.eval_every=0"]
    env = dict(os.environ, LOWCOMM_TEST_FREE_BYTES="1000")
    full = train(out, "--force", *run, check=False, env=env)
    text = full.stdout + full.stderr
    assert full.returncode == 1, (full.returncode, text)
    assert "needs about" in text and "MB free" in text and "--resume" in text, text
    assert "Segmentation" not in text and "HDF5:" not in text, text
    leftovers = [os.path.join(d, f) for d, _, files in os.walk(out) for f in files if f.endswith(".partial")]
    assert not leftovers, leftovers
    assert not os.path.exists(os.path.join(out, "checkpoints", "step-00000003")), "a half-made step folder"
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        assert f["steps/step"][:].tolist() == [0, 1, 2], f["steps/step"][:]
    resumed = train(out, "--resume", *run)
    assert "resumed" not in resumed.stdout, resumed.stdout  # nothing to resume from: a fresh start
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        assert f["steps/step"][:].tolist() == list(range(6)), f["steps/step"][:]
    print("a checkpoint that cannot fit stops the run cleanly, naming the space it needs")


def stragglers():
    """cluster.rank.1.compute_scale = 10: on an ideal network (no communication time) the simulated
    clock runs at the straggler's pace, about ten times the measured compute; without it, at about
    the measured compute. The bytes and the training are unchanged. (The bounds leave room for a
    busy machine, where one rank may compute twice as long as the other.)"""
    logs = {}
    for label, extra in (("even", []), ("straggler", ["--set", "cluster.rank.1.compute_scale=10"])):
        out = os.path.join(WORK, f"stragglers-{label}")
        train(out, "--force", "--set", "train.steps=5", "--set", "train.eval_every=0",
              "--set", "network.scenario=ideal", *extra)
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            logs[label] = {k: f["steps"][k][:] for k in ("simulated_s", "compute_s", "loss", "bytes_sent")}
    even, slow = logs["even"], logs["straggler"]
    assert even["loss"].tobytes() == slow["loss"].tobytes() and even["bytes_sent"].tolist() == slow["bytes_sent"].tolist()
    assert slow["simulated_s"][-1] >= 4 * slow["compute_s"].sum(), (slow["simulated_s"][-1], slow["compute_s"].sum())
    assert slow["simulated_s"][-1] > 3 * even["simulated_s"][-1], (slow["simulated_s"][-1], even["simulated_s"][-1])
    print(f"stragglers: simulated {slow['simulated_s'][-1]:.3f} s with a 10x rank, {even['simulated_s'][-1]:.3f} s "
          f"without; compute {slow['compute_s'].sum():.3f} / {even['compute_s'].sum():.3f} s")


def clock():
    """steps/simulated_s is strictly increasing for every strategy whose steps do not all
    communicate (and for data parallelism, which does): each step's compute is on the clock at the
    end of that step, not only once the next collective settles it. Before the fix DiLoCo's column
    read 0, 0, 0, 0, t, t, t, t, t, 2t, ..."""
    for name in ("diloco", "sparseloco", "muloco", "desloc", "noloco", "zero_one_adam", "data_parallel"):
        out = os.path.join(WORK, f"clock-{name}")
        train(out, "--force", "--set", "train.steps=14", "--set", "train.eval_every=0",
              "--set", "network.scenario=consumer", *STRATEGY[name])
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            simulated, compute = f["steps/simulated_s"][:], f["steps/compute_s"][:]
        steps = np.diff(np.concatenate([[0.0], simulated]))
        assert (steps > 0).all(), f"{name}: the clock stands still: {simulated.tolist()}"
        # each step takes at least its forward and backward pass (compute_s: the slowest rank's)
        assert (steps >= compute * 0.999).all(), f"{name}: {steps.tolist()} against compute {compute.tolist()}"
        print(f"clock: {name} moves on every step, {simulated[-1]:.3f} s in 14 steps")


def modelled_compute():
    """cluster.step_compute_ms charges each step's compute to the simulated clock instead of
    measuring it, so two runs' clocks agree to the bit, and so does a run stopped and resumed; a
    step then moves the clock by the modelled compute (times the slowest rank's compute_scale)
    plus the communication it waited for. cluster.compute_tflops charges PaLM's 6 N + 12 L C T
    FLOPs per token (N without the position table) at that rate. With network.mode = off the
    clock is the wall clock, and the key is refused."""
    def run(label, *extra, steps=6):
        out = os.path.join(WORK, f"modelled-{label}")
        train(out, "--force", "--set", f"train.steps={steps}", "--set", "train.eval_every=2",
              "--set", "network.scenario=consumer", *STRATEGY["data_parallel"], *extra)
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            return f["steps/simulated_s"][:], f["steps/comm_exposed_s"][:]

    def advances(clock):
        return np.diff(np.concatenate([[0.0], clock]))

    modelled = ["--set", "cluster.step_compute_ms=40"]
    first, exposed = run("a", *modelled)
    second, _ = run("b", *modelled)
    assert first.tobytes() == second.tobytes(), (first.tolist(), second.tolist())
    assert (exposed > 0).all() and np.allclose(advances(first), 0.040 + exposed, rtol=1e-12, atol=0), \
        (advances(first).tolist(), exposed.tolist())

    # Stopped after step 2 (train.steps=3), resumed to 6: the same clock, bit for bit.
    out = os.path.join(WORK, "modelled-resumed")
    common = ["--set", "train.eval_every=2", "--set", "network.scenario=consumer", *STRATEGY["data_parallel"], *modelled]
    train(out, "--force", "--set", "train.steps=3", *common)
    train(out, "--resume", "--set", "train.steps=6", *common)
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        resumed = f["steps/simulated_s"][:]
    assert resumed.tobytes() == first.tobytes(), (resumed.tolist(), first.tolist())

    slow, slow_exposed = run("straggler", *modelled, "--set", "cluster.rank.1.compute_scale=3")
    assert np.allclose(advances(slow), 0.120 + slow_exposed, rtol=1e-12, atol=0), \
        (advances(slow).tolist(), slow_exposed.tolist())

    # tiny: V 256, T_max 128, L 4, C 128; 4 rows of 32 tokens per rank and step.
    V, T_max, L, C, T, rows = 256, 128, 4, 128, 32, 4
    parameters = V * C + T_max * C + L * (12 * C * C + 13 * C) + 2 * C
    flops = rows * T * (6 * (parameters - T_max * C) + 12 * L * C * T)
    rated, rated_exposed = run("flops", "--set", "cluster.compute_tflops=0.002")
    assert np.allclose(advances(rated), flops / 2e9 + rated_exposed, rtol=1e-12, atol=0), \
        (advances(rated).tolist(), flops / 2e9)

    refused = train(os.path.join(WORK, "modelled-off"), "--force", "--set", "train.steps=1", *modelled,
                    "--set", "network.mode=off", check=False)
    assert refused.returncode != 0 and "network.mode" in refused.stderr, refused.stderr
    print(f"modelled compute: {first[-1]:.6f} s in 6 steps in every run and after a resume; a 3x straggler "
          f"{slow[-1]:.6f} s; at 2 GFLOP/s {rated[-1]:.6f} s")


def dropout():
    """Peers that drop out, end to end with DeMo (a gathering exchange): the log's `present` column
    shows the scheduled outage, the absent rank sends only its frame's size table on those steps,
    and with cluster.dropout = 0.5 some rank is absent on some step but never all on one."""
    out = os.path.join(WORK, "dropout-outage")
    train(out, "--force", "--set", "train.steps=6", "--set", "train.eval_every=0", "--set", "strategy.name=demo",
          "--set", 'cluster.rank.1.absent_steps="2-3"')
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        present, sent = f["steps/present"][:], f["steps/bytes_sent"][:]
        loss = f["steps/loss"][:]
    assert present.tolist() == [[1, 1], [1, 1], [1, 0], [1, 0], [1, 1], [1, 1]], present.tolist()
    assert (sent[2:4, 1] < sent[0, 1] / 10).all() and (sent[2:4, 0] > 0).all(), sent.tolist()
    assert np.isfinite(loss).all(), loss
    out = os.path.join(WORK, "dropout-random")
    train(out, "--force", "--set", "train.steps=8", "--set", "train.eval_every=0", "--set", "cluster.dropout=0.5")
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        present = f["steps/present"][:]
    assert (present.sum(axis=1) >= 1).all() and (present == 0).any(), present.tolist()
    # NoLoCo's gossip (a pair exchange every 2 steps) with rank 1 absent from the round at step 3:
    # its partner keeps its own weights too, so neither sends on that round, and the rounds before
    # and after exchange a whole model each way.
    out = os.path.join(WORK, "dropout-gossip")
    train(out, "--force", "--set", "train.steps=6", "--set", "train.eval_every=0", *STRATEGY["noloco"],
          "--set", "strategy.noloco.inner_steps=2", "--set", 'cluster.rank.1.absent_steps="3-3"')
    with h5py.File(os.path.join(out, "log.h5"), "r") as f:
        gossip_present, gossip_sent = f["steps/present"][:], f["steps/bytes_sent"][:]
        assert np.isfinite(f["steps/loss"][:]).all()
    assert gossip_present[3].tolist() == [1, 0], gossip_present.tolist()
    assert gossip_sent[[0, 2, 3, 4]].sum() == 0, gossip_sent.tolist()
    assert (gossip_sent[[1, 5]] == gossip_sent[1, 0]).all() and gossip_sent[1, 0] > 0, gossip_sent.tolist()
    print(f"dropout: outage logged {present.tolist()}; absent rank sent {sent[2:4, 1].tolist()} bytes; "
          f"gossip sent {gossip_sent.tolist()}")


def backends(strategy):
    run = ["--force", "--set", "train.steps=4", "--set", "train.eval_every=0", *STRATEGY[strategy]]
    losses = {}
    for backend in ("reference", "cpu"):
        out = os.path.join(WORK, f"backend-{backend}-{strategy}")
        train(out, *run, "--set", f"compute.backend={backend}")
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            losses[backend] = f["steps/loss"][:]
    assert np.allclose(losses["reference"], losses["cpu"], rtol=1e-4, atol=0), losses
    # A checkpoint is the same on every backend: a run on reference resumes on cpu.
    moved = os.path.join(WORK, f"backend-moved-{strategy}")
    short = [a if a != "train.steps=4" else "train.steps=2" for a in run]
    train(moved, *short, "--set", "compute.backend=reference")
    resumed = train(moved, "--resume", *run, "--set", "compute.backend=cpu")
    assert "resumed at step 2" in resumed.stdout, resumed.stdout
    with h5py.File(os.path.join(moved, "log.h5"), "r") as f:
        assert f["steps/step"][:].tolist() == [0, 1, 2, 3]
        assert np.allclose(f["steps/loss"][:], losses["cpu"], rtol=1e-4, atol=0), (f["steps/loss"][:], losses)
    # Any other change is refused on --resume, saying what may change: a --set beside the log's
    # configuration, and a --config file that differs from the run's.
    changed = train(moved, "--resume", *run, "--set", "compute.backend=cpu", "--set", "seed=7", check=False)
    text = changed.stdout + changed.stderr
    assert changed.returncode == 2 and "comm.transport and experiment.method, not what" in text, text
    assert "computed with: seed = 7 (was 0)" in text, text  # the key that changed, from the log
    config_file = os.path.join(WORK, "backend-moved-seed7.toml")
    with h5py.File(os.path.join(moved, "log.h5"), "r") as f:
        logged = f.attrs["config"]
    with open(config_file, "w") as f:
        f.write((logged.decode() if isinstance(logged, bytes) else logged).replace("seed = 0", "seed = 7", 1))
    changed = subprocess.run([MPIEXEC, "-n", str(RANKS), "--oversubscribe", LOWCOMM, "train", "--out", moved, "--resume",
                              "--config", config_file], capture_output=True, text=True)
    text = changed.stdout + changed.stderr
    assert changed.returncode == 2 and "configuration differs" in text and "experiment.method may change" in text, text
    assert "was started with: seed = 7 (was 0)" in text, text
    # cuda: refused, listing the backends this build has, where the build lacks it; refused, saying
    # why, in a CUDA build without a usable device (a login node); run where a GPU is.
    cuda = train(os.path.join(WORK, "backend-cuda"), *run, "--set", "compute.backend=cuda", check=False)
    text = cuda.stdout + cuda.stderr
    if cuda.returncode == 0:
        cuda_result = "cuda ran (a GPU is usable here)"
    else:
        assert cuda.returncode == 2 and "compute.backend" in text, (cuda.returncode, text)
        assert "reference" in text or "cannot run here" in text, text
        cuda_result = "cuda refused: " + ("not in this build" if "reference" in text else "no usable device")
    print(f"{strategy}: reference and cpu backends agree on every loss {losses['cpu']}; a reference run resumed "
          f"on cpu; a changed seed refused on --resume; {cuda_result}")


def precision():
    """train.precision = bf16 trains end to end: its losses follow fp32's closely but not bit for bit
    (the products' operands are rounded), and the log's configuration records the choice."""
    run = ["--force", "--set", "train.steps=4", "--set", "train.eval_every=0", *STRATEGY["demo"]]
    losses = {}
    for name in ("fp32", "bf16"):
        out = os.path.join(WORK, f"precision-{name}")
        train(out, *run, "--set", f"train.precision={name}")
        with h5py.File(os.path.join(out, "log.h5"), "r") as f:
            losses[name] = f["steps/loss"][:]
            config = f.attrs["config"]
            config = config.decode() if isinstance(config, bytes) else config
            assert f'precision = "{name}"' in config, config
    assert np.allclose(losses["bf16"], losses["fp32"], rtol=1e-2, atol=0), losses
    assert not np.array_equal(losses["bf16"], losses["fp32"]), "bf16 products changed nothing"
    print(f"bf16 losses {losses['bf16']} follow fp32's {losses['fp32']} within 1%")


def init_from():
    """train.init_from starts a fresh run from another run's parameters: at learning rate 0 they
    are still the source checkpoint's after a step, bit for bit; at a real learning rate the run
    starts where the source ended (its first loss far below a fresh model's), with its own log
    from step 0 and fresh optimizer state; another model shape, a folder without a checkpoint,
    a checkpoint without model/parameters and a log whose configuration cannot be read are
    refused saying so."""
    source = os.path.join(WORK, "init-source")
    train(source, "--force", "--set", "train.steps=60", "--set", "train.eval_every=0", *STRATEGY["data_parallel"])
    # rank 0's file of the source's last checkpoint is what every rank starts from
    start = final_parameters(source, 60)

    still = os.path.join(WORK, "init-lr0")
    train(still, "--force", "--set", "train.steps=1", "--set", "train.eval_every=0", "--set", "schedule.lr=0",
          "--set", "schedule.warmup_steps=0", "--set", f"train.init_from={source}")
    assert final_parameters(still, 1).tobytes() == start.tobytes(), "the parameters at step 0 are not the source's"

    tuned, fresh = os.path.join(WORK, "init-tuned"), os.path.join(WORK, "init-fresh")
    run = ["--force", "--set", "train.steps=3", "--set", "train.eval_every=0", *STRATEGY["data_parallel"]]
    train(tuned, *run, "--set", f"train.init_from={source}")
    train(fresh, *run)
    with h5py.File(os.path.join(tuned, "log.h5"), "r") as f, h5py.File(os.path.join(fresh, "log.h5"), "r") as g, \
            h5py.File(os.path.join(source, "log.h5"), "r") as h:
        assert f["steps/step"][:].tolist() == [0, 1, 2], f["steps/step"][:]
        tuned_loss, fresh_loss, source_last = f["steps/loss"][0], g["steps/loss"][0], h["steps/loss"][-1]
    assert tuned_loss < fresh_loss - 0.3 and abs(tuned_loss - source_last) < 0.5, (tuned_loss, fresh_loss, source_last)

    def refused(out, *extra):
        result = train(out, "--force", "--set", "train.steps=1", *extra, check=False)
        return result.returncode, result.stdout + result.stderr

    code, text = refused(os.path.join(WORK, "init-wide"), "--set", f"train.init_from={source}",
                         "--set", "model.width=64")
    assert code == 2 and "trained another model (model.width = 128 there, 64 here)" in text, (code, text)
    empty = os.path.join(WORK, "init-empty")
    shutil.rmtree(empty, ignore_errors=True)
    os.makedirs(empty)
    shutil.copy(os.path.join(source, "log.h5"), empty)
    code, text = refused(os.path.join(WORK, "init-nothing"), "--set", f"train.init_from={empty}")
    assert code == 2 and "holds no complete checkpoint" in text, (code, text)
    code, text = refused(os.path.join(WORK, "init-nowhere"), "--set", f"train.init_from={empty}-absent")
    assert code == 2 and "no such folder" in text, (code, text)
    damaged = os.path.join(WORK, "init-damaged")
    shutil.rmtree(damaged, ignore_errors=True)
    shutil.copytree(source, damaged)
    rank0 = os.path.join(damaged, "checkpoints", "step-00000060", "rank-0000.h5")
    with h5py.File(rank0, "a") as f:
        del f["floats/model/parameters"]
    code, text = refused(os.path.join(WORK, "init-missing"), "--set", f"train.init_from={damaged}")
    assert code == 2 and "model/parameters" in text, (code, text)
    # A log whose configuration this lowcomm cannot read (another version's keys): the message says
    # which run's log it is.
    with h5py.File(os.path.join(damaged, "log.h5"), "a") as f:
        config = f.attrs["config"]
        f.attrs["config"] = (config.decode() if isinstance(config, bytes) else config) + "\n[retired]\nkey = 1\n"
    code, text = refused(os.path.join(WORK, "init-unreadable"), "--set", f"train.init_from={damaged}")
    assert code == 2 and f'train.init_from = "{damaged}": ' in text and "retired" in text, (code, text)
    print(f"init_from: lr 0 keeps the source's parameters bitwise; first loss {tuned_loss:.3f} fine-tuned, "
          f"{fresh_loss:.3f} fresh (source ended at {source_last:.3f}); five mistakes refused")


{"learn": lambda: learn(ARGS[0]), "resume": lambda: resume(ARGS[0]), "nonfinite": nonfinite, "overlap": overlap, "timeline": timeline, "micro_batches": micro_batches, "disk_full": disk_full, "stragglers": stragglers, "clock": clock, "modelled_compute": modelled_compute, "interrupt": interrupt, "no_validation": no_validation, "dropout": dropout,
 "crash_commit": crash_commit, "go_back": go_back, "exclusive": exclusive,
 "checksums": checksums, "backends": lambda: backends(ARGS[0]), "precision": precision, "init_from": init_from}[MODE]()
