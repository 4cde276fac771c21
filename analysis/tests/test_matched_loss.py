"""Compression at matched loss (analysis/matched_loss.py) and the frontier plot: on the logs
conftest.py makes with the real app, and on runs built in memory as logs.py builds them."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from analysis.logs import Run
from analysis.matched_loss import BaselineError, choose_baseline, matched_display, \
    matched_loss_table
from analysis import tables
from analysis.plots import loss_frontier
from conftest import DILOCO_EVAL5, LR_SWEEP, REPO

BASELINE = "data_parallel/none"
BF16 = "data_parallel/none bf16"  # the baseline's twin with a bf16 wire
QUANTIZE = "data_parallel/quantize bits=8"

# (method, scenario) -> the complete runs its means use; the killed DeMo run is partial and
# dense-partial too, so both are left out where their groups have complete runs.
GROUPS = {
    (BASELINE, "consumer"): ["dense-consumer"],
    (BASELINE, "10gbps"): ["dense-10gbps"],
    ("demo/dct_topk k=32", "consumer"): ["demo-consumer-s0", "demo-consumer-s1"],
    ("demo/dct_topk k=32", "10gbps"): ["demo-10gbps"],
    ("data_parallel/topk ratio=0.01", "consumer"): ["topk-consumer"],
    ("diloco H=10/none", "consumer"): ["diloco-consumer", DILOCO_EVAL5],
    (QUANTIZE, "consumer"): ["quantize-consumer-s0", "quantize-short-s1"],
    (BF16, "consumer"): ["dense-bf16-consumer"],
    ("diloco H=5/none lr=0.001", "consumer"): LR_SWEEP[1e-3],
    ("diloco H=5/none lr=0.0001", "consumer"): LR_SWEEP[1e-4],
}


def _log(folder: Path):
    """steps and eval columns, and the world size, straight from the HDF5 file."""
    with h5py.File(folder / "log.h5", "r", libver="latest", swmr=True) as f:
        steps = {k: f["steps"][k][:] for k in f["steps"]}
        evals = {k: f["eval"][k][:] for k in f["eval"]}
        return steps, evals, int(f.attrs["world_size"])


def _to_target(folder: Path, target: float):
    """(bytes per rank, bytes per token) through the first evaluation at or below `target`, or
    None where no evaluation got there."""
    steps, evals, world = _log(folder)
    hit = np.flatnonzero(evals["val_loss"] <= target)
    if not hit.size:
        return None
    through = np.flatnonzero(steps["step"] == evals["step"][hit[0]])[0] + 1
    per_rank = steps["bytes_sent"][:through].sum(axis=0)  # [W]: each rank's bytes
    tokens = steps["tokens"][:through].sum()  # all ranks'
    return per_rank.mean(), per_rank.sum() / tokens


def _expected(runs_dir: Path, baseline_dirs: list[Path], member_dirs: list[Path],
              target: float | None = None) -> dict:
    """The row the table should hold, recomputed from the logs; at the baseline's mean final
    validation loss unless `target` is given."""
    if target is None:
        target = np.mean([_log(d)[1]["val_loss"][-1] for d in baseline_dirs])
    base = [r for r in (_to_target(d, target) for d in baseline_dirs) if r is not None]
    own = [r for r in (_to_target(d, target) for d in member_dirs) if r is not None]
    row = {"target_val_loss": target, "n": len(member_dirs), "reached": len(own)}
    if own:
        base_bytes, base_per_token = np.mean([b for b, _ in base]), np.mean([t for _, t in base])
        row["bytes_to_target_mean"] = np.mean([b for b, _ in own])
        row["bytes_per_token_mean"] = np.mean([t for _, t in own])
        row["compression"] = base_bytes / row["bytes_to_target_mean"]
        row["compression_per_token"] = base_per_token / row["bytes_per_token_mean"]
    return row


@pytest.fixture(scope="module")
def matched(report):
    out, _ = report
    return pd.read_csv(out / "matched_loss.csv", dtype={"seeds_reached": str}).set_index(
        ["method", "scenario"])


def test_default_baseline_and_numbers_from_the_logs(runs_dir, report, matched):
    out, result = report
    assert set(matched.index) == set(GROUPS)
    assert (matched["baseline"] == BASELINE).all()
    for (method, scenario), names in GROUPS.items():
        expected = _expected(runs_dir, [runs_dir / n for n in GROUPS[(BASELINE, scenario)]],
                             [runs_dir / n for n in names])
        row = matched.loc[(method, scenario)]
        assert row["target_val_loss"] == pytest.approx(expected["target_val_loss"], rel=1e-12)
        assert (row["n"], row["reached"]) == (expected["n"], expected["reached"]), method
        if expected["reached"]:
            for column in ("bytes_to_target_mean", "bytes_per_token_mean", "compression",
                           "compression_per_token"):
                assert row[column] == pytest.approx(expected[column], rel=1e-12), (method, column)
            # The baseline's wire is fp32: a bf16 all-reduce would have sent half its bytes.
            assert row["compression_vs_bf16"] == pytest.approx(expected["compression"] / 2)
            assert row["compression_per_token_vs_bf16"] == pytest.approx(
                expected["compression_per_token"] / 2)
        else:
            assert math.isnan(row["compression"]) and math.isnan(row["bytes_to_target_mean"])
    # The cases the table exists for, present in these logs: a method with one seed each way,
    # one that never gets there, and the baseline itself at 1x.
    quantize = matched.loc[(QUANTIZE, "consumer")]
    assert (quantize["n"], quantize["reached"], quantize["seeds_reached"]) == (2, 1, "0")
    assert quantize["compression"] > 1
    # Twice the batch: per token differs from per byte total, so the tokens are really used.
    assert quantize["compression_per_token"] != pytest.approx(quantize["compression"], rel=0.01)
    assert matched.loc[("data_parallel/topk ratio=0.01", "consumer"), "reached"] == 0
    assert matched.loc[(BASELINE, "consumer"), "compression"] == pytest.approx(1.0)


def test_at_the_report_target_loss(runs_dir, report, matched):
    """The looser target: the report's own (the worst final loss of the complete runs), which
    every complete run reaches, with each row recomputed from the logs at that loss."""
    out, _ = report
    looser = pd.read_csv(out / "matched_loss_at_target.csv",
                         dtype={"seeds_reached": str}).set_index(["method", "scenario"])
    assert set(looser.index) == set(GROUPS)
    target = looser["target_val_loss"].iloc[0]
    assert (looser["target_val_loss"] == target).all()
    assert target > matched["target_val_loss"].max()  # looser than every baseline final loss
    for (method, scenario), names in GROUPS.items():
        expected = _expected(runs_dir, [runs_dir / n for n in GROUPS[(BASELINE, scenario)]],
                             [runs_dir / n for n in names], target)
        row = looser.loc[(method, scenario)]
        assert (row["n"], row["reached"]) == (expected["n"], expected["reached"]), method
        assert row["reached"] == row["n"], method  # complete runs all reach the worst final
        for column in ("bytes_to_target_mean", "compression", "compression_per_token"):
            assert row[column] == pytest.approx(expected[column], rel=1e-12), (method, column)
    # top-k never reaches the baseline's final loss, and has a number here.
    assert math.isfinite(looser.loc[("data_parallel/topk ratio=0.01", "consumer"), "compression"])
    summary = (out / "summary.md").read_text()
    assert f"## Compression at the target loss {target:.4g} (default: the worst" in summary
    assert f"| {tables.fmt_num(target)} |" in (out / "matched_loss_at_target.md").read_text()


def test_table_text_and_summary(report, matched):
    out, result = report
    md = (out / "matched_loss.md").read_text()
    lines = {line.split(" | ")[0].lstrip("| "): line for line in md.splitlines()[2:]}
    assert "| not reached (0/1) |" in lines["data_parallel/topk ratio=0.01"]
    assert f"| {matched.loc[(QUANTIZE, 'consumer'), 'compression']:.3g}× (1/2) |" in lines[QUANTIZE]
    assert "| 1× (1/1) | 1× | 0.5× | 0.5× |" in lines[f"{BASELINE} (baseline)"]
    assert "matched loss" in (out / "matched_loss.tex").read_text()
    summary = (out / "summary.md").read_text()
    assert f"## Compression at matched loss (baseline `{BASELINE}`, default" in summary
    assert "sends fp32 gradients" in summary and "2/4" in summary
    # Beside its bf16 twin, the fp32 all-reduce is the default, and the summary says why.
    assert (f"with an fp32 wire; `{BF16}` differs from it only in the wire's value type "
            "(compressor.none.value_type)") in summary
    assert "--baseline" not in result.stderr  # a default was found: no note
    for suffix in ("png", "pdf"):
        path = out / f"loss_vs_bytes_frontier.{suffix}"
        assert path.exists() and path.stat().st_size > 1000


def _report(inputs, out, *options):
    return subprocess.run([sys.executable, "-m", "analysis", "report", *map(str, inputs),
                           "--out", str(out), "--no-plots", *options], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_a_bf16_baseline_is_not_halved(runs_dir, tmp_path):
    inputs = [runs_dir / name for name in ("dense-consumer", "quantize-consumer-s0",
                                           "quantize-short-s1", "dense-bf16-consumer")]
    # Two dense AdamW all-reduces that differ only in the wire: the fp32 one by default.
    result = _report(inputs, tmp_path / "default")
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "default" / "matched_loss.csv").set_index("method")
    assert (table["baseline"] == BASELINE).all() and BF16 in table.index
    assert "with an fp32 wire" in (tmp_path / "default" / "summary.md").read_text()

    result = _report(inputs, tmp_path / "bf16", "--baseline", BF16)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "bf16" / "matched_loss.csv").set_index("method")
    assert "already sends bf16" in (tmp_path / "bf16" / "summary.md").read_text()
    expected = _expected(runs_dir, [runs_dir / "dense-bf16-consumer"],
                         [runs_dir / "quantize-consumer-s0", runs_dir / "quantize-short-s1"])
    row = table.loc[QUANTIZE]
    assert row["reached"] == expected["reached"] == 1
    assert row["compression"] == pytest.approx(expected["compression"], rel=1e-12)
    assert row["compression_vs_bf16"] == pytest.approx(row["compression"], rel=1e-12)
    # What makes the two baselines differ: the bf16 wire sends half of fp32's bytes per step.
    steps, _, _ = _log(runs_dir / "dense-bf16-consumer")
    dense_steps, _, _ = _log(runs_dir / "dense-consumer")
    assert steps["bytes_sent"][0, 0] * 2 == dense_steps["bytes_sent"][0, 0]


def test_a_baseline_that_names_no_method_is_an_error(runs_dir, tmp_path):
    result = _report([runs_dir / "topk-consumer"], tmp_path / "out", "--baseline", "adamw")
    assert result.returncode == 2
    assert "'adamw' is not a method" in result.stderr and "data_parallel/topk" in result.stderr
    # Without a dense all-reduce among the runs there is no default: a note, the rest reported.
    result = _report([runs_dir / "topk-consumer"], tmp_path / "none")
    assert result.returncode == 0 and "no method is AdamW with a dense all-reduce" in result.stderr
    assert (tmp_path / "none" / "methods.csv").exists()


# --- in memory: runs built as logs.py builds them --------------------------------------------

def _run(label, seed, val_losses, bytes_per_step, scenario="consumer", tokens_per_step=100,
         value_type="fp32", strategy="data_parallel", compressor="none", partial=False):
    """A 2-rank run of len(val_losses) * 10 steps, evaluated after steps 9, 19, ..."""
    rows = 10 * len(val_losses)
    steps = pd.DataFrame({"step": np.arange(rows), "loss": np.full(rows, 9.0),
                          "tokens": np.full(rows, tokens_per_step),
                          "simulated_s": np.arange(1, rows + 1, dtype=float)})
    evals = pd.DataFrame({"step": np.arange(9, rows, 10), "val_loss": val_losses})
    config = {"seed": seed, "strategy": {"name": strategy}, "network": {"scenario": scenario},
              "compressor": {"name": compressor, "none": {"value_type": value_type}},
              "optimizer": {"name": "adamw"}}
    run = Run(path=Path(f"{label}-{seed}-{scenario}.h5"), attrs={"seed": seed}, config=config,
              steps=steps, per_rank={"bytes_sent": np.full((rows, 2), bytes_per_step)},
              evals=evals, world_size=2, n_params=None, planned_steps=rows, partial=partial)
    run.label = label
    return run


def test_in_memory_seeds_each_way_and_bf16_wire():
    runs = [
        # Baseline: finals 2.0 and 2.2, target 2.1; seed 0 first at or below it after step 19.
        _run("dense", 0, [3.0, 2.05, 2.0], 1000),
        _run("dense", 1, [3.0, 2.3, 2.2], 1000),
        # Seed 0 gets there after step 9, seed 1 never: 1 of 2, and the mean over seed 0 only.
        _run("sparse", 0, [2.1, 2.5, 2.6], 50, tokens_per_step=400, compressor="topk"),
        _run("sparse", 1, [2.9, 2.8, 2.7], 50, tokens_per_step=400, compressor="topk"),
        _run("slow", 0, [4.0, 3.9, 3.8], 10),
        # A partial run that got there does not count beside a complete one.
        _run("slow", 1, [2.0], 10, partial=True),
        _run("sparse", 0, [2.0], 50, scenario="10gbps", compressor="topk"),  # no baseline there
    ]
    table, notes = matched_loss_table(runs, "dense")
    table = table.set_index(["method", "scenario"])
    base = table.loc[("dense", "consumer")]
    assert base["target_val_loss"] == pytest.approx(2.1)
    assert (base["n"], base["reached"], base["seeds_reached"]) == (2, 1, "0")
    assert base["bytes_to_target_mean"] == 20 * 1000
    assert base["bytes_per_token_mean"] == pytest.approx(20 * 1000 * 2 / (20 * 100))
    sparse = table.loc[("sparse", "consumer")]
    assert (sparse["n"], sparse["reached"]) == (2, 1)
    assert sparse["bytes_to_target_mean"] == 10 * 50
    assert sparse["compression"] == pytest.approx(20000 / 500)
    # Per token: 20 B/token (20 kB over 2000 tokens, both ranks') against 1000 B over 4000.
    assert sparse["compression_per_token"] == pytest.approx(20 / 0.25)
    assert sparse["compression_vs_bf16"] == pytest.approx(20000 / 2 / 500)
    slow = table.loc[("slow", "consumer")]
    assert (slow["n"], slow["reached"]) == (1, 0) and math.isnan(slow["compression"])
    assert math.isnan(table.loc[("sparse", "10gbps"), "target_val_loss"])
    assert any("no `dense` run on network `10gbps`" in note for note in notes)

    display = matched_display(table.reset_index()).set_index(["method", "scenario"])
    assert display.loc[("sparse", "consumer"), "compression at matched loss"] == "40× (1/2)"
    assert display.loc[("slow", "consumer"), "compression at matched loss"] == "not reached (0/1)"
    assert display.loc[("sparse", "10gbps"), "compression at matched loss"] == "no target"
    assert display.loc[("dense (baseline)", "consumer"), "vs bf16 all-reduce"] == "0.5×"

    # One looser loss for every scenario: both baseline seeds and both sparse seeds reach 2.7.
    looser, notes = matched_loss_table(runs, "dense", target_loss=2.7)
    looser = looser.set_index(["method", "scenario"])
    assert looser.loc[(slice(None), "consumer"), "target_val_loss"].eq(2.7).all()
    assert looser.loc[("dense", "consumer"), "bytes_to_target_mean"] == 20 * 1000
    sparse = looser.loc[("sparse", "consumer")]
    assert (sparse["reached"], sparse["bytes_to_target_mean"]) == (2, (10 + 30) * 50 / 2)
    assert sparse["compression"] == pytest.approx(20000 / 1000)
    assert looser.loc[("slow", "consumer"), "reached"] == 0
    # A loss the baseline itself never reaches leaves every compression blank, with a note.
    lowest, notes = matched_loss_table(runs, "dense", target_loss=1.5)
    assert lowest["compression"].isna().all()
    assert any("`dense` on `consumer` with 2 ranks never reaches 1.5" in n for n in notes)

    # The same baseline with a bf16 wire: its bytes are taken as they are.
    for run in runs[:2]:
        run.config["compressor"]["none"]["value_type"] = "bf16"
    table, notes = matched_loss_table(runs, "dense")
    row = table.set_index(["method", "scenario"]).loc[("sparse", "consumer")]
    assert row["compression_vs_bf16"] == pytest.approx(row["compression"])
    assert any("already sends bf16" in note for note in notes)
    # A baseline that is no dense all-reduce has no bf16 comparison at all.
    table, notes = matched_loss_table(runs, "sparse")
    assert table["compression_vs_bf16"].isna().all()
    assert any("not a dense all-reduce" in note for note in notes)


def test_choose_baseline():
    dense = _run("data_parallel/none", 0, [2.0], 1)
    bf16 = _run("data_parallel/none bf16", 0, [2.0], 1, value_type="bf16")
    topk = _run("data_parallel/topk ratio=0.01", 0, [2.0], 1, compressor="topk")
    demo = _run("demo/dct_topk k=32", 0, [2.0], 1, strategy="demo")
    assert choose_baseline([dense, topk, demo], None)[0] == "data_parallel/none"
    # An fp32 all-reduce and its bf16 twin: the fp32 one, saying why.
    label, note = choose_baseline([dense, bf16, topk], None)
    assert label == "data_parallel/none" and note.startswith("default:")
    assert "`data_parallel/none bf16` differs from it only in the wire's value type" in note
    label, note = choose_baseline([topk, demo], None)
    assert label is None and "no method" in note
    assert choose_baseline([dense, bf16], "data_parallel/none bf16") == \
        ("data_parallel/none bf16", "given (--baseline)")
    with pytest.raises(BaselineError):
        choose_baseline([dense], "data_parallel/nonе")  # a Cyrillic е: not the label

    # Twins in all but the wire only: another difference leaves the choice to --baseline.
    other_lr = _run("data_parallel/none bf16 lr=0.003", 0, [2.0], 1, value_type="bf16")
    other_lr.config["schedule"] = {"lr": 0.003}
    label, note = choose_baseline([dense, other_lr], None)
    assert label is None and "2 methods" in note and "--baseline" in note
    # ... unless it is the key --best-of chose per method.
    label, note = choose_baseline([dense, other_lr], None, tuned_keys=("schedule.lr",))
    assert label == "data_parallel/none"
    assert note.endswith("value type (compressor.none.value_type), apart from schedule.lr, "
                         "chosen per method by --best-of")
    # Two fp32 all-reduces (two learning rates): no single fp32 one to take.
    fp32_lr = _run("data_parallel/none lr=0.003", 0, [2.0], 1)
    fp32_lr.config["schedule"] = {"lr": 0.003}
    label, note = choose_baseline([dense, fp32_lr, bf16], None)
    assert label is None and "3 methods" in note


def test_loss_frontier():
    # Curve a: cheap but stalls at 3.0; curve b: dearer, goes lower; c never sets the front.
    a = (np.array([1.0, 2.0, 4.0]), np.array([5.0, 3.0, 3.5]))
    b = (np.array([3.0, 6.0, 12.0]), np.array([4.0, 2.5, 2.0]))
    c = (np.array([0.0, 8.0]), np.array([1.0, 2.8]))  # 0 bytes cannot be drawn on a log axis
    x, y = loss_frontier([a, b, c])
    assert list(x) == [1.0, 2.0, 6.0, 12.0] and list(y) == [5.0, 3.0, 2.5, 2.0]
    # For each loss, the fewest bytes that reached it: 3.0 after 2 bytes (a), 2.5 after 6 (b).
    assert x[np.flatnonzero(y <= 3.0)[0]] == 2.0 and x[np.flatnonzero(y <= 2.2)[0]] == 12.0
    assert [len(v) for v in loss_frontier([])] == [0, 0]
