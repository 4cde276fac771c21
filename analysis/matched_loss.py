"""Compression at matched loss: how many times fewer bytes than the baseline a method needed
to reach the baseline's own final validation loss.

Bytes per step alone flatter a method that learns slowly: it sends less per step but needs
more steps. Matching the loss compares what each method spent to get equally far.

- **Baseline**: AdamW with a dense all-reduce. ``--baseline METHOD`` names its label (as the
  report groups runs), or its method name or its label from the keys where either picks out one
  label (``--baseline adamw`` for ``adamw lr=0.001`` under ``--best-of schedule.lr``); by
  default it is the one method whose runs are ``data_parallel`` with compressor ``none``
  (exchange ``all_reduce``) and optimizer AdamW. Where several methods are, and they differ
  only in the wire's value type (``compressor.none.value_type``: an fp32 run and its bf16 twin)
  and in the keys ``--best-of`` chose per method, the one whose wire is fp32 is the default:
  the all-reduce the bf16 comparison below starts from. In any other case there is no default,
  and the table is left out with a note.
- **Target**: per network scenario and world size, the mean over the baseline's seeds of their
  final validation loss (complete runs only, when it has any). The mean is "the baseline's
  final loss" as a paper reports it, and at least one baseline seed (the one that ends lowest)
  always reaches it; the worst seed's loss would flatter every method, the best seed's would be
  reached by the baseline itself in one seed only.
- **A looser target** (``target_loss``): one loss for every scenario. The report also matches
  at its time-to-target loss (``--target-loss``, by default the worst final loss of the
  complete runs, which every one of them reaches), so that a method that never gets as low as
  the baseline still has a compression at a loss it shares with it.
- **Bytes to target**: per run, the bytes per rank sent from the start through the step after
  which the first evaluation with ``val_loss <= target`` ran (``tables.bytes_to_step``); the
  mean over the seeds that reached it. **Compression** = baseline's bytes to target / the
  method's, so above 1 means fewer bytes than the baseline.
- **Per token**: the same with bytes per token processed through that step (all ranks' bytes
  over all ranks' tokens, which equals bytes per rank over tokens per rank). It compares the
  rate at which each spent bytes on the way to the loss, so methods with other batch sizes or
  sequence lengths compare fairly.
- **vs bf16 all-reduce**: the published figures compare with a dense all-reduce of 2-byte
  (bf16) gradients. A baseline whose wire is fp32 (``compressor.none.value_type``, stored in the
  log's ``config`` attribute) has its bytes halved; one whose wire is already bf16 or fp16 is
  taken as it is. A baseline given with ``--baseline`` that is not a dense all-reduce has no
  bf16 comparison.

Only complete runs count where a (method, scenario, world size) group has any, as in the
per-method table; seeds that never reach the target are counted in ``n`` but not in the means.

Where no method but the baseline reaches the baseline's final loss in a scenario, every other
row there reads "not reached": the report warns (``unreached_warnings``) and points to the table
at its target loss, which compares methods at a loss they share.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import tables
from .methods import config_value, method_name, method_settings

# Bytes per value of the dense all-reduce's wire types (compressor.none.value_type).
_WIRE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
_BF16_BYTES = 2
_WIRE_KEY = "compressor.none.value_type"


class BaselineError(Exception):
    """``--baseline`` names no method of the report."""


def is_dense_all_reduce(run) -> bool:
    """data_parallel with compressor none summed by the transport's all-reduce: every gradient
    value crosses the wire, in the compressor's value type."""
    config, attrs = run.config, run.attrs
    return (config_value(config, "strategy.name", attrs.get("strategy")) == "data_parallel"
            and config_value(config, "compressor.name", attrs.get("compressor", "none")) == "none"
            and config_value(config, "compressor.none.exchange", "all_reduce") == "all_reduce")


def is_adamw_dense_all_reduce(run) -> bool:
    optimizer = config_value(run.config, "optimizer.name", run.attrs.get("optimizer", "adamw"))
    return is_dense_all_reduce(run) and optimizer == "adamw"


def _wire_type(run) -> str:
    return str(config_value(run.config, _WIRE_KEY, "fp32"))


