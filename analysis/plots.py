"""Plots of a set of runs (matplotlib, Agg backend): PNG and PDF of each figure.

One colour per method in every figure (``colours``); line style tells the network scenarios
apart where several share a panel. Curves are the mean over the seeds of a (method, scenario,
world size) group: training loss thin (a running mean over about 2% of the steps), validation
loss thick with markers, at the steps every run of the group has.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .tables import scenario_order  # noqa: E402

_STYLES = ["-", "--", ":", "-."]


def colours(methods) -> dict:
    methods = sorted(set(methods))
    cmap = plt.get_cmap("tab10" if len(methods) <= 10 else "tab20")
    return {m: cmap(i % cmap.N) for i, m in enumerate(methods)}


def _groups(runs):
    groups = {}
    for run in runs:
        groups.setdefault((run.label, run.scenario, run.world_size), []).append(run)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][0], scenario_order(kv[0][1]),
                                                      kv[0][2])))


def _mean_curve(runs, table: str, column: str, x_of=None):
    """Mean over runs of ``column`` at the steps all runs have; x_of(run) gives per-step x
    values (indexed like steps) to average alongside, else the step itself."""
    frames = []
    for run in runs:
        if table == "steps":
            frame = pd.DataFrame({"step": run.steps["step"].to_numpy(),
                                  "y": run.steps[column].to_numpy()})
            frame["x"] = x_of(run) if x_of else frame["step"]
        else:
            if not len(run.evals):
                return None
            steps = run.evals["step"].to_numpy()
            frame = pd.DataFrame({"step": steps, "y": run.evals[column].to_numpy()})
            if x_of:
                xs = pd.Series(x_of(run), index=run.steps["step"].to_numpy())
                frame["x"] = xs.reindex(steps).to_numpy()
            else:
                frame["x"] = steps
        frames.append(frame.set_index("step"))
    common = frames[0].index
    for frame in frames[1:]:
        common = common.intersection(frame.index)
    if len(common) == 0:
        return None
    x = np.mean([f.loc[common, "x"].to_numpy(dtype=float) for f in frames], axis=0)
    y = np.mean([f.loc[common, "y"].to_numpy(dtype=float) for f in frames], axis=0)
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def _smooth(y):
    window = max(1, len(y) // 50)
    if window == 1:
        return y
    return pd.Series(y).rolling(window, min_periods=1).mean().to_numpy()


def _cumulative_bytes(run):
    return np.cumsum(run.bytes_sent_per_rank_step())


def _simulated(run):
    return run.steps["simulated_s"].to_numpy(dtype=float)


def _draw(ax, groups, palette, x_of=None, logx=False, styles=None):
    for (method, scenario, world), members in groups.items():
        colour = palette[method]
        style = (styles or {}).get(scenario, "-")
        tag = method if styles is None or len(styles) == 1 else f"{method} · {scenario}"
        suffix = " (partial)" if all(r.partial for r in members) else ""
        train = _mean_curve(members, "steps", "loss", x_of)
        if train is not None:
            x, y = train
            keep = x > 0 if logx else np.ones_like(x, dtype=bool)
            ax.plot(x[keep], _smooth(y)[keep], style, color=colour, alpha=0.35, linewidth=1)
        val = _mean_curve(members, "eval", "val_loss", x_of)
        if val is not None and len(val[0]):
            x, y = val
            keep = x > 0 if logx else np.ones_like(x, dtype=bool)
            ax.plot(x[keep], y[keep], style, color=colour, marker="o", markersize=3,
                    linewidth=1.8, label=tag + suffix)
        elif train is not None:
            ax.plot([], [], style, color=colour, label=tag + suffix)
    if logx:
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)


def _floor(ax, runs):
    """The validation loss floor of markov data, where the curves come near it."""
    floors = {r.attrs.get("val_loss_floor") for r in runs if r.attrs.get("val_loss_floor")}
    if len(floors) != 1:
        return
    floor = float(floors.pop())
    low, high = ax.get_ylim()
    if floor >= low - 0.25 * (high - low):
        ax.axhline(floor, color="grey", linewidth=0.8, linestyle=":",
                   label="val. loss floor (entropy rate)")


def _save(fig, out: Path, stem: str) -> list[Path]:
    paths = [out / f"{stem}.png", out / f"{stem}.pdf"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    return paths


_YLABEL = "loss (nats/token)\nthin: training (running mean), markers: validation"


def plot_all(runs, per_run: pd.DataFrame, out: Path, target: float | None = None,
             matched_targets: dict | None = None) -> list[Path]:
    """Every figure; `matched_targets` ({scenario: the baseline's final validation loss}, from
    matched_loss.targets_by_scenario) is drawn on the frontier plot where given."""
    palette = colours(r.label for r in runs)
    groups = _groups(runs)
    scenarios = sorted({r.scenario for r in runs}, key=scenario_order)
    styles = {s: _STYLES[i % len(_STYLES)] for i, s in enumerate(scenarios)}
    written = []

    fig, ax = plt.subplots(figsize=(7, 4.5))
    _draw(ax, groups, palette, styles=styles)
    _floor(ax, runs)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel(_YLABEL)
    ax.set_title("Loss vs step")
    ax.legend(fontsize=7)
    written += _save(fig, out, "loss_vs_step")

    fig, ax = plt.subplots(figsize=(7, 4.5))
    _draw(ax, groups, palette, x_of=_cumulative_bytes, logx=True, styles=styles)
    _floor(ax, runs)
    ax.set_xlabel("cumulative bytes sent per rank (bytes, log scale)")
    ax.set_ylabel(_YLABEL)
    ax.set_title("Loss vs communication")
    ax.legend(fontsize=7)
    written += _save(fig, out, "loss_vs_bytes")

    written += _plot_frontier(groups, palette, scenarios, matched_targets or {}, target, out)

    n = len(scenarios)
    fig, axes = plt.subplots(1, n, figsize=(5.5 * n, 4.5), squeeze=False, sharey=True)
    for ax, scenario in zip(axes[0], scenarios):
        subset = {k: v for k, v in groups.items() if k[1] == scenario}
        _draw(ax, subset, palette, x_of=_simulated)
        if target is not None and math.isfinite(target):
            ax.axhline(target, color="black", linewidth=0.8, linestyle="--",
                       label=f"target {target:.4g}")
        ax.set_title(f"network: {scenario}")
        ax.set_xlabel("simulated wall time (s)")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel(_YLABEL)
    fig.suptitle("Loss vs simulated wall time, per network scenario")
    written += _save(fig, out, "loss_vs_time")

    fig, ax = plt.subplots(figsize=(7, 4.5))
    frame = per_run.copy()
    frame["loss"] = frame["final_val_loss"].where(np.isfinite(frame["final_val_loss"]),
                                                  frame["final_train_loss"])
    frame = frame[(frame["status"] == "complete") | ~frame["method"].isin(
        frame.loc[frame["status"] == "complete", "method"])]
    frame = frame[frame["bytes_per_step"] > 0]
    means = frame.groupby("method")[["bytes_per_step", "loss"]].mean()
    for method, row in means.iterrows():
        pts = frame[frame["method"] == method]
        ax.scatter(pts["bytes_per_step"], pts["loss"], color=palette[method], alpha=0.35, s=14)
        ax.scatter([row["bytes_per_step"]], [row["loss"]], color=palette[method], s=60,
                   edgecolor="black", linewidth=0.6, label=method, zorder=3)
    front = pareto_front(means)
    if len(front) :
        f = means.loc[front].sort_values("bytes_per_step")
        ax.step(f["bytes_per_step"], f["loss"], where="post", color="black", linewidth=1.2,
                zorder=2, label="Pareto front")
        ax.scatter(f["bytes_per_step"], f["loss"], s=160, facecolor="none", edgecolor="black",
                   linewidth=1.2, zorder=4)
    dense = frame["dense_bytes_per_step"].dropna().unique()
    if len(dense) == 1:
        ax.axvline(dense[0], color="grey", linestyle=":", linewidth=0.8,
                   label="dense ring all-reduce")
    ax.set_xscale("log")
    ax.set_xlabel("bytes sent per step per rank (bytes, log scale)")
    ax.set_ylabel("final loss (nats/token; validation, or training without evals)")
    ax.set_title("Final loss vs communication (circled: Pareto front)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    written += _save(fig, out, "pareto")
    return written


def _plot_frontier(groups, palette, scenarios, targets: dict, target: float | None,
                   out: Path) -> list[Path]:
    """Validation loss against cumulative bytes per rank, one panel per network scenario: each
    (method, world size) group's mean over seeds, and the frontier of those curves; the two
    losses the report matches at (the baseline's final one per scenario, `targets`, and the
    report's target loss) as horizontal lines."""
    n = len(scenarios)
    fig, axes = plt.subplots(1, n, figsize=(5.5 * n, 4.5), squeeze=False, sharey=True)
    for ax, scenario in zip(axes[0], scenarios):
        subset = {k: v for k, v in groups.items() if k[1] == scenario}
        several_sizes = len({k[2] for k in subset}) > 1
        curves = []
        for (method, _, world), members in subset.items():
            suffix = " (partial)" if all(r.partial for r in members) else ""
            tag = method + (f" W={world}" if several_sizes else "") + suffix
            val = _mean_curve(members, "eval", "val_loss", _cumulative_bytes)
            if val is None or not len(val[0]):
                continue
            x, y = val
            curves.append((x, y))
            keep = x > 0  # a log axis cannot show an evaluation before the first byte
            ax.plot(x[keep], y[keep], "-", color=palette[method], marker="o", markersize=3,
                    linewidth=1.4, label=tag)
        fx, fy = loss_frontier(curves)
        if len(fx):
            right = max(float(np.max(x[x > 0])) for x, _ in curves if np.any(x > 0))
            ax.step(np.r_[fx, right], np.r_[fy, fy[-1]], where="post", color="black",
                    linewidth=1.2, zorder=3, label="frontier (fewest bytes to each loss)")
        final = targets.get(scenario)
        if final is not None and math.isfinite(final):
            ax.axhline(final, color="black", linewidth=0.8, linestyle="--",
                       label=f"baseline's final val. loss {final:.4g}")
        if target is not None and math.isfinite(target):
            ax.axhline(target, color="grey", linewidth=0.8, linestyle=":",
                       label=f"target loss {target:.4g}")
        ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
        ax.set_title(f"network: {scenario}")
        ax.set_xlabel("cumulative bytes sent per rank (bytes, log scale)")
        # Below the panel: the curves fill it from the top left to the bottom right.
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15))
    axes[0][0].set_ylabel("validation loss (nats/token), mean over seeds")
    fig.suptitle("Validation loss vs communication, with the frontier over methods")
    return _save(fig, out, "loss_vs_bytes_frontier")


