"""Each method at its best value of one setting: ``--best-of KEY`` (e.g. ``schedule.lr``).

A study that runs every method at several learning rates asks how each method does at its own
best one, not at a rate that suits another method.

- **Family**: runs whose method labels agree once KEY's value is masked (methods.py's labels,
  KEY's value replaced by ``*``: ``diloco H=30/none lr=*``) are one method family; they differ
  in KEY only (and in seeds and networks, which never split a method). The labels are those from
  the config's keys even where runs carry method names (methods.method_name): an experiment may
  name each value of KEY apart (``adamw-lr1e-3``, ``adamw-lr3e-3``) or all alike (``psyche``),
  and either way the runs are one family. The family is *shown* by its method name (``psyche
  lr=*``) where its runs share one, by its label from the keys otherwise.
- **Candidates**: per family, network scenario and world size, each value of KEY its runs hold.
- **Score**: the mean final validation loss over the candidate's complete runs (its seeds). A
  candidate with a complete run that has no finite validation loss (no evaluation, or a
  diverged one) ranks last, so a failed seed is not averaged away; so does one without a
  complete run, whose partial runs stopped at other steps and do not compare.
- **Choice**: the lowest score; ties, the last-ranked included, go to the smaller value
  (numbers before text, a missing key last).
- **Edge**: a chosen value that is the smallest or largest of three or more numbers tried is
  marked, for the best may lie beyond them: the sweep should be extended there.
- **Kept**: every run (complete or partial) of the chosen value. The report's tables and plots
  use only these, labelled as ``--method-key KEY`` labels them (``diloco H=30/none lr=0.003``).

The choice is made on the same seeds the tables then report, so every method's numbers are
mildly optimistic (the lowest of several noisy means), alike for every method, the baseline
included; held-out seeds would remove the bias at the cost of more runs.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd

from . import tables
from .methods import config_value, format_value, method_labels, never_splits_methods

_ANY = "*"  # KEY's value in a family's label
_MISSING = object()  # a run whose config lacks KEY


class BestOfError(Exception):
    """``--best-of KEY`` cannot choose: KEY is in no run's config, or never splits methods."""


@dataclass
class BestOf:
    key: str
    kept: list  # the runs of every family's chosen value
    dropped: list  # the runs of the other values
    table: pd.DataFrame  # one row per (family, scenario, world size, value)

    @property
    def dropped_labels(self) -> set:
        return {run.label for run in self.dropped} - {run.label for run in self.kept}


def _masked(config: dict, key: str) -> dict:
    """A copy of `config` with `key` set to ``*`` (created where the config lacks it)."""
    config = copy.deepcopy(config)
    node = config
    *parents, last = key.split(".")
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[last] = _ANY
    return config


def family_labels(runs, key: str, method_keys=(), names: bool = False) -> list[str]:
    """Each run's family: its method label with `key`'s value masked (``lr=*``); from the keys
    alone unless `names`."""
    masked = [SimpleNamespace(config=_masked(run.config, key), attrs=run.attrs,
                              world_size=run.world_size) for run in runs]
    return method_labels(masked, [*method_keys, key], names=names)


def _shown_families(runs, key: str, method_keys, families: list[str]) -> list[str]:
    """How each run's family is shown: by its masked method name (``psyche lr=*``) where every
    run of the family has the same one, by the family (from the keys) otherwise, e.g. where an
    experiment named each value apart (``adamw-lr1e-3 lr=*``, ``adamw-lr3e-3 lr=*``)."""
    named = family_labels(runs, key, method_keys, names=True)
    by_family = {}
    for family, name in zip(families, named):
        by_family.setdefault(family, set()).add(name)
    return [next(iter(by_family[family])) if len(by_family[family]) == 1 else family
            for family in families]


