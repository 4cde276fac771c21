"""Reading the byte budgets `lowcomm plan --hdf5` writes (docs/plan.md), for the report."""

from __future__ import annotations

import sys
from pathlib import Path

import h5py
import pandas as pd

SUPPORTED_FORMAT_VERSION = 1


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def is_plan(path: Path) -> bool:
    """Whether the file is a plan file (root attribute lowcomm_file = "plan")."""
    try:
        with h5py.File(path, "r") as f:
            return _text(f.attrs.get("lowcomm_file")) == "plan"
    except Exception:  # noqa: BLE001 - not HDF5, unreadable: not a plan either
        return False


def read_plan(path: Path) -> pd.DataFrame:
    """One row per method: the file's columns, with its model, parameters and world_size."""
    with h5py.File(path, "r") as f:
        version = int(f.attrs.get("format_version", 0))
        if version != SUPPORTED_FORMAT_VERSION:
            print(f"analysis: {path}: plan format_version {version}, this reader knows "
                  f"{SUPPORTED_FORMAT_VERSION}; reading what it recognises", file=sys.stderr)
        columns = {name: [_text(v) for v in f["plan"][name][:]] for name in f["plan"]}
        frame = pd.DataFrame(columns)
        for key in ("model", "parameters", "world_size"):
            frame.insert(0, key, _text(f.attrs[key]))
    frame.insert(0, "file", str(path))
    return frame


_COLUMNS = ("method", "strategy", "transport", "network", "syncs_per_step", "payload_bytes",
            "wire_sent_bytes", "wire_received_bytes", "distro_received_bytes", "comm_s")


def load_plans(paths) -> tuple[pd.DataFrame, list[tuple[Path, str]]]:
    """Every readable plan file among `paths`, concatenated (empty when there is none), and the
    (path, reason) of plan files that could not be read (named on stderr, as logs are)."""
    frames, skipped = [], []
    for path in paths:
        if not is_plan(path):
            continue
        try:
            frame = read_plan(path)
            missing = [c for c in _COLUMNS if c not in frame]
            if missing:
                raise KeyError(f"no column {', '.join(missing)}")
            frames.append(frame)
        except Exception as error:  # noqa: BLE001 - a damaged or foreign plan file: skip it
            print(f"analysis: skipping {path}: unreadable plan file ({error})", file=sys.stderr)
            skipped.append((path, f"unreadable plan file ({error})"))
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), skipped


def plan_display(plans: pd.DataFrame) -> pd.DataFrame:
    """The plan rows as the report shows them: MB per rank and step, modelled seconds."""
    shown = pd.DataFrame({
        "model": plans["model"], "W": plans["world_size"], "method": plans["method"],
        "strategy": plans["strategy"], "transport": plans["transport"],
        "network": plans["network"], "syncs/step": plans["syncs_per_step"].map("{:.4g}".format),
    })
    for column, title in (("payload_bytes", "payload MB"), ("wire_sent_bytes", "wire sent MB"),
                          ("wire_received_bytes", "wire received MB"),
                          ("distro_received_bytes", "(W-1)x payload MB")):
        shown[title] = (plans[column] / 1e6).map("{:.3f}".format)
    shown["comm s/step"] = plans["comm_s"].map("{:.4g}".format)
    return shown
