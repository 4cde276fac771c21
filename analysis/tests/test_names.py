"""Method names from experiment files (the log's attribute `method`, the config's
experiment.method) as the report's labels: in memory, on logs written by hand
(tests/synthetic.py), and on logs the real app made (conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from analysis.best_of import choose_best_of
from analysis.logs import Run, read_run
from analysis.matched_loss import BaselineError, choose_baseline
from analysis.methods import assign_labels, method_labels
from conftest import LR_SWEEP, REPO, _command, _env
from synthetic import config, to_toml, write_log


def _run(cfg, final=5.0, attrs=None, world=2, partial=False):
    """A run evaluated once after step 9 (final: its validation loss)."""
    steps = pd.DataFrame({"step": np.arange(10), "loss": np.full(10, 6.0)})
    evals = pd.DataFrame({"step": [9], "val_loss": [final]})
    attrs = {"seed": cfg["seed"], **(attrs or {})}
    return Run(path=Path(f"{id(cfg)}.h5"), attrs=attrs, config=cfg, steps=steps,
               per_rank={}, evals=evals, world_size=world, n_params=None, planned_steps=10,
               partial=partial)


# --- labels -------------------------------------------------------------------------------------

def test_the_name_replaces_the_label_and_keys_keep_it():
    named = _run(config("demo", method="psyche"))
    attribute = _run(config("demo", method="from-config"), attrs={"method": "from-attribute"})
    unnamed = _run(config("diloco", strategy__diloco__inner_steps=10))  # experiment.method = ""
    runs = [named, attribute, unnamed]
    assert method_labels(runs) == ["psyche", "from-attribute", "diloco H=10/none"]
    assign_labels(runs, names=False)
    assert [run.label for run in runs] == ["demo/dct_topk k=32"] * 2 + ["diloco H=10/none"]
    assign_labels(runs)
    assert [run.label for run in runs] == ["psyche", "from-attribute", "diloco H=10/none"]
    # The label from the keys is kept beside the name (--baseline finds methods by it).
    assert [run.key_label for run in runs] == ["demo/dct_topk k=32"] * 2 + ["diloco H=10/none"]
    assert named.method_name == "psyche" and unnamed.method_name is None


def test_one_name_over_two_rates_is_two_methods_and_seeds_stay_one():
    runs = [_run(config("demo", lr=lr, seed=seed, method="psyche"))
            for lr in (1e-3, 3e-3) for seed in (0, 1)]
    assign_labels(runs)
    assert [run.label for run in runs] == ["psyche lr=0.001"] * 2 + ["psyche lr=0.003"] * 2


def test_two_methods_under_one_name_do_not_merge():
    topk = _run(config(compressor="topk", compressor__topk__ratio=0.01, method="compressed"))
    quantize = _run(config(compressor="quantize", compressor__quantize__bits=8,
                           method="compressed"))
    wide = _run(config(method="dense"), world=4)
    narrow = _run(config(method="dense"), world=2)
    runs = [topk, quantize, wide, narrow]
    assign_labels(runs)
    assert topk.label != quantize.label
    assert topk.label.startswith("compressed ") and quantize.label.startswith("compressed ")
    assert "name=topk" in topk.label and "name=quantize" in quantize.label
    assert (wide.label, narrow.label) == ("dense W=4", "dense W=2")


def test_the_name_never_splits_labels_from_the_keys():
    """Two names for one configuration (two experiment files) are two methods by name, and one
    by keys: experiment.method is not a setting."""
    runs = [_run(config(method="adamw")), _run(config(method="dense", seed=1))]
    assign_labels(runs, names=False)
    assert [run.label for run in runs] == ["data_parallel/none"] * 2
    assign_labels(runs)
    assert [run.label for run in runs] == ["adamw", "dense"]


# --- --best-of and --baseline -------------------------------------------------------------------

def _sweep(name_of):
    """A DeMo method at two rates (1e-3 ends lower) over two seeds, and an AdamW baseline at
    both; name_of(method, lr) is each run's experiment.method."""
    runs = []
    for lr, demo_final, dense_final in ((1e-3, 4.0, 3.0), (3e-3, 4.5, 3.5)):
        for seed in (0, 1):
            runs.append(_run(config("demo", lr=lr, seed=seed, method=name_of("psyche", lr)),
                             final=demo_final + 0.01 * seed))
            runs.append(_run(config(lr=lr, seed=seed, method=name_of("adamw", lr)),
                             final=dense_final + 0.01 * seed))
    return runs