def _value_order(value):
    """Ties go to the smaller value: numbers by size, then text, then a missing key."""
    if value is _MISSING:
        return (2, 0.0, "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def _final_val_loss(run) -> float:
    """The last evaluation's validation loss; NaN without one."""
    return float(run.evals["val_loss"].iloc[-1]) if len(run.evals) else math.nan


def _candidate(members) -> dict:
    """A candidate value's seeds and their mean final validation loss, and its score."""
    complete = [run for run in members if not run.partial]
    finals = [_final_val_loss(run) for run in complete]
    finite = [f for f in finals if math.isfinite(f)]
    without = len(finals) - len(finite)
    score = float(np.mean(finite)) if complete and not without else math.inf
    return {"runs": len(members), "n": len(complete),
            "seeds": " ".join(str(run.seed) for run in sorted(complete, key=lambda r: str(r.seed))),
            "n_without_val_loss": without,
            "final_val_loss_mean": float(np.mean(finite)) if finite else math.nan,
            "final_val_loss_std": float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan,
            "score": score}


def _labels(members) -> str:
    """The label a candidate's runs carry: one, unless an experiment gave one configuration
    several method names."""
    return ", ".join(sorted({run.label for run in members}))


def choose_best_of(runs, key: str, method_keys=(), names: bool = True) -> BestOf:
    """Keeps each family's best value of `key` (see the module's documentation).

    Labels must be assigned with `key` among the method keys
    (``methods.assign_labels(runs, [*method_keys, key], names)``); `method_keys` are the
    others. `names`: whether the families are shown by method names, as the labels are."""
    if never_splits_methods(key):
        raise BestOfError(f"--best-of {key}: that key never tells methods apart (seeds, "
                          "network.* and bookkeeping keys do not); choosing its best value "
                          "would pick seeds or networks, not settings")
    values = [config_value(run.config, key, _MISSING) for run in runs]
    if all(value is _MISSING for value in values):
        raise BestOfError(f"--best-of {key}: no run's config has {key!r} (the keys are "
                          "those of `lowcomm info`, e.g. schedule.lr)")
    others = [k for k in method_keys if k != key]
    families = family_labels(runs, key, others)
    # Grouped by the family from the keys, shown by its name (the same string without names).
    shown = dict(zip(families, _shown_families(runs, key, others, families) if names
                     else families))
    groups = {}  # (family, scenario, world size) -> {value's repr: (value, [runs])}
    for run, family, value in zip(runs, families, values):
        candidates = groups.setdefault((family, run.scenario, run.world_size), {})
        candidates.setdefault(repr(value), (value, []))[1].append(run)

    rows, kept, dropped = [], [], []
    for (key_family, scenario, world), candidates in groups.items():
        family = shown[key_family]
        scored = sorted(((value, members, _candidate(members))
                         for value, members in candidates.values()),
                        key=lambda item: _value_order(item[0]))
        # Sorted by value, so min() breaks a tie of scores toward the smaller value.
        best = min(range(len(scored)), key=lambda i: scored[i][2]["score"])
        # The smallest or largest of three or more numbers tried: the best may lie beyond them.
        numeric = all(isinstance(value, (int, float)) and not isinstance(value, bool)
                      for value, _, _ in scored)
        at_edge = numeric and len(scored) >= 3 and best in (0, len(scored) - 1)
        for i, (value, members, stats) in enumerate(scored):
            chosen = i == best
            (kept if chosen else dropped).extend(members)
            rows.append({"family": family, "scenario": scenario, "world_size": world,
                         "key": key, "value": format_value("-" if value is _MISSING else value),
                         "method": _labels(members), **stats, "chosen": chosen,
                         "at_edge": chosen and at_edge})
    table = pd.DataFrame(rows)
    if len(table):
        order = sorted(range(len(rows)), key=lambda i: (
            rows[i]["family"], tables.scenario_order(rows[i]["scenario"]), rows[i]["world_size"]))
        table = table.iloc[order].reset_index(drop=True)  # values stay in order within a group
    return BestOf(key=key, kept=kept, dropped=dropped, table=table)


def best_of_display(table: pd.DataFrame) -> pd.DataFrame:
    """The table for reading: one row per candidate value, the chosen one marked and the label
    its runs carry in the other tables."""
    if table.empty:
        return pd.DataFrame()
    key = table["key"].iloc[0]

    def loss(row) -> str:
        if row["n"] == 0:
            return "no complete run (ranked last)"
        text = tables.fmt_mean_std(row["final_val_loss_mean"], row["final_val_loss_std"],
                                   tables.fmt_num)
        if row["n_without_val_loss"]:
            return f"{text} ({row['n_without_val_loss']} without val loss: ranked last)"
        return text

    def seeds(row) -> str:
        text = f"{row['n']}" + (f" ({row['seeds']})" if row["seeds"] else "")
        partial = row["runs"] - row["n"]
        return text + (f" +{partial} partial" if partial else "")

    return pd.DataFrame({
        "method family": table["family"],
        "scenario": table["scenario"],
        "W": table["world_size"],
        key: table["value"],
        "final val loss": [loss(row) for _, row in table.iterrows()],
        "seeds": [seeds(row) for _, row in table.iterrows()],
        "chosen": ["yes, the edge of the values tried" if e else "yes" if c else ""
                   for c, e in zip(table["chosen"], table["at_edge"])],
        "kept as": [m if c else "" for m, c in zip(table["method"], table["chosen"])],
    })
