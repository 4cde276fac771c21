"""Logs written by hand in the layout of docs/log-format.md, for the tests that need a file but
not the app: values chosen so that the right answer is known."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))  # a TOML basic string for plain text


def to_toml(config: dict, prefix: str = "") -> str:
    """A resolved config (nested dicts of scalars) as TOML text, as the `config` attribute holds
    it."""
    scalars = [f"{key} = {_toml_value(value)}" for key, value in config.items()
               if not isinstance(value, dict)]
    lines = ([f"[{prefix}]"] if prefix and scalars else []) + scalars
    for key, value in config.items():
        if isinstance(value, dict):
            lines.append(to_toml(value, f"{prefix}.{key}" if prefix else key))
    return "\n".join(line for line in lines if line) + "\n"


def config(strategy="data_parallel", compressor="none", seed=0, scenario="consumer", steps=30,
           lr=1e-3, method=None, **sections) -> dict:
    """A resolved config; `sections` as ``strategy__diloco__inner_steps=10``; `method`: the
    experiment's method name (``experiment.method``), the empty default when None."""
    cfg = {"seed": seed, "strategy": {"name": strategy}, "compressor": {"name": compressor},
           "optimizer": {"name": "adamw"}, "schedule": {"lr": lr},
           "network": {"scenario": scenario}, "train": {"steps": steps, "eval_every": 10},
           "experiment": {"method": method or ""}}
    for key, value in sections.items():
        node = cfg
        *parents, last = key.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return cfg


def write_log(path: Path, cfg: dict, val_losses, *, bytes_per_step=1000, world_size=2,
              step_seconds=1.0, method_attribute=None, format_version=2, eval_every=10,
              train_losses=None) -> Path:
    """A training log of ``cfg["train"]["steps"]`` steps (all of them: a complete run) with an
    evaluation after steps eval_every-1, 2*eval_every-1, ... holding `val_losses` in order; every
    rank sends `bytes_per_step` each step, each step takes `step_seconds` of simulated time.
    `method_attribute`: the root attribute ``method`` (format version 2), absent when None."""
    rows = int(cfg["train"]["steps"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as f:
        f.attrs["format_version"] = np.int64(format_version)
        f.attrs["config"] = to_toml(cfg)
        f.attrs["world_size"] = np.int64(world_size)
        f.attrs["seed"] = np.uint64(cfg.get("seed", 0))
        f.attrs["model"] = "tiny (1,000 parameters)"
        if method_attribute is not None:
            f.attrs["method"] = method_attribute
        steps = f.create_group("steps")
        steps["step"] = np.arange(rows, dtype=np.int64)
        losses = (np.linspace(6.0, 5.0, rows) if train_losses is None
                  else np.asarray(train_losses, dtype=float))
        steps["loss"] = losses
        steps["tokens"] = np.full(rows, 256, dtype=np.int64)
        steps["bytes_sent"] = np.full((rows, world_size), bytes_per_step, dtype=np.int64)
        steps["simulated_s"] = step_seconds * np.arange(1, rows + 1, dtype=float)
        evals = f.create_group("eval")
        n = len(val_losses)
        evals["step"] = np.arange(eval_every - 1, eval_every * n, eval_every, dtype=np.int64)[:n]
        evals["val_loss"] = np.asarray(val_losses, dtype=float)
    return path
