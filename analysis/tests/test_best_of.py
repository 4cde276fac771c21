"""--best-of KEY (analysis/best_of.py): end to end on the logs conftest.py makes with the real
app, and the ranking rules on runs built in memory as logs.py builds them."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from analysis.best_of import choose_best_of
from analysis.logs import Run
from analysis.methods import assign_labels
from conftest import KILLED, LR_SWEEP, PARTIAL, REPO, RUNS

FAMILY = "diloco H=5/none lr=*"
KEPT = "diloco H=5/none lr=0.001"
FP32 = "data_parallel/none lr=0.001"
BF16 = "data_parallel/none bf16 lr=0.001"


def _final_val_loss(folder: Path) -> float:
    with h5py.File(folder / "log.h5", "r", libver="latest", swmr=True) as f:
        return float(f["eval/val_loss"][-1])


def _report(inputs, out, *options):
    return subprocess.run([sys.executable, "-m", "analysis", "report", *map(str, inputs),
                           "--out", str(out), *options], cwd=REPO, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def best_report(runs_dir, tmp_path_factory):
    """The report of every run with --best-of schedule.lr, plots included."""
    out = tmp_path_factory.mktemp("best_of")
    result = _report([runs_dir], out, "--best-of", "schedule.lr")
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture(scope="module")
def finals(runs_dir):
    """schedule.lr -> the final validation losses of its DiLoCo H=5 runs, from the HDF5 files."""
    return {lr: [_final_val_loss(runs_dir / name) for name in names]
            for lr, names in LR_SWEEP.items()}


def test_the_rate_with_the_lower_mean_final_loss_is_chosen(best_report, finals):
    means = {lr: np.mean(losses) for lr, losses in finals.items()}
    best = min(means, key=means.get)
    # The larger rate wins, and by more than the seeds scatter: neither the tie rule (the
    # smaller value) nor seed noise can be what decides.
    assert best == max(LR_SWEEP)
    assert means[min(LR_SWEEP)] - means[best] > 5 * max(np.std(v) for v in finals.values())

    table = pd.read_csv(best_report / "best_of.csv", dtype={"value": str, "seeds": str})
    family = table[table["family"] == FAMILY].set_index("value")
    assert sorted(family.index) == ["0.0001", "0.001"]
    for lr, losses in finals.items():
        row = family.loc[f"{lr:g}"]
        assert row["final_val_loss_mean"] == pytest.approx(np.mean(losses), rel=1e-12)
        assert row["final_val_loss_std"] == pytest.approx(np.std(losses, ddof=1), rel=1e-9)
        assert (row["n"], row["seeds"], row["n_without_val_loss"]) == (2, "0 1", 0)
        assert row["chosen"] == (lr == best)
        assert row["method"] == f"diloco H=5/none lr={lr:g}"
    # Every other family ran one rate: one row each, chosen.
    others = table[table["family"] != FAMILY]
    assert others["chosen"].all()
    assert not others.duplicated(["family", "scenario", "world_size"]).any()
    assert (others["family"].str.endswith(" lr=*")).all()


def test_only_the_kept_runs_are_reported(best_report, runs_dir, finals):
    dropped = set(LR_SWEEP[1e-4])
    runs = pd.read_csv(best_report / "runs.csv").set_index("run")
    assert set(runs.index) == (set(RUNS) | {PARTIAL, KILLED}) - dropped
    assert (runs.loc[LR_SWEEP[1e-3], "method"] == KEPT).all()
    for stem in ("methods", "matched_loss", "time_to_target"):
        methods = set(pd.read_csv(best_report / f"{stem}.csv")["method"])
        assert {m for m in methods if m.startswith("diloco H=5/")} == {KEPT}, stem
        # Every method carries its rate, as --method-key schedule.lr would print it.
        assert all(" lr=" in m for m in methods), stem
    assert "lr=0.0001" not in (best_report / "summary.md").read_text().split("## Per method")[1]
    # The default target is the worst final loss of the kept complete runs; the dropped runs
    # ended above it, so a target taken over every run would differ.
    complete = runs[runs["status"] == "complete"]
    target = complete["final_val_loss"].max()
    assert min(finals[1e-4]) > target
    assert f"target loss {target:.4g}" in (best_report / "summary.md").read_text()
    for plot in ("loss_vs_step", "loss_vs_bytes_frontier", "pareto"):
        assert (best_report / f"{plot}.png").stat().st_size > 1000


def test_the_default_baseline_is_the_fp32_twin(best_report, runs_dir):
    matched = pd.read_csv(best_report / "matched_loss.csv")
    assert (matched["baseline"] == FP32).all() and BF16 in set(matched["method"])
    # Its target: the fp32 runs' mean final validation loss (one complete consumer run).
    consumer = matched[matched["scenario"] == "consumer"]
    assert consumer["target_val_loss"].iloc[0] == pytest.approx(
        _final_val_loss(runs_dir / "dense-consumer"), rel=1e-12)
    summary = (best_report / "summary.md").read_text()
    assert (f"## Compression at matched loss (baseline `{FP32}`, default: the AdamW dense "
            f"all-reduce (data_parallel, compressor none) with an fp32 wire; `{BF16}` differs "
            "from it only in the wire's value type (compressor.none.value_type), apart from "
            "schedule.lr, chosen per method by --best-of)") in summary


def test_summary_section_and_table_files(best_report):
    summary = (best_report / "summary.md").read_text()
    assert "## Best of `schedule.lr` (--best-of)" in summary
    assert "The choice is made on the same seeds the tables then report" in summary
    assert summary.index("## Best of") < summary.index("## Per method")
    md = (best_report / "best_of.md").read_text()
    line = next(line for line in md.splitlines() if line.startswith(f"| {FAMILY} |")
                and "| 0.001 |" in line)
    assert line.endswith(f"| 2 (0 1) | yes | {KEPT} |")
    assert "\\begin{tabular}" in (best_report / "best_of.tex").read_text()


def test_a_duplicate_method_key_and_refusals(runs_dir, tmp_path):
    sweep = [runs_dir / name for names in LR_SWEEP.values() for name in names]
    result = _report(sweep, tmp_path / "dup", "--no-plots", "--best-of", "schedule.lr",
                     "--method-key", "schedule.lr")
    assert result.returncode == 0, result.stderr
    assert set(pd.read_csv(tmp_path / "dup" / "runs.csv")["method"]) == {KEPT}  # lr= once

    for i, (options, message) in enumerate((
            (["--best-of", "schedule.lrr"], "no run's config has 'schedule.lrr'"),
            (["--best-of", "seed"], "never tells methods apart"),
            (["--best-of", "schedule.lr", "--baseline", "diloco H=5/none lr=0.0001"],
             "left out"))):
        out = tmp_path / f"refused{i}"
        result = _report(sweep, out, "--no-plots", *options)
        assert result.returncode == 2 and message in result.stderr, (options, result.stderr)
        assert not (out / "summary.md").exists()


# --- in memory: the ranking rules --------------------------------------------------------------

def _run(lr, seed, final, scenario="consumer", partial=False, inner_steps=5):
    """A 2-rank DiLoCo run evaluated once (final = None: never evaluated)."""
    config = {"seed": seed, "strategy": {"name": "diloco", "diloco": {"inner_steps": inner_steps}},
              "compressor": {"name": "none"}, "schedule": {"lr": lr},
              "network": {"scenario": scenario}}
    steps = pd.DataFrame({"step": np.arange(10), "loss": np.full(10, 5.0)})
    evals = pd.DataFrame({"step": [9] if final is not None else [],
                          "val_loss": [final] if final is not None else []})
    return Run(path=Path(f"{lr}-{seed}-{scenario}-{inner_steps}.h5"), attrs={"seed": seed},
               config=config, steps=steps, per_rank={}, evals=evals, world_size=2,
               n_params=None, planned_steps=10, partial=partial)


def _choose(runs):
    assign_labels(runs, ["schedule.lr"])
    choice = choose_best_of(runs, "schedule.lr")
    return choice, {(row["family"], row["scenario"], row["value"]): row
                    for _, row in choice.table.iterrows()}


def test_ties_go_to_the_smaller_value_and_failures_rank_last():
    runs = [
        # consumer: equal means (4.0) at 0.01 and 0.001: the smaller value.
        _run(0.01, 0, 3.0), _run(0.01, 1, 5.0), _run(0.001, 0, 4.0), _run(0.001, 1, 4.0),
        # 10gbps: 0.01's seed 1 has no validation loss, so 0.01 ranks last despite seed 0's
        # 1.0; 0.1 has only a partial run (a low loss at an earlier step) and ranks last too.
        _run(0.01, 0, 1.0, "10gbps"), _run(0.01, 1, None, "10gbps"),
        _run(0.1, 0, 0.5, "10gbps", partial=True), _run(0.001, 0, 4.5, "10gbps"),
        # Another family (H=10) is chosen on its own: its 0.1 is best there.
        _run(0.1, 0, 2.0, inner_steps=10), _run(0.001, 0, 3.0, inner_steps=10),
    ]
    choice, rows = _choose(runs)
    h5, h10 = "diloco H=5/none lr=*", "diloco H=10/none lr=*"
    chosen = {key[:2]: key[2] for key, row in rows.items() if row["chosen"]}
    assert chosen == {(h5, "consumer"): "0.001", (h5, "10gbps"): "0.001", (h10, "consumer"): "0.1"}
    assert rows[(h5, "consumer", "0.01")]["final_val_loss_mean"] == 4.0
    assert math.isinf(rows[(h5, "10gbps", "0.01")]["score"])
    assert rows[(h5, "10gbps", "0.01")]["n_without_val_loss"] == 1
    assert rows[(h5, "10gbps", "0.1")]["n"] == 0 and math.isinf(rows[(h5, "10gbps", "0.1")]["score"])
    assert sorted(run.label for run in choice.kept) == sorted(
        ["diloco H=5/none lr=0.001"] * 3 + ["diloco H=10/none lr=0.1"])
    assert len(choice.kept) + len(choice.dropped) == len(runs)

    # Every value failing alike: the smaller one.
    choice, rows = _choose([_run(0.01, 0, None), _run(0.001, 0, math.nan)])
    assert [run.label for run in choice.kept] == ["diloco H=5/none lr=0.001"]


def test_a_choice_at_the_edge_of_three_values_is_marked():
    runs = [_run(0.001, 0, 3.0), _run(0.003, 0, 2.0), _run(0.01, 0, 1.0),  # best: the largest
            _run(0.001, 0, 3.0, inner_steps=10), _run(0.003, 0, 1.0, inner_steps=10),
            _run(0.01, 0, 2.0, inner_steps=10),  # best: the middle one
            _run(0.001, 0, 2.0, inner_steps=20), _run(0.01, 0, 1.0, inner_steps=20)]  # two only
    choice, rows = _choose(runs)
    edge = {key[0]: row["at_edge"] for key, row in rows.items() if row["chosen"]}
    assert edge == {"diloco H=5/none lr=*": True, "diloco H=10/none lr=*": False,
                    "diloco H=20/none lr=*": False}
    assert not any(row["at_edge"] for row in rows.values() if not row["chosen"])
    from analysis.best_of import best_of_display
    marks = set(best_of_display(choice.table)["chosen"])
    assert marks == {"", "yes", "yes, the edge of the values tried"}
