"""The default target loss (analysis/targets.py), the warnings that it says little, the
warning that no method but the baseline reaches the baseline's loss, and the numbers as the
tables print them: in memory and on logs written by hand (tests/synthetic.py)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import tables, targets
from analysis.logs import Run
from analysis.matched_loss import matched_loss_table, unreached_warnings
from conftest import REPO
from synthetic import config, write_log


def _run(label, val_losses, seed=0, scenario="consumer", partial=False, bytes_per_step=1000,
         strategy="data_parallel", train_losses=None):
    """A 2-rank run of 10 steps per evaluation, evaluated after steps 9, 19, ... (val_losses
    empty: never evaluated; train_losses: its training loss per step, else falling 9 to 8)."""
    rows = 10 * max(len(val_losses), 1)
    steps = pd.DataFrame({
        "step": np.arange(rows),
        "loss": np.linspace(9.0, 8.0, rows) if train_losses is None else train_losses,
        "tokens": np.full(rows, 100), "simulated_s": np.arange(1, rows + 1, dtype=float)})
    evals = pd.DataFrame({"step": np.arange(9, 10 * len(val_losses), 10)[:len(val_losses)],
                          "val_loss": np.asarray(val_losses, dtype=float)})
    cfg = config(strategy, seed=seed, scenario=scenario)
    run = Run(path=Path(f"runs/{label}-{seed}-{scenario}/log.h5"), attrs={"seed": seed},
              config=cfg, steps=steps, per_rank={"bytes_sent": np.full((rows, 2), bytes_per_step)},
              evals=evals, world_size=2, n_params=None, planned_steps=rows, partial=partial)
    run.label = label
    return run


# --- which run sets the default target ---------------------------------------------------------

def test_the_default_target_and_its_run():
    good = _run("a", [5.0, 4.0])
    worst = _run("b", [5.0, 4.5])
    cut = _run("c", [6.0], partial=True)  # higher, but partial: not counted beside complete runs
    target, run = targets.default_target([good, worst, cut])
    assert (target, run) == (4.5, worst)
    assert tables.default_target([good, worst, cut]) == 4.5
    assert targets.default_target([cut]) == (6.0, cut)  # no complete run: every run
    never = _run("d", [], train_losses=np.linspace(9.0, 7.0, 10))  # its training loss stands in
    assert targets.default_target([good, never]) == (7.0, never)
    target, run = targets.default_target([])
    assert math.isnan(target) and run is None


# --- the run that sets it diverged -------------------------------------------------------------

def test_divergence_warning_fires_above_the_first_evaluation_only():
    diverged = _run("b", [5.0, 4.0, 5.2])
    warning = targets.divergence_warning(diverged)
    assert warning is not None and "diverged" in warning and "`b`" in warning
    assert "5.2" in warning and "above its first, 5" in warning
    assert targets.divergence_warning(_run("b", [5.0, 4.0, 4.9])) is None  # up, but below 5.0
    assert targets.divergence_warning(_run("b", [5.0])) is None  # one evaluation
    # Never evaluated: its training loss, last step against first.
    rising = _run("b", [], train_losses=np.linspace(8.0, 9.0, 10))
    assert "training (it has no evaluation)" in targets.divergence_warning(rising)
    assert targets.divergence_warning(_run("b", [])) is None


# --- the run that sets it is an outlier among its seeds ----------------------------------------

def test_outlier_warning_needs_two_other_seeds_and_three_deviations():
    worst = _run("m", [6.0, 5.0], seed=0)
    close = [_run("m", [6.0, 4.0], seed=1), _run("m", [6.0, 4.02], seed=2)]
    # Mean 4.01, std 0.014 of the other two: 5.0 lies some 70 deviations away.
    warning = targets.outlier_warning(worst, [worst, *close])
    assert warning is not None and "outlier" in warning and "other 2 seeds" in warning
    assert "70.0 standard deviations" in warning
    # One other seed gives no deviation: no rule, however far.
    assert targets.outlier_warning(worst, [worst, close[0]]) is None
    # Spread seeds: mean 4.5, std 0.707; 5.0 is 0.7 deviations away.
    spread = [_run("m", [6.0, 4.0], seed=1), _run("m", [6.0, 5.0 - 1e-9], seed=2)]
    assert targets.outlier_warning(worst, [worst, *spread]) is None
    # Other methods, other scenarios and partial runs are not its seeds.
    others = [_run("n", [6.0, 4.0], seed=1), _run("m", [6.0, 4.0], seed=1, scenario="10gbps"),
              _run("m", [4.0], seed=3, partial=True), close[0]]
    assert targets.outlier_warning(worst, [worst, *others]) is None
    # Seeds that ended alike: any distance is an outlier's.
    alike = [_run("m", [6.0, 4.0], seed=1), _run("m", [6.0, 4.0], seed=2)]
    assert "all ended at 4" in targets.outlier_warning(worst, [worst, *alike])
    assert targets.target_run_warnings(worst, [worst, *close]) == [warning]
    assert targets.target_run_warnings(None, [worst]) == []


# --- no method but the baseline reaches the baseline's final loss ------------------------------

def test_unreached_warning_fires_only_where_no_other_method_reaches():
    dense = [_run("dense", [3.0, 2.0], seed=0), _run("dense", [3.0, 2.2], seed=1)]  # target 2.1
    slow = _run("slow", [3.5, 2.5], bytes_per_step=10)
    alone = _run("dense", [3.0, 2.0], scenario="10gbps")  # no other method on 10gbps
    frame, _ = matched_loss_table([*dense, slow, alone], "dense")
    warnings = unreached_warnings(frame)
    assert len(warnings) == 1
    assert warnings[0].startswith("no method but the baseline `dense` reaches its final "
                                  "validation loss 2.1 on `consumer` with 2 ranks: the other "
                                  "method there reads \"not reached\"")
    # One seed of one other method getting there is enough to compare.
    fast = _run("fast", [2.05, 2.5], bytes_per_step=10)
    frame, _ = matched_loss_table([*dense, slow, fast, alone], "dense")
    assert unreached_warnings(frame) == []
    # At a loss the others reach, no warning either.
    frame, _ = matched_loss_table([*dense, slow, alone], "dense", target_loss=2.6)
    assert unreached_warnings(frame) == []


# --- the report: the summary and stderr --------------------------------------------------------

def _report(inputs, out, *options):
    return subprocess.run([sys.executable, "-m", "analysis", "report", *map(str, inputs),
                           "--out", str(out), "--no-plots", *options], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def _logs(root: Path, diverge: bool, reach: bool) -> Path:
    """AdamW over three seeds and a compressed method over three; the compressed seed 2 ends
    worst (it sets the default target), going back up above its first evaluation where
    `diverge`; the compressed method reaches AdamW's final loss where `reach`."""
    for seed in range(3):
        write_log(root / f"adamw-s{seed}" / "log.h5", config(seed=seed),
                  [5.0, 4.0, 3.0 + 0.01 * seed])
    # Seeds 0 and 1: far apart where the target is sound (seed 2's 4.9 is within their spread),
    # close where it is not (seed 2's 5.5 is far outside it).
    lows = [2.9, 4.6] if reach else [3.5, 3.55]
    for seed, low in enumerate(lows):
        write_log(root / f"topk-s{seed}" / "log.h5", config(compressor="topk", seed=seed),
                  [5.0, 4.0, low], bytes_per_step=10)
    write_log(root / "topk-s2" / "log.h5", config(compressor="topk", seed=2),
              [5.0, 4.5, 5.5 if diverge else 4.9], bytes_per_step=10)
    return root


