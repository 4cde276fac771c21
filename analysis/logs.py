"""Reading lowcomm run logs (format versions 1 and 2, docs/log-format.md) without lowcomm.

Version 2 added the root attribute ``method`` (the run's method name in its experiment file) and
moved ``steps/simulated_s`` on at every step of the strategies that send nothing on most steps
(version 1 logs of DiLoCo and its kin: the clock stood still between synchronisations). Both are
read alike: a version 1 log has no ``method``, and its clock is taken as it is.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

SUPPORTED_FORMAT_VERSIONS = (1, 2)
SUPPORTED_FORMAT_VERSION = max(SUPPORTED_FORMAT_VERSIONS)  # the newest this reader knows


class LogReadError(Exception):
    """A file that is not a readable lowcomm training log."""


@dataclass
class Run:
    path: Path
    attrs: dict
    config: dict
    steps: pd.DataFrame  # indexed by row; per-rank columns as 2-D arrays in per_rank
    per_rank: dict  # column name -> ndarray [rows, W]
    evals: pd.DataFrame
    world_size: int
    n_params: int | None
    planned_steps: int | None
    partial: bool
    label: str = ""  # method label, set by methods.assign_labels
    key_label: str = ""  # the label from the config's keys alone (no method name), set with it
    extra: dict = field(default_factory=dict)

    @property
    def scenario(self) -> str:
        network = self.config.get("network", {})
        return str(network.get("scenario", "unknown"))

    @property
    def method_name(self) -> str | None:
        """The method's name in the experiment file the run came from (methods.method_name)."""
        from .methods import method_name
        return method_name(self.config, self.attrs)

    @property
    def seed(self):
        return self.attrs.get("seed", self.config.get("seed"))

    @property
    def name(self) -> str:
        """The run's folder name for log.h5 files, the file's stem otherwise."""
        return self.path.parent.name if self.path.name == "log.h5" else self.path.stem

    # --- derived quantities -------------------------------------------------------------
    @property
    def rows(self) -> int:
        return len(self.steps)

    def bytes_sent_per_rank_step(self) -> np.ndarray:
        """Bytes sent per step, mean over ranks, shape [rows]."""
        sent = self.per_rank.get("bytes_sent")
        if sent is None or sent.size == 0:
            return np.zeros(self.rows)
        return sent.mean(axis=1)

    def dense_bytes_per_rank_step(self) -> float | None:
        """What a ring all-reduce of every fp32 parameter sends per rank and step."""
        if not self.n_params or self.world_size < 1:
            return None
        w = self.world_size
        return 2.0 * (w - 1) / w * 4.0 * self.n_params