def _fp32_wire_twin(runs, candidates, tuned_keys=()) -> str | None:
    """Among the `candidates` (labels of AdamW dense all-reduces), the one whose wire is fp32,
    when every other differs from it only in the wire's value type and in `tuned_keys`; None
    when there is no such single one."""
    ignored = {_WIRE_KEY, *tuned_keys}
    representative = {}
    for run in runs:
        if run.label in candidates:
            representative.setdefault(run.label, run)
    fp32 = [label for label, run in representative.items() if _wire_type(run) == "fp32"]
    if len(fp32) != 1:
        return None

    def settings(run):  # a label's runs share these (methods.assign_labels)
        return {key: value for key, value in method_settings(run.config).items()
                if key not in ignored}

    reference = settings(representative[fp32[0]])
    if all(settings(run) == reference for run in representative.values()):
        return fp32[0]
    return None


def names_method(run, requested: str) -> bool:
    """Whether ``--baseline``'s text names `run`'s method: its label, its label from the keys
    (``run.key_label``), or its method name from the experiment file."""
    return requested in (run.label, getattr(run, "key_label", None),
                         method_name(run.config, run.attrs))


def _resolve_baseline(runs, requested: str) -> tuple[str, str]:
    """(the label `requested` names, how): the label itself, or the one label of the runs whose
    method name or label from the keys it is. BaselineError where it names no label, or
    several."""
    labels = sorted({run.label for run in runs})
    if requested in labels:
        return requested, "given (--baseline)"
    named = sorted({run.label for run in runs if names_method(run, requested)})
    if len(named) == 1:
        return named[0], f"given (--baseline {requested!r}, the method `{named[0]}`)"
    if named:
        raise BaselineError(f"--baseline {requested!r} names {len(named)} methods of these "
                            "runs; give one of their labels: "
                            + ", ".join(repr(label) for label in named))
    raise BaselineError(f"--baseline {requested!r} is not a method of these runs; they "
                        f"are: " + ", ".join(repr(label) for label in labels))


def choose_baseline(runs, requested: str | None, tuned_keys=()) -> tuple[str | None, str]:
    """(the baseline's method label or None, how it was chosen or why there is none).

    Labels must be assigned (methods.assign_labels). A requested method (a label, a method
    name, a label from the keys: names_method) that no run has raises BaselineError, since a
    misspelt option should not quietly drop the table. `tuned_keys` are the keys chosen per
    method (``--best-of``): an fp32 all-reduce and its bf16 twin may differ in them and still be
    twins."""
    if requested is not None:
        return _resolve_baseline(runs, requested)
    candidates = sorted({run.label for run in runs if is_adamw_dense_all_reduce(run)})
    if len(candidates) == 1:
        return candidates[0], ("default: the only method that is AdamW with a dense all-reduce "
                               "(data_parallel, compressor none)")
    fp32 = _fp32_wire_twin(runs, candidates, tuned_keys)
    if fp32 is not None:
        twins = [f"`{c}`" for c in candidates if c != fp32]
        how = "the wire's value type (compressor.none.value_type)"
        if tuned_keys:
            how += f", apart from {', '.join(tuned_keys)}, chosen per method by --best-of"
        return fp32, (f"default: the AdamW dense all-reduce (data_parallel, compressor none) "
                      f"with an fp32 wire; {', '.join(twins)} "
                      f"{'differs' if len(twins) == 1 else 'differ'} from it only in {how}")
    if not candidates:
        why = "no method is AdamW with a dense all-reduce (data_parallel, compressor none)"
    else:
        why = (f"{len(candidates)} methods are AdamW with a dense all-reduce ("
               + ", ".join(f"`{c}`" for c in candidates) + ")")
    return None, f"no compression at matched loss: {why}; pass --baseline METHOD to name one"


def bf16_factor(baseline_runs) -> tuple[float, str]:
    """(what the baseline's bytes are multiplied by to be a bf16 all-reduce's, why)."""
    if not baseline_runs or not all(is_dense_all_reduce(run) for run in baseline_runs):
        return math.nan, "the baseline is not a dense all-reduce: no bf16 comparison"
    wires = {_wire_type(run) for run in baseline_runs}
    wire = wires.pop() if len(wires) == 1 else None
    if wire not in _WIRE_BYTES:
        return math.nan, "the baseline's wire type is unknown or mixed: no bf16 comparison"
    if _WIRE_BYTES[wire] == _BF16_BYTES:
        return 1.0, (f"the baseline already sends {wire} on the wire "
                     "(compressor.none.value_type): its bytes are taken as they are")
    return _BF16_BYTES / _WIRE_BYTES[wire], (
        f"the baseline sends {wire} gradients (compressor.none.value_type): its bytes are scaled "
        f"by {_BF16_BYTES}/{_WIRE_BYTES[wire]} for a bf16 all-reduce")


