"""`python3 -m analysis report` on logs made by the real app (see conftest.py)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tomllib

import h5py
import numpy as np
import pandas as pd
import pytest

from analysis.logs import read_run
from conftest import DILOCO_EVAL5, KILLED, PARTIAL, REPO, RUNS, _command, _env

PLOTS = ["loss_vs_step", "loss_vs_bytes", "loss_vs_bytes_frontier", "loss_vs_time", "pareto"]


def _table(group):
    """A log table's columns, cut to the shortest as the reader does (a live or killed writer
    may have flushed one column further than another)."""
    columns = {k: group[k][:] for k in group}
    rows = min(len(v) for v in columns.values())
    return {k: v[:rows] for k, v in columns.items()}


def _log(runs_dir, name):
    with h5py.File(runs_dir / name / "log.h5", "r", libver="latest", swmr=True) as f:
        return _table(f["steps"]), _table(f["eval"]), dict(f.attrs)


@pytest.fixture(scope="module")
def tables(report):
    out, _ = report
    return (pd.read_csv(out / "runs.csv").set_index("run"), pd.read_csv(out / "methods.csv"),
            pd.read_csv(out / "time_to_target.csv"))


def test_every_run_read_corrupt_skipped_with_a_message(report, tables):
    _, result = report
    runs, _, _ = tables
    assert sorted(runs.index) == sorted(list(RUNS) + [PARTIAL, KILLED])
    assert "corrupt.h5" in result.stderr and "skipping" in result.stderr
    assert "corrupt" not in " ".join(runs["path"])


def test_partial_run_flagged(runs_dir, tables):
    runs, methods, _ = tables
    for name in (PARTIAL, KILLED):
        row = runs.loc[name]
        assert row["status"] == "partial" and row["planned_steps"] == 100000
        steps, _, _ = _log(runs_dir, name)
        assert row["steps"] == len(steps["step"]) >= 12
    assert (runs.drop(index=[PARTIAL, KILLED])["status"] == "complete").all()
    dense = methods[(methods["method"] == "data_parallel/none")
                    & (methods["scenario"] == "consumer")].iloc[0]
    assert dense["n"] == 1 and dense["n_partial_excluded"] == 1


def test_labels_and_scenarios(tables):
    runs, _, _ = tables
    assert runs.loc["dense-consumer", "method"] == "data_parallel/none"
    assert runs.loc["topk-consumer", "method"] == "data_parallel/topk ratio=0.01"
    assert runs.loc["demo-consumer-s1", "method"] == "demo/dct_topk k=32"
    assert runs.loc["diloco-consumer", "method"] == "diloco H=10/none"
    assert runs.loc["dense-bf16-consumer", "method"] == "data_parallel/none bf16"
    # Two learning rates of one method are two methods.
    assert runs.loc["diloco5-lr1e-4-s1", "method"] == "diloco H=5/none lr=0.0001"
    # train.steps never splits a method: the seed cut short is the same method.
    assert runs.loc["quantize-short-s1", "method"] == runs.loc["quantize-consumer-s0", "method"] \
        == "data_parallel/quantize bits=8"
    assert runs.loc["dense-10gbps", "scenario"] == "10gbps"
    assert runs.loc["demo-consumer-s1", "seed"] == 1


def test_numbers_match_the_logs(runs_dir, tables, report):
    runs, _, _ = tables
    for name in list(RUNS) + [PARTIAL, KILLED]:
        steps, evals, attrs = _log(runs_dir, name)
        row = runs.loc[name]
        assert row["bytes_per_step"] == pytest.approx(steps["bytes_sent"].mean(), rel=1e-12)
        assert row["total_bytes_sent"] == pytest.approx(steps["bytes_sent"].sum(), rel=1e-12)
        n_params = int(attrs["model"].split("(")[1].split()[0])
        w = int(attrs["world_size"])
        dense = 2 * (w - 1) / w * 4 * n_params
        assert row["dense_bytes_per_step"] == pytest.approx(dense)
        assert row["compression_ratio"] == pytest.approx(dense / steps["bytes_sent"].mean())
        assert row["final_val_loss"] == pytest.approx(evals["val_loss"][-1])
        assert row["best_val_loss"] == pytest.approx(evals["val_loss"].min())
        assert row["final_simulated_s"] == pytest.approx(steps["simulated_s"][-1])
        assert row["comm_exposed_s"] == pytest.approx(steps["comm_exposed_s"].sum())
        assert row["comm_hidden_s"] == pytest.approx(steps["comm_hidden_s"].sum())
        assert tomllib.loads(attrs["config"])["network"]["scenario"] == row["scenario"]
    # The dense baseline sends what a ring all-reduce of fp32 parameters does.
    for name in ("dense-consumer", "dense-10gbps"):
        assert runs.loc[name, "compression_ratio"] == pytest.approx(1.0, rel=1e-3)
    assert runs.loc["demo-consumer-s0", "compression_ratio"] > 10
    assert runs.loc["topk-consumer", "compression_ratio"] > 10
    assert runs.loc["diloco-consumer", "compression_ratio"] > 5  # one exchange per 10 steps
    # Slower links take longer for the same dense training.
    assert runs.loc["dense-consumer", "final_simulated_s"] > runs.loc["dense-10gbps",
                                                                      "final_simulated_s"]


def test_time_to_target(runs_dir, tables, report):
    runs, methods, pivot = tables
    out, _ = report
    complete = runs[runs["status"] == "complete"]
    target = complete["final_val_loss"].max()  # the documented default
    assert f"target loss {target:.4g}" in (out / "summary.md").read_text()
    assert np.isfinite(complete["time_to_target_val_s"]).all()  # every complete run reaches it
    for name in RUNS:
        steps, evals, _ = _log(runs_dir, name)
        hit = np.flatnonzero(evals["val_loss"] <= target)[0]
        at = np.flatnonzero(steps["step"] == evals["step"][hit])[0]
        assert runs.loc[name, "time_to_target_val_s"] == pytest.approx(steps["simulated_s"][at])
        # The bytes to get there: every step through that one, mean over the ranks.
        assert runs.loc[name, "bytes_to_target_val"] == pytest.approx(steps["bytes_sent"][:at + 1].sum(axis=0).mean())
        hit = np.flatnonzero(steps["loss"] <= target)
        expected = steps["simulated_s"][hit[0]] if hit.size else math.nan
        assert runs.loc[name, "time_to_target_train_s"] == pytest.approx(expected, nan_ok=True)
    assert {"consumer", "10gbps"} <= set(pivot.columns)
    assert set(pivot["method"]) == set(methods["method"])


def test_method_means_over_seeds(tables):
    runs, methods, _ = tables
    demo = methods[(methods["method"] == "demo/dct_topk k=32")
                   & (methods["scenario"] == "consumer")].iloc[0]
    pair = runs.loc[["demo-consumer-s0", "demo-consumer-s1"]]
    assert demo["n"] == 2 and demo["seeds"] == "0 1"
    assert demo["final_val_loss_mean"] == pytest.approx(pair["final_val_loss"].mean())
    assert demo["final_val_loss_std"] == pytest.approx(pair["final_val_loss"].std(ddof=1))
    assert demo["bytes_per_step_mean"] == pytest.approx(pair["bytes_per_step"].mean())


def test_markdown_latex_and_plots(report):
    out, _ = report
    for stem in ("runs", "methods", "time_to_target"):
        md = (out / f"{stem}.md").read_text()
        tex = (out / f"{stem}.tex").read_text()
        assert "demo/dct_topk k=32" in md and "demo/dct\\_topk k=32" in tex
        assert "\\begin{tabular}" in tex and "\\bottomrule" in tex
    assert "partial" in (out / "runs.md").read_text()
    assert "| demo-killed | demo/dct_topk k=32 | 10gbps |" in (out / "runs.md").read_text()
    assert "±" in (out / "methods.md").read_text() and "$\\pm$" in (out / "methods.tex").read_text()
    summary = (out / "summary.md").read_text()
    assert "corrupt.h5" in summary
    for plot in PLOTS:
        for suffix in ("png", "pdf"):
            path = out / f"{plot}.{suffix}"
            assert path.exists() and path.stat().st_size > 1000, path


def test_target_option_and_single_file(runs_dir, tmp_path):
    out = tmp_path / "one"
    result = subprocess.run([sys.executable, "-m", "analysis", "report",
                             str(runs_dir / "dense-consumer" / "log.h5"), "--out", str(out),
                             "--target-loss", "0.5", "--no-plots"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 1 and runs["time_to_target_val_s"].isna().all()  # 0.5 nats: unreachable
    assert "not reached" in (out / "runs.md").read_text()


def test_nothing_readable_is_an_error(tmp_path):
    (tmp_path / "bad.h5").write_bytes(b"not hdf5")
    result = subprocess.run([sys.executable, "-m", "analysis", "report", str(tmp_path),
                             "--out", str(tmp_path / "out")], cwd=REPO, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1 and "bad.h5" in result.stderr


def test_plan_file_tabled_not_skipped(report, runs_dir, tmp_path):
    out, result = report
    planned = pd.read_csv(out / "planned.csv")
    assert list(planned["method"]) == ["dense", "demo"]
    assert (planned["world_size"] == 2).all() and (planned["model"] == "tiny").all()
    # dense: every fp32 parameter once in the payload, 2(W-1)/W of it on the wire at W = 2.
    dense = planned[planned["method"] == "dense"].iloc[0]
    assert dense["payload_bytes"] == 4 * dense["parameters"] == dense["wire_sent_bytes"]
    assert "plan.h5" not in result.stderr
    assert "Planned budgets" in (out / "summary.md").read_text()
    # A folder holding only a plan file still makes a report.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "plan.h5").write_bytes((runs_dir / "plan.h5").read_bytes())
    only = subprocess.run([sys.executable, "-m", "analysis", "report", str(alone), "--out",
                           str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True)
    assert only.returncode == 0, only.stderr
    assert "2 planned methods" in only.stdout


def test_counts_say_one_run_not_one_runs():
    from analysis.cli import _count
    assert _count(1, "run") == "1 run"
    assert _count(0, "run") == "0 runs"
    assert _count(3, "method/scenario group") == "3 method/scenario groups"


def test_a_resumed_run_is_measured_against_its_latest_target(tmp_path):
    """Started for 2 steps, resumed for 4: complete at 4/4, not '4/2' (the latest job's train.steps)."""
    lowcomm, mpiexec = os.environ.get("LOWCOMM"), os.environ.get("MPIEXEC", "mpiexec")
    if not lowcomm:
        pytest.skip("LOWCOMM is not set")
    out = tmp_path / "resumed"
    subprocess.run(_command(lowcomm, mpiexec, out, 2, []), check=True, env=_env(), capture_output=True)
    resume = [a for a in _command(lowcomm, mpiexec, out, 4, []) if a != "--force"] + ["--resume"]
    subprocess.run(resume, check=True, env=_env(), capture_output=True)
    run = read_run(out / "log.h5")
    assert run.planned_steps == 4 and not run.partial, (run.planned_steps, run.partial)


def test_ratios_read_in_full():
    """Three significant digits, and no exponent at a thousand and above (1,760×, not
    1.76e+03×), thousands separated."""
    from analysis.tables import fmt_ratio
    assert [fmt_ratio(x) for x in (0.5, 1.0, 20.34, 858.4, 999.6, 1763.2, 12345.6)] == \
        ["0.5×", "1×", "20.3×", "858×", "1,000×", "1,760×", "12,300×"]
    assert fmt_ratio(math.nan) == "—" and fmt_ratio(math.inf) == "∞"


# --- the simulated clock between DiLoCo's synchronisations -------------------------------------

def _silent(steps, step) -> bool:
    """Whether no rank sent anything in `step` (an inner step between two syncs)."""
    row = np.flatnonzero(steps["step"] == step)[0]
    return steps["bytes_sent"][row].sum() == 0


def test_the_simulated_clock_moves_between_diloco_syncs(runs_dir):
    """Every step's compute is on the clock at the end of that step, synchronising or not
    (format version 2; version 1 logs of DiLoCo held the clock still between syncs)."""
    steps, evals, _ = _log(runs_dir, DILOCO_EVAL5)
    # The run is what the test needs: syncs every 10 steps, evaluations between them too.
    assert sum(not _silent(steps, s) for s in steps["step"]) == 3
    assert any(_silent(steps, s) for s in evals["step"]) and not all(
        _silent(steps, s) for s in evals["step"])
    simulated = steps["simulated_s"]
    assert (np.diff(simulated) > 0).all(), f"the clock stands still: {simulated.tolist()}"


def test_time_to_target_between_syncs_from_the_log(runs_dir, tmp_path):
    """The report's time to a target that an evaluation between two syncs first reaches:
    steps/simulated_s of the step after which that evaluation ran, read from the log by hand."""
    steps, evals, _ = _log(runs_dir, DILOCO_EVAL5)
    val, at = evals["val_loss"], evals["step"]
    # An evaluation after a silent step that is lower than every earlier one: the first to
    # reach its own loss.
    between = [i for i in range(1, len(val)) if _silent(steps, at[i]) and val[i] < val[:i].min()]
    assert between, f"no evaluation between syncs sets a new low: {list(zip(at, val))}"
    target = float(val[between[0]])
    first = np.flatnonzero(val <= target)[0]
    row = np.flatnonzero(steps["step"] == at[first])[0]
    expected = float(steps["simulated_s"][row])

    out = tmp_path / "report"
    result = subprocess.run([sys.executable, "-m", "analysis", "report",
                             str(runs_dir / DILOCO_EVAL5 / "log.h5"), "--out", str(out),
                             "--target-loss", repr(target), "--no-plots"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    runs = pd.read_csv(out / "runs.csv")
    assert runs["target_step_val"].iloc[0] == at[first]
    assert runs["time_to_target_val_s"].iloc[0] == pytest.approx(expected, rel=1e-12)
    methods = pd.read_csv(out / "methods.csv")
    assert methods["time_to_target_val_s_mean"].iloc[0] == pytest.approx(expected, rel=1e-12)


# --- reading: numbers, the target's run, the paper table ---------------------------------------

def test_no_exponents_and_thousands_separated(report):
    """Every formatted table reads in full: 11,570, not 1.157e+04; a partial run's 100,000
    planned steps."""
    import re
    out, _ = report
    # Python writes an exponent with a sign and two digits (1.157e+04, 1e-05); the run names
    # (diloco5-lr1e-4-s0) are not numbers.
    exponent = re.compile(r"\de[+-]\d\d")
    for path in sorted(out.glob("*.md")) + sorted(out.glob("*.tex")):
        text = path.read_text()
        assert not exponent.search(text), (path.name, re.findall(r".{20}\de[+-]\d\d.{5}", text))
        assert "± 0 B" not in text and "$\\pm$ 0 B" not in text, path.name
    assert f"| {PARTIAL} |" in (out / "runs.md").read_text()
    assert "/100,000 |" in (out / "runs.md").read_text()


def test_the_summary_names_the_run_that_sets_the_target(report, tables):
    runs, _, _ = tables
    out, _ = report
    complete = runs[runs["status"] == "complete"]
    worst = complete["final_val_loss"].idxmax()
    summary = (out / "summary.md").read_text()
    assert (f"The default target is set by run `{worst}` (method "
            f"`{complete.loc[worst, 'method']}`, scenario `{complete.loc[worst, 'scenario']}`, "
            f"{complete.loc[worst, 'path']}).") in summary


def test_paper_table(report, tables):
    """paper.{md,tex}: method, final loss ± std (or n), bytes per step, compression at matched
    loss and at the report's target, read from the tables they come from."""
    from analysis.tables import fmt_ratio
    runs, methods, _ = tables
    out, _ = report
    paper = pd.read_csv(out / "paper.csv").set_index(["method", "scenario"])
    md = (out / "paper.md").read_text().splitlines()
    target = runs[runs["status"] == "complete"]["final_val_loss"].max()
    assert md[0] == ("| method | network | final val loss | bytes/step/rank | compression at "
                     f"matched loss | compression at loss {target:.4g} |")
    assert md[1] == "|---|---|---:|---:|---:|---:|"
    cells = {(line.split(" | ")[0].lstrip("| "), line.split(" | ")[1]): line.split(" | ")
             for line in md[2:]}
    demo = cells[("demo/dct_topk k=32", "consumer")]
    row = methods[(methods["method"] == "demo/dct_topk k=32") & (methods["scenario"] == "consumer")].iloc[0]
    assert demo[2] == f"{row['final_val_loss_mean']:.3f} ± {row['final_val_loss_std']:.3f}"
    assert cells[("data_parallel/topk ratio=0.01", "consumer")][2].endswith(" (n=1)")
    assert cells[("data_parallel/topk ratio=0.01", "consumer")][4] == "not reached"
    matched = pd.read_csv(out / "matched_loss.csv").set_index(["method", "scenario"])
    quantize = matched.loc[("data_parallel/quantize bits=8", "consumer")]
    assert cells[("data_parallel/quantize bits=8", "consumer")][4] == \
        f"{fmt_ratio(quantize['compression'])} (1/2)"
    assert paper.loc[("data_parallel/quantize bits=8", "consumer"), "matched_compression"] == \
        pytest.approx(quantize["compression"], rel=1e-12)
    tex = (out / "paper.tex").read_text()
    assert "\\begin{tabular}{llrrrr}" in tex and "demo/dct\\_topk k=32" in tex