def loss_frontier(curves) -> tuple[np.ndarray, np.ndarray]:
    """The frontier of (bytes, loss) curves: for each loss level, the fewest bytes any curve
    needed to reach it.

    Over every point of every curve, sorted by bytes, the running minimum of the loss, kept at
    the points where it falls: drawn as a step line (where="post"), its height at x bytes is the
    lowest loss any curve had reached with at most x bytes. A curve need not fall monotonically:
    a later point that reaches a loss costs more bytes than the first, so it never sets the
    frontier. Points at 0 bytes or not finite are left out (a log axis cannot show them).
    """
    if not curves:
        return np.array([]), np.array([])
    xs = np.concatenate([np.asarray(x, dtype=float) for x, _ in curves])
    ys = np.concatenate([np.asarray(y, dtype=float) for _, y in curves])
    ok = np.isfinite(xs) & np.isfinite(ys) & (xs > 0)
    xs, ys = xs[ok], ys[ok]
    order = np.lexsort((ys, xs))  # by bytes, then loss: of equal bytes the lowest counts
    xs, ys = xs[order], ys[order]
    best = np.minimum.accumulate(ys)
    falls = np.r_[True, best[1:] < best[:-1]] if len(best) else np.array([], dtype=bool)
    return xs[falls], best[falls]


def pareto_front(means: pd.DataFrame) -> list:
    """Methods not dominated (no other has fewer-or-equal bytes and lower-or-equal loss, one
    strictly)."""
    front = []
    for a, ra in means.iterrows():
        dominated = any(
            (rb["bytes_per_step"] <= ra["bytes_per_step"] and rb["loss"] <= ra["loss"]
             and (rb["bytes_per_step"] < ra["bytes_per_step"] or rb["loss"] < ra["loss"]))
            for b, rb in means.iterrows() if b != a)
        if not dominated and math.isfinite(ra["loss"]):
            front.append(a)
    return front