def counted_runs(members):
    """The runs a group's means use: its complete runs, or all of them when none is complete
    (as tables.method_table)."""
    complete = [run for run in members if not run.partial]
    return complete or list(members)


def _final_val_loss(run) -> float:
    return float(run.evals["val_loss"].iloc[-1]) if len(run.evals) else math.nan


def _mean(values) -> float:
    values = [v for v in values if math.isfinite(v)]
    return float(np.mean(values)) if values else math.nan


def _std(values) -> float:
    values = [v for v in values if math.isfinite(v)]
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def _ratio(numerator: float, denominator: float) -> float:
    if not (math.isfinite(numerator) and math.isfinite(denominator)):
        return math.nan
    if denominator == 0:
        return math.inf if numerator > 0 else math.nan
    return numerator / denominator


def _group(runs) -> dict:
    groups = {}
    for run in runs:
        groups.setdefault((run.label, run.scenario, run.world_size), []).append(run)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][0], tables.scenario_order(kv[0][1]),
                                                      kv[0][2])))


def _to_target(members, target: float) -> dict:
    """A group's seeds counted, those that reached `target`, and their means to get there."""
    used = counted_runs(members)
    seeds, bytes_, tokens, per_token = [], [], [], []
    for run in used:
        step = tables.time_to_target(run, target)[2] if math.isfinite(target) else math.nan
        if not math.isfinite(step):
            continue
        sent = tables.bytes_to_step(run, step)
        seen = tables.tokens_to_step(run, step)
        seeds.append(run.seed)
        bytes_.append(sent)
        tokens.append(seen)
        # All ranks' bytes over all ranks' tokens: bytes per rank times the rank count.
        per_token.append(_ratio(sent * run.world_size, seen))
    return {"n": len(used), "reached": len(seeds),
            "seeds_reached": " ".join(str(s) for s in sorted(seeds, key=str)),
            "bytes_to_target_mean": _mean(bytes_), "bytes_to_target_std": _std(bytes_),
            "tokens_to_target_mean": _mean(tokens),
            "bytes_per_token_mean": _mean(per_token)}