def test_report_names_the_target_run_and_warns(tmp_path):
    logs = _logs(tmp_path / "bad", diverge=True, reach=False)
    result = _report([logs], tmp_path / "bad-report")
    assert result.returncode == 0, result.stderr
    summary = (tmp_path / "bad-report" / "summary.md").read_text()
    path = logs / "topk-s2" / "log.h5"
    assert (f"target loss 5.5 (default: the worst final validation loss over the complete "
            f"runs). The default target is set by run `topk-s2` (method `data_parallel/topk`, "
            f"scenario `consumer`, {path}).") in summary
    warned = [line[len("analysis: warning: "):] for line in result.stderr.splitlines()
              if line.startswith("analysis: warning: ")]
    assert len(warned) == 3, result.stderr
    assert any("which diverged" in w for w in warned)
    assert any("an outlier among its seeds" in w for w in warned)
    assert any(w.startswith("no method but the baseline `data_parallel/none`") for w in warned)
    for warning in warned:
        assert f"- {warning}" in summary
    assert summary.index("**Warnings:**") < summary.index("## Per method")
    assert "3 warnings" in result.stdout

    # A sound target: no warning, and the run is still named.
    logs = _logs(tmp_path / "good", diverge=False, reach=True)
    result = _report([logs], tmp_path / "good-report")
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    summary = (tmp_path / "good-report" / "summary.md").read_text()
    assert "**Warnings:**" not in summary
    assert "The default target is set by run `topk-s2`" in summary
    # A given target is nobody's: neither named nor warned about.
    result = _report([_logs(tmp_path / "given", diverge=True, reach=True)],
                     tmp_path / "given-report", "--target-loss", "4.2")
    assert "which diverged" not in result.stderr
    assert "The default target" not in (tmp_path / "given-report" / "summary.md").read_text()