@pytest.mark.parametrize("name_of, psyche, adamw", [
    # One name for every rate: the rate joins the label.
    (lambda method, lr: method, "psyche lr=*", "adamw lr=*"),
    # A name per rate (frontier.toml's adamw-fp32-lr1e-3 style): still one family per method.
    (lambda method, lr: f"{method}-lr{lr:g}", "demo/dct_topk k=32 lr=*", "data_parallel/none lr=*"),
])
def test_best_of_chooses_within_a_method_however_it_is_named(name_of, psyche, adamw):
    runs = _sweep(name_of)
    assign_labels(runs, ["schedule.lr"])
    choice = choose_best_of(runs, "schedule.lr")
    assert sorted(choice.table["family"].unique()) == sorted([psyche, adamw])
    assert len(choice.table) == 4  # two families, two values each
    kept = {run.label for run in choice.kept}
    assert kept == {f"{name_of('psyche', 1e-3)} lr=0.001", f"{name_of('adamw', 1e-3)} lr=0.001"}
    assert all(run.config["schedule"]["lr"] == 1e-3 for run in choice.kept)
    assert len(choice.dropped) == 4
    # The baseline by its name (or its label from the keys), among the kept runs.
    for requested in (name_of("adamw", 1e-3), "data_parallel/none lr=0.001"):
        label, how = choose_baseline(choice.kept, requested, tuned_keys=("schedule.lr",))
        assert label == f"{name_of('adamw', 1e-3)} lr=0.001", requested
        assert how.startswith("given (--baseline")
    # The default baseline is found by the configuration, not the name.
    label, _ = choose_baseline(choice.kept, None, tuned_keys=("schedule.lr",))
    assert label == f"{name_of('adamw', 1e-3)} lr=0.001"


def test_a_baseline_name_that_picks_out_no_single_method_is_refused():
    runs = [_run(config(lr=lr, method="adamw")) for lr in (1e-3, 3e-3)]
    assign_labels(runs)
    assert {run.label for run in runs} == {"adamw lr=0.001", "adamw lr=0.003"}
    with pytest.raises(BaselineError, match="names 2 methods"):
        choose_baseline(runs, "adamw")
    with pytest.raises(BaselineError, match="is not a method"):
        choose_baseline(runs, "adam")
    assert choose_baseline(runs, "adamw lr=0.003")[0] == "adamw lr=0.003"


# --- the report on logs written by hand ---------------------------------------------------------