def matched_loss_table(runs, baseline: str,
                       target_loss: float | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per (method, scenario, world size), matched against the baseline's runs of the
    same scenario and world size; and the notes the report prints with it.

    The target is the baseline's mean final validation loss per scenario and world size, or
    `target_loss` everywhere when given: a looser loss that every method reaches (the report's
    time-to-target loss) still compares bytes at equal loss, where the baseline's final loss
    may be out of some methods' reach."""
    groups = _group(runs)
    baseline_runs = [run for run in runs if run.label == baseline]
    factor, factor_note = bf16_factor(counted_runs(baseline_runs))
    references = {}  # (scenario, world size) -> the baseline's target and its bytes to it
    for (label, scenario, world), members in groups.items():
        if label != baseline:
            continue
        target = (target_loss if target_loss is not None else
                  _mean([_final_val_loss(run) for run in counted_runs(members)]))
        references[(scenario, world)] = dict(_to_target(members, target), target=target)
    rows, unmatched = [], set()
    for (label, scenario, world), members in groups.items():
        reference = references.get((scenario, world))
        target = reference["target"] if reference else math.nan
        own = _to_target(members, target)
        base_bytes = reference["bytes_to_target_mean"] if reference else math.nan
        base_per_token = reference["bytes_per_token_mean"] if reference else math.nan
        if reference is None:
            unmatched.add((scenario, world))
        rows.append({
            "method": label, "scenario": scenario, "world_size": world,
            "baseline": baseline, "target_val_loss": target,
            **own,
            "baseline_bytes_to_target": base_bytes,
            "baseline_bytes_per_token": base_per_token,
            "compression": _ratio(base_bytes, own["bytes_to_target_mean"]),
            "compression_per_token": _ratio(base_per_token, own["bytes_per_token_mean"]),
            "compression_vs_bf16": _ratio(base_bytes * factor, own["bytes_to_target_mean"]),
            "compression_per_token_vs_bf16": _ratio(base_per_token * factor,
                                                    own["bytes_per_token_mean"]),
        })
    notes = [factor_note]
    for scenario, world in sorted(unmatched, key=lambda sw: (tables.scenario_order(sw[0]), sw[1])):
        notes.append(f"no `{baseline}` run on network `{scenario}` with {world} ranks: "
                     "that scenario's rows have no target")
    for (scenario, world), reference in references.items():
        if math.isfinite(reference["target"]) and reference["reached"] == 0:
            notes.append(f"`{baseline}` on `{scenario}` with {world} ranks never reaches "
                         f"{reference['target']:.4g}: that scenario's compressions are blank")
        if not math.isfinite(reference["target"]):
            notes.append(f"`{baseline}` on `{scenario}` with {world} ranks has no validation "
                         "loss: no target there")
    return pd.DataFrame(rows), notes


def unreached_warnings(frame: pd.DataFrame) -> list[str]:
    """Per network scenario and world size where the baseline set a target: a warning when
    other methods ran there and none of their seeds reached it (every compression "not
    reached"), so that the table is not taken for a comparison."""
    warnings = []
    if frame.empty:
        return warnings
    for (scenario, world), group in frame.groupby(["scenario", "world_size"], sort=False):
        target = group["target_val_loss"].iloc[0]
        others = group[group["method"] != group["baseline"]]
        if not math.isfinite(target) or others.empty or others["reached"].any():
            continue
        baseline = group["baseline"].iloc[0]
        warnings.append(
            f"no method but the baseline `{baseline}` reaches its final validation loss "
            f"{target:.4g} on `{scenario}` with {world} ranks: "
            + ("the other method there reads" if len(others) == 1 else
               f"the {len(others)} other methods there all read")
            + " \"not reached\" in matched_loss. Compare them at a loss they share: "
            "matched_loss_at_target (the report's target loss, --target-loss)")
    return warnings


def targets_by_scenario(frame: pd.DataFrame) -> dict:
    """{scenario: target} where the baseline set one (the plot draws it); one world size per
    scenario is assumed, the first is taken otherwise."""
    out = {}
    if frame.empty:
        return out
    for scenario, target in zip(frame["scenario"], frame["target_val_loss"]):
        if math.isfinite(target):
            out.setdefault(scenario, float(target))
    return out


def _cell(value: float, has_target: bool, fmt) -> str:
    return fmt(value) if has_target else "no target"


def matched_display(frame: pd.DataFrame) -> pd.DataFrame:
    """The table for reading: the compression cell carries (reached/seeds), and says "not
    reached" where no seed reached the target (the other cells of that row are blank: —)."""
    if frame.empty:
        return pd.DataFrame()
    has = [math.isfinite(t) for t in frame["target_val_loss"]]

    def col(name, fmt):
        return [_cell(v, h, fmt) for v, h in zip(frame[name], has)]

    compression = [text if not h else
                   f"{'not reached' if r == 0 else text} ({r}/{n})"
                   for text, r, n, h in zip(col("compression", tables.fmt_ratio),
                                            frame["reached"], frame["n"], has)]
    bytes_to = [tables.fmt_mean_std(m, s, tables.fmt_bytes) if h else "no target"
                for m, s, h in zip(frame["bytes_to_target_mean"], frame["bytes_to_target_std"], has)]
    return pd.DataFrame({
        "method": [m + (" (baseline)" if m == b else "")
                   for m, b in zip(frame["method"], frame["baseline"])],
        "scenario": frame["scenario"],
        "W": frame["world_size"],
        "target val loss": [tables.fmt_num(t) if h else "—"
                            for t, h in zip(frame["target_val_loss"], has)],
        "compression at matched loss": compression,
        "per token": col("compression_per_token", tables.fmt_ratio),
        "vs bf16 all-reduce": col("compression_vs_bf16", tables.fmt_ratio),
        "per token vs bf16": col("compression_per_token_vs_bf16", tables.fmt_ratio),
        "bytes/rank to target": bytes_to,
        "bytes/token to target": col("bytes_per_token_mean", tables.fmt_bytes),
    })
