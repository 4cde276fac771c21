"""Per-run and per-method tables, written as Markdown, CSV and LaTeX."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd


# --- per-run metrics ------------------------------------------------------------------------

def _time_at_step(run, step: int) -> float:
    steps = run.steps["step"].to_numpy()
    sim = run.steps["simulated_s"].to_numpy() if "simulated_s" in run.steps else None
    if sim is None or len(steps) == 0:
        return math.nan
    at = np.searchsorted(steps, step, side="right") - 1  # the row of that step, or the last before
    return float(sim[at]) if at >= 0 else math.nan


def time_to_target(run, target: float) -> tuple[float, float, float]:
    """(simulated s by validation loss, by training loss, step by validation loss).

    By validation loss: the simulated wall clock at the end of the step after which the first
    evaluation with val_loss <= target ran. By training loss: at the end of the first step whose
    (rank-averaged) training loss is <= target. NaN where never reached.
    """
    val_time = val_step = math.nan
    if len(run.evals) and "val_loss" in run.evals:
        hit = np.flatnonzero(run.evals["val_loss"].to_numpy() <= target)
        if hit.size:
            val_step = int(run.evals["step"].iloc[hit[0]])
            val_time = _time_at_step(run, val_step)
    train_time = math.nan
    hit = np.flatnonzero(run.steps["loss"].to_numpy() <= target)
    if hit.size and "simulated_s" in run.steps:
        train_time = float(run.steps["simulated_s"].iloc[hit[0]])
    return val_time, train_time, val_step


def bytes_to_step(run, step) -> float:
    """Bytes sent per rank (mean over ranks) from the start through the end of `step`; NaN when
    `step` is NaN (the target never reached) or the log has no byte counts."""
    sent = run.per_rank.get("bytes_sent")
    if sent is None or sent.size == 0 or not math.isfinite(step):
        return math.nan
    through = run.steps["step"].to_numpy() <= step
    return float(sent[through].sum(axis=0).mean())


def tokens_to_step(run, step) -> float:
    """Tokens processed by all ranks from the start through the end of `step` (the `tokens`
    column is summed over ranks); NaN when `step` is NaN or the log has no `tokens` column."""
    if "tokens" not in run.steps or not math.isfinite(step):
        return math.nan
    through = run.steps["step"].to_numpy() <= step
    return float(run.steps["tokens"].to_numpy()[through].sum())


def default_target(runs) -> float:
    """The worst (largest) final validation loss over the complete runs (all runs if none is
    complete), so that every complete run reaches it; the final training loss stands in for
    runs without an evaluation."""
    pool = [r for r in runs if not r.partial] or list(runs)
    finals = []
    for run in pool:
        if len(run.evals):
            finals.append(float(run.evals["val_loss"].iloc[-1]))
        else:
            finals.append(float(run.steps["loss"].iloc[-1]))
    finals = [f for f in finals if math.isfinite(f)]
    return max(finals) if finals else math.nan


def _column_sum(run, column: str) -> float:
    return float(run.steps[column].sum()) if column in run.steps else math.nan


def run_table(runs, target: float) -> pd.DataFrame:
    rows = []
    for run in runs:
        sent = run.bytes_sent_per_rank_step()
        bytes_per_step = float(sent.mean()) if sent.size else math.nan
        dense = run.dense_bytes_per_rank_step()
        ratio = (dense / bytes_per_step if dense and bytes_per_step > 0
                 else (math.inf if dense else math.nan))
        val = run.evals["val_loss"].to_numpy() if len(run.evals) else np.array([])
        t_val, t_train, s_val = time_to_target(run, target)
        rows.append({
            "run": run.name,
            "method": run.label,
            "scenario": run.scenario,
            "seed": run.seed,
            "world_size": run.world_size,
            "status": "partial" if run.partial else "complete",
            "steps": int(run.steps["step"].iloc[-1]) + 1,
            "planned_steps": run.planned_steps,
            "final_val_loss": float(val[-1]) if val.size else math.nan,
            "best_val_loss": float(np.nanmin(val)) if val.size else math.nan,
            "final_train_loss": float(run.steps["loss"].iloc[-1]),
            "bytes_per_step": bytes_per_step,
            "dense_bytes_per_step": dense if dense else math.nan,
            "compression_ratio": ratio,
            "total_bytes_sent": float(run.per_rank["bytes_sent"].sum())
            if "bytes_sent" in run.per_rank else math.nan,
            "target_step_val": s_val,
            "time_to_target_val_s": t_val,
            "bytes_to_target_val": bytes_to_step(run, s_val),
            "time_to_target_train_s": t_train,
            "final_simulated_s": float(run.steps["simulated_s"].iloc[-1])
            if "simulated_s" in run.steps else math.nan,
            # Logs written before overlap existed lack these columns.
            "comm_exposed_s": _column_sum(run, "comm_exposed_s"),
            "comm_hidden_s": _column_sum(run, "comm_hidden_s"),
            "resume_count": run.attrs.get("resume_count", 0),
            "path": str(run.path),
        })
    frame = pd.DataFrame(rows)
    if len(frame):
        frame = frame.sort_values(["method", "scenario", "seed", "run"], kind="stable")
        frame = frame.reset_index(drop=True)
    return frame


_AGGREGATED = ["final_val_loss", "best_val_loss", "final_train_loss", "bytes_per_step",
               "compression_ratio", "time_to_target_val_s", "time_to_target_train_s", "bytes_to_target_val",
               "final_simulated_s", "comm_exposed_s", "comm_hidden_s"]


def method_table(per_run: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof 1) over the seeds of each (method, scenario, world
    size). Only complete runs count when a group has any; a group of partial runs only is
    aggregated all the same and marked partial. Times to target average the runs that reached
    it (``reached`` says how many of ``n`` did)."""
    rows = []
    if per_run.empty:
        return pd.DataFrame()
    for (method, scenario, world), group in per_run.groupby(
            ["method", "scenario", "world_size"], sort=True):
        complete = group[group["status"] == "complete"]
        used = complete if len(complete) else group
        row = {"method": method, "scenario": scenario, "world_size": world, "n": len(used),
               "n_partial_excluded": len(group) - len(used) if len(complete) else 0,
               "status": "complete" if len(complete) else "partial",
               "seeds": " ".join(str(s) for s in sorted(used["seed"].unique()))}
        for column in _AGGREGATED:
            values = used[column].astype(float)
            finite = values[np.isfinite(values)] if "_to_target" in column else values
            row[f"{column}_mean"] = float(finite.mean()) if len(finite) else math.nan
            row[f"{column}_std"] = float(finite.std(ddof=1)) if len(finite) > 1 else math.nan
        row["reached_val"] = int(np.isfinite(used["time_to_target_val_s"].astype(float)).sum())
        row["reached_train"] = int(np.isfinite(used["time_to_target_train_s"].astype(float)).sum())
        rows.append(row)
    return pd.DataFrame(rows)


