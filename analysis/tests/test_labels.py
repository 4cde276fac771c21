"""The label `lowcomm train` writes into its log (attribute ``label``, from each component's
registration) is the one analysis/methods.py derives from the configuration for logs written
before there was one, for every built-in strategy and compressor and the keys their labels show;
and the report takes the log's label where there is one.

LOWCOMM names the lowcomm binary (skipped without it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import h5py
import pytest

from analysis.logs import read_run
from analysis.methods import method_label

COMMON = ["data.source=markov", "data.batch_size=2", "data.seq_len=16", "data.val_windows=0",
          "train.steps=1", "train.checkpoint_every=1000", "model.preset=tiny"]

CONFIGURATIONS = {
    "dense": ["strategy.name=data_parallel"],
    "dense-bf16-tree": ["compressor.none.value_type=bf16", "compressor.none.exchange=tree",
                        "compressor.merge_groups=all"],
    "dp-sgd-topk": ["optimizer.name=sgd", "compressor.name=topk", "compressor.topk.ratio=0.01"],
    "topk-no-ef-fp16": ["compressor.name=topk", "compressor.topk.error_feedback=false",
                        "compressor.topk.value_type=fp16"],
    "gtopk": ["compressor.name=topk", "compressor.topk.exchange=tree"],
    "randomk": ["compressor.name=randomk", "compressor.randomk.ratio=0.05"],
    "quantize-ef": ["compressor.name=quantize", "compressor.quantize.bits=4",
                    "compressor.quantize.error_feedback=true", "compressor.quantize.error_feedback_decay=0.9"],
    "powersgd-start": ["compressor.name=powersgd", "compressor.powersgd.rank=4", "compressor.powersgd.start_step=5"],
    "dct-topk": ["compressor.name=dct_topk", "compressor.dct_topk.chunk=32"],
    "sparseloco": ["strategy.name=diloco", "strategy.diloco.inner_steps=30", "compressor.name=sparseloco"],
    "signum-vote": ["optimizer.name=signum", "compressor.name=majority_vote",
                    "compressor.majority_vote.momentum=0.9"],
    "diloco-streaming": ["strategy.name=diloco", "strategy.diloco.inner_steps=4", "strategy.diloco.fragments=2",
                         "strategy.diloco.overlap_steps=1", "strategy.diloco.alpha=0.5", "compressor.name=topk",
                         "compressor.topk.ratio=0.1"],
    "muloco": ["strategy.name=diloco", "strategy.diloco.inner_steps=30", "optimizer.name=muon"],
    "desloc": ["strategy.name=desloc", "strategy.desloc.param_period=4"],
    "noloco-pull": ["strategy.name=noloco", "strategy.noloco.pull=0.5"],
    "onebit-adam": ["strategy.name=onebit_adam", "strategy.onebit_adam.beta2=0.95"],
    "zero-one-adam": ["strategy.name=zero_one_adam"],
    "demo": ["strategy.name=demo"],
    "psyche": ["strategy.name=demo", "strategy.demo.pipeline=psyche", "compressor.dct_topk.wire=compact_1bit",
               "compressor.dct_topk.topk=4"],
    "demo-chunk-decay": ["strategy.name=demo", "compressor.dct_topk.chunk=32",
                         "strategy.demo.compression_decay=0.99", "strategy.demo.pipeline=stale"],
    "demo-topk": ["strategy.name=demo", "strategy.demo.transport=topk", "compressor.topk.ratio=0.1"],
    "demo-tree": ["strategy.name=demo", "compressor.dct_topk.exchange=tree"],
}


@pytest.fixture(scope="module")
def label_runs(tmp_path_factory):
    lowcomm = os.environ.get("LOWCOMM")
    if not lowcomm:
        pytest.skip("LOWCOMM (path of the lowcomm binary) is not set")
    root = tmp_path_factory.mktemp("labels")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for name, settings in CONFIGURATIONS.items():
        command = [lowcomm, "train", "--out", str(root / name), "--force"]
        for setting in COMMON + settings:
            command += ["--set", setting]
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"{name}: {result.stdout}\n{result.stderr}"
    return root


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_the_logs_label_is_the_one_derived_from_its_configuration(label_runs, name):
    run = read_run(Path(label_runs) / name / "log.h5")
    written = run.attrs.pop("label")
    assert written == method_label(run.config, run.attrs), name
    keys = run.attrs["label_keys"].split(",")
    assert "strategy.name" in keys and keys == sorted(keys), keys


def test_a_logs_label_is_taken_as_written(label_runs):
    run = read_run(Path(label_runs) / "dense" / "log.h5")
    run.attrs["label"] = "a label of its own"
    assert method_label(run.config, run.attrs) == "a label of its own"


def test_a_log_without_a_label_keeps_the_derived_one(label_runs):
    run = read_run(Path(label_runs) / "diloco-streaming" / "log.h5")
    del run.attrs["label"]
    assert method_label(run.config, run.attrs) == "diloco H=4 F=2 tau=1 alpha=0.5/topk ratio=0.1"
