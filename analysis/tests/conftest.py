"""Logs made by the real `lowcomm train` (tiny runs on 2 ranks), once per test session.

LOWCOMM names the lowcomm binary (the tests that need logs are skipped without it); MPIEXEC
the launcher (default: mpiexec).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

COMMON = ["data.source=markov", "data.batch_size=4", "data.seq_len=32", "train.eval_every=10",
          "train.checkpoint_every=1000", "train.progress_every=1000"]

# name -> (steps, settings). Two network scenarios; demo with two seeds on consumer.
# Compression at matched loss (test_matched_loss.py) measures every method against the dense
# runs' final validation loss, which no other method here reaches in 30 steps but 8-bit
# quantisation at twice the batch: its seed 0 reaches it, its seed 1 is cut short at 10 steps
# (train.steps never splits a method) and does not, so one method has a seed each way.
QUANTIZE = ["strategy.name=data_parallel", "compressor.name=quantize", "compressor.quantize.bits=8",
            "data.batch_size=8", "network.scenario=consumer"]
# --best-of (test_best_of.py): DiLoCo H=5 at two learning rates over two seeds, 20 steps each.
# 1e-3 ends clearly lower (about 5.11 nats against 5.33, the seeds 0.03 apart), and it is the
# larger value, so the tie rule (the smaller value) cannot be what picks it.
DILOCO_EVAL5 = "diloco-eval5-s1"  # DiLoCo H=10 evaluated every 5 steps
DILOCO5 = ["strategy.name=diloco", "strategy.diloco.inner_steps=5", "network.scenario=consumer"]
LR_SWEEP = {1e-3: ["diloco5-lr1e-3-s0", "diloco5-lr1e-3-s1"],  # schedule.lr -> its runs
            1e-4: ["diloco5-lr1e-4-s0", "diloco5-lr1e-4-s1"]}
RUNS = {
    "dense-consumer": (30, ["strategy.name=data_parallel", "network.scenario=consumer"]),
    "dense-10gbps": (30, ["strategy.name=data_parallel", "network.scenario=10gbps"]),
    "demo-consumer-s0": (30, ["strategy.name=demo", "schedule.lr=1.5e-3", "seed=0",
                              "network.scenario=consumer"]),
    "demo-consumer-s1": (30, ["strategy.name=demo", "schedule.lr=1.5e-3", "seed=1",
                              "network.scenario=consumer"]),
    "demo-10gbps": (30, ["strategy.name=demo", "schedule.lr=1.5e-3", "network.scenario=10gbps"]),
    "topk-consumer": (30, ["strategy.name=data_parallel", "compressor.name=topk",
                           "compressor.topk.ratio=0.01", "network.scenario=consumer"]),
    "diloco-consumer": (30, ["strategy.name=diloco", "strategy.diloco.inner_steps=10",
                             "network.scenario=consumer"]),
    # Its second seed, evaluated every 5 steps (a later --set wins over COMMON's 10): half the
    # evaluations fall between two synchronisations, where the simulated clock must still move
    # (test_report.py's time to target between syncs).
    DILOCO_EVAL5: (30, ["strategy.name=diloco", "strategy.diloco.inner_steps=10",
                        "network.scenario=consumer", "train.eval_every=5", "seed=1"]),
    "quantize-consumer-s0": (30, QUANTIZE + ["seed=0"]),
    "quantize-short-s1": (10, QUANTIZE + ["seed=1"]),
    # dense-consumer's twin with a bf16 wire: the default baseline stays the fp32 one.
    "dense-bf16-consumer": (30, ["strategy.name=data_parallel", "network.scenario=consumer",
                                 "compressor.none.value_type=bf16"]),
    "diloco5-lr1e-3-s0": (20, DILOCO5 + ["schedule.lr=1e-3", "seed=0"]),
    "diloco5-lr1e-3-s1": (20, DILOCO5 + ["schedule.lr=1e-3", "seed=1"]),
    "diloco5-lr1e-4-s0": (20, DILOCO5 + ["schedule.lr=1e-4", "seed=0"]),
    "diloco5-lr1e-4-s1": (20, DILOCO5 + ["schedule.lr=1e-4", "seed=1"]),
}
PARTIAL = "dense-partial"  # dense, consumer, train.steps=100000, stopped by SIGUSR1
KILLED = "demo-killed"  # demo, 10gbps, train.steps=100000, every process SIGKILLed mid-run


def _env():
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env


def _command(lowcomm, mpiexec, out, steps, settings):
    command = [mpiexec, "-n", "2", "--oversubscribe", lowcomm, "train", "--out", str(out),
               "--force"]
    for setting in COMMON + [f"train.steps={steps}"] + settings:
        command += ["--set", setting]
    return command


def _kill_session(sid: int) -> None:
    """SIGKILLs every process in session `sid`. Open MPI puts each rank in its own process
    group, so killing mpiexec's group alone leaves the ranks running (and writing) a while."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Fields after the parenthesised command: state ppid pgrp session ...
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            pass  # exited meanwhile