# --- numbers as the tables print them -----------------------------------------------------------

def test_numbers_read_in_full_with_units():
    assert [tables.fmt_time(x) for x in (11570.3, 0.01234, 3.5, 0.0)] == \
        ["11,570 s", "0.01234 s", "3.5 s", "0 s"]
    assert tables.fmt_time(math.nan) == "not reached" and tables.fmt_seconds(math.nan) == "—"
    assert [tables.fmt_bytes(x) for x in (0.25, 512, 999.6, 999_999, 3.37e6, 1.2e15)] == \
        ["0.25 B", "512 B", "1 kB", "1 MB", "3.37 MB", "1,200 TB"]
    assert tables.fmt_count(100000) == "100,000"
    # No "± 0 B": a spread that reads as zero is left out (the seed count is in its own column).
    assert tables.fmt_mean_std(3.37e6, 0.0, tables.fmt_bytes) == "3.37 MB"
    assert tables.fmt_mean_std(3.37e6, 12e3, tables.fmt_bytes) == "3.37 MB ± 12 kB"
    assert tables.fmt_mean_std(4.9, 1e-5, tables.fmt_num) == "4.9000"  # not "± 0.0000"
    assert tables.fmt_mean_std(4.9, 0.03, tables.fmt_num) == "4.9000 ± 0.0300"
    assert tables.fmt_mean_std(12000.0, 1500.0, tables.fmt_time) == "12,000 s ± 1,500"


def test_paper_table_cells():
    per_method = pd.DataFrame([
        {"method": "adamw", "scenario": "consumer", "world_size": 2, "n": 3,
         "final_val_loss_mean": 2.43131, "final_val_loss_std": 0.0021, "bytes_per_step_mean": 3.37e6},
        {"method": "demo", "scenario": "consumer", "world_size": 2, "n": 1,
         "final_val_loss_mean": 2.6, "final_val_loss_std": math.nan, "bytes_per_step_mean": 11570.0},
        {"method": "topk", "scenario": "consumer", "world_size": 2, "n": 2,
         "final_val_loss_mean": 2.7, "final_val_loss_std": 0.0, "bytes_per_step_mean": 0.0}])
    matched = pd.DataFrame([
        {"method": "adamw", "scenario": "consumer", "world_size": 2, "target_val_loss": 2.43,
         "compression": 1.0, "reached": 2, "n": 3},
        {"method": "demo", "scenario": "consumer", "world_size": 2, "target_val_loss": 2.43,
         "compression": math.nan, "reached": 0, "n": 1},
        {"method": "topk", "scenario": "consumer", "world_size": 2, "target_val_loss": 2.43,
         "compression": 12345.6, "reached": 1, "n": 2}])
    paper = tables.paper_table(per_method, matched)
    display = tables.paper_display(paper, 2.8)
    assert list(display.columns) == ["method", "final val loss", "bytes/step/rank",
                                     "compression at matched loss"]
    assert list(display["final val loss"]) == ["2.431 ± 0.002", "2.600 (n=1)", "2.700 (n=2)"]
    assert list(display["bytes/step/rank"]) == ["3.37 MB", "11.6 kB", "0 B"]
    assert list(display["compression at matched loss"]) == ["1× (2/3)", "not reached",
                                                            "12,300× (1/2)"]
    # Several networks: a network column; no matched-loss table: no compression column.
    two = per_method.assign(scenario=["consumer", "10gbps", "consumer"])
    display = tables.paper_display(tables.paper_table(two), 2.8)
    assert list(display.columns) == ["method", "network", "final val loss", "bytes/step/rank"]
    assert tables.fmt_compression_cell(2.0, 1, 1, math.nan) == "—"