# --- formatting -----------------------------------------------------------------------------

def fmt_bytes(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def fmt_num(value, digits=4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "∞" if isinstance(value, float) and value == math.inf else "—"
    return f"{value:.{digits}f}"


def fmt_time(value) -> str:
    if value is None or not math.isfinite(value):
        return "not reached" if value is not None and math.isnan(value) else "—"
    return f"{value:.4g} s"


def fmt_ratio(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if value == math.inf:
        return "∞"
    rounded = float(f"{value:.3g}")  # three significant digits
    if abs(rounded) >= 1000:  # 1760×, not 1.76e+03×
        return f"{rounded:.0f}×"
    return f"{value:.3g}×"


def fmt_mean_std(mean, std, fmt) -> str:
    """'4.93 ± 0.03': the mean, and the standard deviation where there is one."""
    text = fmt(mean)
    if std is not None and isinstance(std, float) and math.isfinite(std):
        return f"{text} ± {fmt(std).replace(' s', '').replace('×', '')}"
    return text


def run_display(per_run: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({
        "run": per_run["run"],
        "method": per_run["method"],
        "scenario": per_run["scenario"],
        "seed": per_run["seed"],
        "W": per_run["world_size"],
        "steps": [f"{s}/{p}" if p is not None and not pd.isna(p) else f"{s}"
                  for s, p in zip(per_run["steps"], per_run["planned_steps"])],
        "status": per_run["status"],
        "final val loss": [fmt_num(v) for v in per_run["final_val_loss"]],
        "best val loss": [fmt_num(v) for v in per_run["best_val_loss"]],
        "bytes/step/rank": [fmt_bytes(v) for v in per_run["bytes_per_step"]],
        "ratio vs dense": [fmt_ratio(v) for v in per_run["compression_ratio"]],
        "sim. time to target (val)": [fmt_time(v) for v in per_run["time_to_target_val_s"]],
        "sim. time to target (train)": [fmt_time(v) for v in per_run["time_to_target_train_s"]],
        "final sim. time": [fmt_time(v) for v in per_run["final_simulated_s"]],
        "comm. exposed": [fmt_time(v) for v in per_run["comm_exposed_s"]],
        "comm. hidden": [fmt_time(v) for v in per_run["comm_hidden_s"]],
    })
    return out


def method_display(per_method: pd.DataFrame) -> pd.DataFrame:
    m = per_method

    def col(name, fmt):
        return [fmt_mean_std(a, b, fmt) for a, b in zip(m[f"{name}_mean"], m[f"{name}_std"])]

    runs = [f"{n}" + (f" (+{p} partial)" if p else "") + (" partial" if s == "partial" else "")
            for n, p, s in zip(m["n"], m["n_partial_excluded"], m["status"])]
    return pd.DataFrame({
        "method": m["method"],
        "scenario": m["scenario"],
        "W": m["world_size"],
        "runs": runs,
        "final val loss": col("final_val_loss", fmt_num),
        "best val loss": col("best_val_loss", fmt_num),
        "bytes/step/rank": col("bytes_per_step", fmt_bytes),
        "ratio vs dense": col("compression_ratio", fmt_ratio),
        "sim. time to target (val)": [f"{t} ({r}/{n})" for t, r, n in
                                      zip(col("time_to_target_val_s", fmt_time),
                                          m["reached_val"], m["n"])],
        "bytes/rank to target (val)": col("bytes_to_target_val", fmt_bytes),
        "final sim. time": col("final_simulated_s", fmt_time),
        "comm. exposed": col("comm_exposed_s", fmt_time),
        "comm. hidden": col("comm_hidden_s", fmt_time),
    })


def target_pivot(per_method: pd.DataFrame) -> pd.DataFrame:
    """Methods × network scenarios: mean simulated time to the target (validation loss)."""
    if per_method.empty:
        return pd.DataFrame()
    cells = {}
    several_sizes = per_method["world_size"].nunique() > 1
    for _, row in per_method.iterrows():
        # The rank count joins the label once: the method's label may already end with it.
        suffix = f" W={row['world_size']}"
        label = row["method"] + (suffix if several_sizes and not row["method"].endswith(suffix) else "")
        text = fmt_mean_std(row["time_to_target_val_s_mean"], row["time_to_target_val_s_std"],
                            fmt_time)
        cells.setdefault(label, {})[row["scenario"]] = f"{text} ({row['reached_val']}/{row['n']})"
    frame = pd.DataFrame.from_dict(cells, orient="index").fillna("—").sort_index()
    frame = frame[sorted(frame.columns, key=scenario_order)]
    frame.index.name = "method"
    return frame.reset_index()


_SCENARIOS = ["consumer", "1gbps", "10gbps", "100gbps", "ideal"]


def scenario_order(name: str):
    return (_SCENARIOS.index(name), name) if name in _SCENARIOS else (len(_SCENARIOS), name)


# --- writers --------------------------------------------------------------------------------

def to_markdown(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_(no rows)_\n"
    cols = [str(c) for c in frame.columns]

    def cell(v):
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cells for cells in map(cell, cols)) + " |",
             "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "±": r"$\pm$", "×": r"$\times$", "∞": r"$\infty$", "—": "---"}


def tex_escape(text) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(text))


def to_latex(frame: pd.DataFrame, caption: str = "", label: str = "") -> str:
    """A booktabs table (needs \\usepackage{booktabs})."""
    cols = list(frame.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{" + "l" * len(cols) + "}", r"\toprule",
             " & ".join(tex_escape(c) for c in cols) + r" \\", r"\midrule"]
    for row in frame.itertuples(index=False):
        lines.append(" & ".join(tex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + tex_escape(caption) + "}")
    if label:
        lines.append(r"\label{" + label + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_table(frame_raw: pd.DataFrame, frame_display: pd.DataFrame, out: Path, stem: str,
                caption: str) -> list[Path]:
    """stem.csv (raw numbers, full precision), stem.md and stem.tex (formatted)."""
    paths = [out / f"{stem}.csv", out / f"{stem}.md", out / f"{stem}.tex"]
    frame_raw.to_csv(paths[0], index=False)
    paths[1].write_text(to_markdown(frame_display), encoding="utf-8")
    paths[2].write_text(to_latex(frame_display, caption, f"tab:{stem}"), encoding="utf-8")
    return paths