def _attr(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        return [_attr(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _open(path: Path) -> h5py.File:
    # SWMR readers cope with a live writer and with a killed writer's "open for writing"
    # mark; a file not in the latest format (not SWMR-written) opens the plain way.
    try:
        return h5py.File(path, "r", libver="latest", swmr=True)
    except Exception:  # noqa: BLE001 - fall back to a plain open, which reports the real error
        return h5py.File(path, "r")


def _read_table(group) -> tuple[dict, dict, int]:
    datasets = {name: ds for name, ds in group.items() if isinstance(ds, h5py.Dataset)}
    for ds in datasets.values():
        try:
            ds.refresh()
        except Exception:  # noqa: BLE001 - refresh only exists / matters in SWMR mode
            pass
    if not datasets:
        return {}, {}, 0
    rows = min(ds.shape[0] for ds in datasets.values())  # live/killed runs: cut to shortest
    flat, wide = {}, {}
    for name, ds in datasets.items():
        values = ds[:rows] if rows else np.empty((0,) + ds.shape[1:], ds.dtype)
        if values.ndim == 1:
            flat[name] = values
        else:
            wide[name] = values
    return flat, wide, rows


_PARAMS = re.compile(r"\(([\d,]+)\s+parameters\)")


def read_run(path: str | os.PathLike) -> Run:
    path = Path(path)
    try:
        log = _open(path)
    except Exception as error:  # noqa: BLE001
        raise LogReadError(f"cannot open as HDF5: {error}") from error
    try:
        with log:
            attrs = {key: _attr(value) for key, value in log.attrs.items()}
            if attrs.get("kind") == "replay":
                raise LogReadError("a replay output (kind = replay): the report tables training runs")
            if "steps" not in log or "loss" not in log["steps"]:
                raise LogReadError("not a lowcomm training log (no steps/loss table)")
            version = attrs.get("format_version")
            if version is not None and int(version) not in SUPPORTED_FORMAT_VERSIONS:
                known = " and ".join(str(v) for v in SUPPORTED_FORMAT_VERSIONS)
                print(f"analysis: {path}: format_version {version}, this reader knows "
                      f"{known}; reading what it recognises", file=sys.stderr)
            flat, wide, rows = _read_table(log["steps"])
            if "eval" in log:
                eflat, _, _ = _read_table(log["eval"])
            else:
                eflat = {}
    except LogReadError:
        raise
    except Exception as error:  # noqa: BLE001 - corrupt datasets, truncated files
        raise LogReadError(f"unreadable: {error}") from error

    try:
        # A resumed run's latest job says how many steps the run is meant to have (its train.steps
        # may differ from the first job's); the other settings are the same in both.
        config = tomllib.loads(attrs.get("latest_config") or attrs.get("config", "") or "")
    except tomllib.TOMLDecodeError as error:
        print(f"analysis: {path}: config attribute is not valid TOML ({error}); ignoring it",
              file=sys.stderr)
        config = {}
    steps = pd.DataFrame(flat)
    if "step" not in steps:
        steps["step"] = np.arange(rows)
    evals = pd.DataFrame(eflat) if eflat else pd.DataFrame({"step": [], "val_loss": []})
    world = int(attrs.get("world_size") or (wide["bytes_sent"].shape[1] if "bytes_sent" in wide
                                            else 1))
    match = _PARAMS.search(str(attrs.get("model", "")))
    n_params = int(match.group(1).replace(",", "")) if match else None
    planned = config.get("train", {}).get("steps")
    planned = int(planned) if planned is not None else None
    last_step = int(steps["step"].iloc[-1]) + 1 if rows else 0
    partial = planned is None or last_step < planned
    return Run(path=path, attrs=attrs, config=config, steps=steps, per_rank=wide, evals=evals,
               world_size=world, n_params=n_params, planned_steps=planned, partial=partial)


def find_logs(inputs) -> list[Path]:
    """Every */log.h5 and *.h5 under the given folders (files are taken as they are).

    Checkpoint folders (``checkpoints/``) hold per-rank state, not logs, and are skipped.
    """
    found: dict[str, Path] = {}
    for item in inputs:
        item = Path(item)
        if item.is_dir():
            for root, dirs, files in os.walk(item):
                dirs[:] = sorted(d for d in dirs if d != "checkpoints")
                for name in sorted(files):
                    if name.endswith(".h5"):
                        candidate = Path(root) / name
                        found.setdefault(os.path.realpath(candidate), candidate)
        elif item.exists():
            found.setdefault(os.path.realpath(item), item)
        else:
            print(f"analysis: {item}: no such file or folder", file=sys.stderr)
    return list(found.values())


def load_runs(inputs) -> tuple[list[Run], list[tuple[Path, str]]]:
    """Reads every log found; returns the runs and the (path, reason) of those skipped.

    A skipped file is reported on stderr by name; it does not stop the others.
    """
    from .plans import is_plan  # plan files sit beside logs; the report reads them apart

    runs, skipped = [], []
    for path in find_logs(inputs):
        if is_plan(path):
            continue
        try:
            run = read_run(path)
        except LogReadError as error:
            print(f"analysis: skipping {path}: {error}", file=sys.stderr)
            skipped.append((path, str(error)))
            continue
        if run.rows == 0:
            print(f"analysis: skipping {path}: no steps logged yet", file=sys.stderr)
            skipped.append((path, "no steps logged yet"))
            continue
        runs.append(run)
    return runs, skipped
