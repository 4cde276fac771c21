"""The report's default target loss, the run that sets it, and when it says little.

Without ``--target-loss`` the target of the time-to-target columns and of
``matched_loss_at_target`` is the worst (largest) final validation loss over the complete runs:
every complete run reaches it, so each has a time and a compression there. That is only as
meaningful as the run that sets it. The report names that run (``default_target``) and warns
(``target_run_warnings``) when it is worst for a reason that makes the target say little:

- **diverged**: it ends above its own first evaluation (its loss went up overall), so the target
  is a loss every method passes on its way down, early, whatever it does afterwards;
- **an outlier among its seeds**: its final loss lies more than three standard deviations from
  the mean final loss of its method's *other* seeds (same method, network scenario and world
  size; their complete runs, as the per-method table counts them), where there are at least two
  other seeds to take a standard deviation (ddof 1) from. The run itself is left out of the mean
  and the deviation: with it in, one run among n can never lie more than (n-1)/sqrt(n)
  deviations from the mean (1.15 at n = 3), so the rule could not fire on the few seeds a study
  has.

A run without evaluations stands in with its training loss (first and last logged step), as it
does in the target itself.
"""

from __future__ import annotations

import math

import numpy as np

# An outlier lies this many of its method's other seeds' standard deviations from their mean.
OUTLIER_STDS = 3.0
# The other seeds a standard deviation needs.
MIN_OTHER_SEEDS = 2


def final_loss(run) -> float:
    """The last validation loss; the last training loss for a run never evaluated."""
    if len(run.evals):
        return float(run.evals["val_loss"].iloc[-1])
    return float(run.steps["loss"].iloc[-1])


def first_loss(run) -> float:
    """The first validation loss; the first training loss for a run never evaluated."""
    if len(run.evals):
        return float(run.evals["val_loss"].iloc[0])
    return float(run.steps["loss"].iloc[0])


def _kind(run) -> str:
    return "validation" if len(run.evals) else "training (it has no evaluation)"


def default_target(runs):
    """(the worst final loss over the complete runs, the run that has it); over every run when
    none is complete; (NaN, None) when no run has a finite final loss."""
    pool = [r for r in runs if not r.partial] or list(runs)
    finals = [(final_loss(run), i) for i, run in enumerate(pool)]
    finals = [(loss, i) for loss, i in finals if math.isfinite(loss)]
    if not finals:
        return math.nan, None
    loss, i = max(finals)  # of equal losses, the later run: any would do
    return loss, pool[i]


def _describe(run) -> str:
    return f"run `{run.name}` (`{run.label}`, {run.path})"


def divergence_warning(run) -> str | None:
    """A warning when `run` ends above its own first evaluation; None otherwise."""
    first, last = first_loss(run), final_loss(run)
    if not (math.isfinite(first) and math.isfinite(last)) or last <= first:
        return None
    return (f"the default target loss {last:.4g} is set by {_describe(run)}, which diverged: its "
            f"final {_kind(run)} loss {last:.4g} is above its first, {first:.4g}. Every method "
            "passes that loss early on its way down, so time to target and compression at the "
            "target say little; leave the run out or pass --target-loss")


def _siblings(run, runs) -> list:
    """The other seeds of `run`'s method (label, scenario, world size) that the per-method
    table counts beside it: the complete ones for a complete run; every one for a partial run
    (which sets the target only where no run is complete)."""
    same = [r for r in runs if r is not run and r.label == run.label
            and r.scenario == run.scenario and r.world_size == run.world_size]
    return same if run.partial else [r for r in same if not r.partial]


def outlier_warning(run, runs) -> str | None:
    """A warning when `run`'s final loss lies more than OUTLIER_STDS standard deviations from
    the mean of its method's other seeds (at least MIN_OTHER_SEEDS of them); None otherwise."""
    others = [final_loss(r) for r in _siblings(run, runs)]
    others = [loss for loss in others if math.isfinite(loss)]
    if len(others) < MIN_OTHER_SEEDS:
        return None
    mean, std = float(np.mean(others)), float(np.std(others, ddof=1))
    own = final_loss(run)
    if not math.isfinite(own) or abs(own - mean) <= OUTLIER_STDS * std:
        return None
    if std > 0:
        how = (f"it ends {abs(own - mean) / std:.1f} standard deviations from the mean final "
               f"loss of its method's other {len(others)} seeds ({mean:.4g} ± {std:.2g}; the "
               f"rule: more than {OUTLIER_STDS:g})")
    else:
        how = f"its method's other {len(others)} seeds all ended at {mean:.4g}"
    return (f"the default target loss {own:.4g} is set by {_describe(run)}, an outlier among "
            f"its seeds: {how}. Time to target and compression at the target are then measured "
            "at one failed seed's loss; leave the run out or pass --target-loss")


def target_run_warnings(run, runs) -> list[str]:
    """The warnings about the run that sets the default target (see the module's
    documentation); none for None (no run set it)."""
    if run is None:
        return []
    return [w for w in (divergence_warning(run), outlier_warning(run, runs)) if w is not None]