def _rows(log: Path) -> int:
    import h5py
    try:
        with h5py.File(log, "r", libver="latest", swmr=True) as f:
            return f["steps/step"].shape[0]
    except Exception:  # noqa: BLE001 - not created yet, or mid-creation
        return 0


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory):
    lowcomm = os.environ.get("LOWCOMM")
    if not lowcomm:
        pytest.skip("LOWCOMM (path of the lowcomm binary) is not set")
    if not Path(lowcomm).exists():
        pytest.fail(f"LOWCOMM={lowcomm} does not exist")
    mpiexec = os.environ.get("MPIEXEC") or "mpiexec"
    root = tmp_path_factory.mktemp("runs")
    env = _env()
    for name, (steps, settings) in RUNS.items():
        result = subprocess.run(_command(lowcomm, mpiexec, root / name, steps, settings),
                                env=env, capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, f"{name}: {result.stdout}\n{result.stderr}"

    # Partial logs: long runs stopped once they have flushed some rows. SIGUSR1 to mpiexec:
    # the app checkpoints, flushes and exits 0 at the next step boundary. SIGKILL to every
    # process of the job: the file keeps the writer's "open for writing" mark (SWMR reads it).
    for name, settings, how in (
            (PARTIAL, ["strategy.name=data_parallel", "network.scenario=consumer"], "usr1"),
            (KILLED, ["strategy.name=demo", "schedule.lr=1.5e-3", "network.scenario=10gbps"],
             "kill")):
        out = root / name
        process = subprocess.Popen(_command(lowcomm, mpiexec, out, 100000, settings), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        deadline = time.monotonic() + 120
        while (_rows(out / "log.h5") < 12 and time.monotonic() < deadline
               and process.poll() is None):
            time.sleep(0.2)
        if how == "usr1":
            process.send_signal(signal.SIGUSR1)
        else:
            _kill_session(process.pid)
        try:
            output, _ = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            _kill_session(process.pid)
            output, _ = process.communicate()
        assert _rows(out / "log.h5") >= 12, output

    # A byte budget from `lowcomm plan` beside the logs: the report tables it apart.
    subprocess.run([lowcomm, "plan", "--model", "tiny", "--world-size", "2", "--hdf5",
                    str(root / "plan.h5"), "--method", "dense:", "--method",
                    "demo: strategy.name=demo"], env=env, check=True, capture_output=True)

    # A corrupt file: an HDF5 signature followed by garbage.
    (root / "broken").mkdir()
    (root / "broken" / "corrupt.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + os.urandom(4096))
    return root


@pytest.fixture(scope="session")
def report(runs_dir, tmp_path_factory):
    """Runs `python3 -m analysis report` on the runs; returns (out dir, completed process)."""
    out = tmp_path_factory.mktemp("report")
    result = subprocess.run([sys.executable, "-m", "analysis", "report", str(runs_dir),
                             "--out", str(out)], cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return out, result