def _report(inputs, out, *options):
    return subprocess.run([sys.executable, "-m", "analysis", "report", *map(str, inputs),
                           "--out", str(out), "--no-plots", *options], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def named_logs(tmp_path_factory):
    """Format version 2 logs with `method` (psyche at two rates, adamw), one whose name is only
    in its config's experiment.method, and a version 1 log without a name."""
    root = tmp_path_factory.mktemp("named")
    for seed in (0, 1):
        write_log(root / f"adamw-s{seed}" / "log.h5", config(seed=seed, method="adamw"),
                  [5.5, 5.0, 4.5 + 0.01 * seed], method_attribute="adamw")
        for lr, final in ((1e-3, 4.8), (3e-3, 5.2)):
            write_log(root / f"psyche-lr{lr:g}-s{seed}" / "log.h5",
                      config("demo", seed=seed, lr=lr, method="psyche"),
                      [5.6, 5.2, final + 0.01 * seed], bytes_per_step=10,
                      method_attribute="psyche")
    write_log(root / "sparse" / "log.h5", config(compressor="topk", method="sparse"),
              [5.6, 5.3, 5.1], bytes_per_step=100)  # the name in the config only
    write_log(root / "old" / "log.h5", config("diloco", strategy__diloco__inner_steps=10),
              [5.6, 5.3, 5.05], bytes_per_step=100, format_version=1)
    return root


def test_report_labels_by_name_in_every_table(named_logs, tmp_path):
    result = _report([named_logs], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "format_version" not in result.stderr  # versions 1 and 2 are both known
    runs = pd.read_csv(tmp_path / "runs.csv").set_index("run")
    assert runs.loc["adamw-s1", "method"] == "adamw"
    assert runs.loc["psyche-lr0.003-s0", "method"] == "psyche lr=0.003"
    assert runs.loc["sparse", "method"] == "sparse"
    assert runs.loc["old", "method"] == "diloco H=10/none"
    names = {"adamw", "psyche lr=0.001", "psyche lr=0.003", "sparse", "diloco H=10/none"}
    for stem in ("methods", "matched_loss", "matched_loss_at_target", "time_to_target", "paper"):
        assert set(pd.read_csv(tmp_path / f"{stem}.csv")["method"]) == names, stem
    assert (pd.read_csv(tmp_path / "matched_loss.csv")["baseline"] == "adamw").all()
    assert "psyche lr=0.001" in (tmp_path / "paper.tex").read_text()


def test_report_labels_by_keys_on_request_and_baseline_by_name(named_logs, tmp_path):
    result = _report([named_logs], tmp_path / "keys", "--labels", "keys", "--baseline", "adamw")
    assert result.returncode == 0, result.stderr
    methods = set(pd.read_csv(tmp_path / "keys" / "methods.csv")["method"])
    assert methods == {"data_parallel/none", "demo/dct_topk k=32 lr=0.001",
                       "demo/dct_topk k=32 lr=0.003", "data_parallel/topk", "diloco H=10/none"}
    matched = pd.read_csv(tmp_path / "keys" / "matched_loss.csv")
    assert (matched["baseline"] == "data_parallel/none").all()
    summary = (tmp_path / "keys" / "summary.md").read_text()
    assert "given (--baseline 'adamw', the method `data_parallel/none`)" in summary


def test_report_best_of_with_names(named_logs, tmp_path):
    out = tmp_path / "best"
    result = _report([named_logs], out, "--best-of", "schedule.lr", "--baseline", "adamw")
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out / "best_of.csv", dtype={"value": str})
    psyche = table[table["family"] == "psyche lr=*"].set_index("value")
    assert list(psyche["chosen"].items()) == [("0.001", True), ("0.003", False)]
    assert psyche.loc["0.001", "method"] == "psyche lr=0.001"
    assert set(pd.read_csv(out / "methods.csv")["method"]) == {
        "adamw lr=0.001", "psyche lr=0.001", "sparse lr=0.001", "diloco H=10/none lr=0.001"}
    assert (pd.read_csv(out / "matched_loss.csv")["baseline"] == "adamw lr=0.001").all()
    # A name whose every run --best-of left out is refused as a label of those runs would be.
    result = _report([named_logs], tmp_path / "refused", "--best-of", "schedule.lr",
                     "--baseline", "psyche lr=0.003")
    assert result.returncode == 2 and "left out" in result.stderr


def test_an_unknown_format_version_is_named_and_read(tmp_path):
    write_log(tmp_path / "new" / "log.h5", config(method="adamw"), [5.0, 4.5],
              method_attribute="adamw", format_version=3)
    result = _report([tmp_path / "new"], tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "format_version 3, this reader knows 1 and 2" in result.stderr
    assert read_run(tmp_path / "new" / "log.h5").method_name == "adamw"


# --- logs the real app made ---------------------------------------------------------------------

def _name_copy(source: Path, target: Path, name: str | None = None, config_name: str | None = None):
    """A copy of a real log given a method name: as the attribute `method` (format version 2),
    or only as experiment.method in its config text."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    with h5py.File(target, "r+") as f:
        f.attrs["format_version"] = np.int64(2)
        if name is not None:
            f.attrs["method"] = name
        if config_name is not None:  # a version 2 config has experiment.method = "" already
            cfg = tomllib.loads(f.attrs["config"])
            cfg.setdefault("experiment", {})["method"] = config_name
            f.attrs["config"] = to_toml(cfg)


def test_names_on_real_logs(runs_dir, tmp_path):
    """Real logs named as an experiment would name them: the DiLoCo H=5 sweep under one name
    over both rates, the two AdamW wires apart, top-k and 8-bit quantisation under one name."""
    named = tmp_path / "runs"
    for names in LR_SWEEP.values():
        for name in names:
            _name_copy(runs_dir / name / "log.h5", named / name / "log.h5", "local-adam")
    _name_copy(runs_dir / "dense-consumer" / "log.h5", named / "dense-consumer" / "log.h5",
               "adamw")
    _name_copy(runs_dir / "dense-bf16-consumer" / "log.h5",
               named / "dense-bf16-consumer" / "log.h5", config_name="adamw-bf16")
    for name in ("topk-consumer", "quantize-consumer-s0"):
        _name_copy(runs_dir / name / "log.h5", named / name / "log.h5", "compressed")

    result = _report([named], tmp_path / "names")
    assert result.returncode == 0, result.stderr
    runs = pd.read_csv(tmp_path / "names" / "runs.csv").set_index("run")
    assert runs.loc["dense-consumer", "method"] == "adamw"
    assert runs.loc["dense-bf16-consumer", "method"] == "adamw-bf16"
    assert (runs.loc[LR_SWEEP[1e-3], "method"] == "local-adam lr=0.001").all()
    assert (runs.loc[LR_SWEEP[1e-4], "method"] == "local-adam lr=0.0001").all()
    topk, quantize = runs.loc["topk-consumer", "method"], runs.loc["quantize-consumer-s0", "method"]
    assert topk != quantize and topk.startswith("compressed ") and quantize.startswith("compressed ")
    # The fp32 wire is the default baseline beside its bf16 twin, names or not.
    assert (pd.read_csv(tmp_path / "names" / "matched_loss.csv")["baseline"] == "adamw").all()

    result = _report([named], tmp_path / "best", "--best-of", "schedule.lr", "--baseline", "adamw")
    assert result.returncode == 0, result.stderr
    best = pd.read_csv(tmp_path / "best" / "best_of.csv", dtype={"value": str})
    sweep = best[best["family"] == "local-adam lr=*"].set_index("value")
    assert sweep.loc["0.001", "chosen"] and not sweep.loc["0.0001", "chosen"]
    methods = set(pd.read_csv(tmp_path / "best" / "methods.csv")["method"])
    assert "local-adam lr=0.001" in methods and "local-adam lr=0.0001" not in methods
    assert (pd.read_csv(tmp_path / "best" / "matched_loss.csv")["baseline"] == "adamw lr=0.001").all()


def test_experiment_method_set_by_the_app(tmp_path):
    """`lowcomm train --set experiment.method=NAME` (what `lowcomm sweep` passes a point of an
    experiment file): the log holds the name and the report labels the run with it."""
    lowcomm, mpiexec = os.environ.get("LOWCOMM"), os.environ.get("MPIEXEC", "mpiexec")
    if not lowcomm:
        pytest.skip("LOWCOMM is not set")
    for name, settings in (("dense", ["strategy.name=data_parallel"]),
                           ("h5", ["strategy.name=diloco", "strategy.diloco.inner_steps=5"])):
        command = _command(lowcomm, mpiexec, tmp_path / "runs" / name, 10,
                           settings + ["network.scenario=consumer", f"experiment.method={name}"])
        result = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, result.stdout + result.stderr
        run = read_run(tmp_path / "runs" / name / "log.h5")
        assert run.config["experiment"]["method"] == name and run.method_name == name
    result = _report([tmp_path / "runs"], tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert set(pd.read_csv(tmp_path / "out" / "methods.csv")["method"]) == {"dense", "h5"}
    assert (pd.read_csv(tmp_path / "out" / "matched_loss.csv")["baseline"] == "dense").all()
