"""Per-run and per-method tables, written as Markdown, CSV and LaTeX."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import targets


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
    runs without an evaluation. targets.default_target also says which run it is."""
    return targets.default_target(runs)[0]


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

def fmt_sig(value: float, digits: int = 4) -> str:
    """`digits` significant digits, never an exponent, thousands separated: ``11,570`` (not
    ``1.157e+04``), ``0.01234``, ``3.5``."""
    if value == 0:
        return "0"
    rounded = float(f"{value:.{digits}g}")
    exponent = math.floor(math.log10(abs(rounded)))
    text = f"{rounded:,.{max(0, digits - 1 - exponent)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # as %g: 3.5, not 3.500


_BYTE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))


def fmt_bytes(value: float) -> str:
    """Three significant digits with a unit (decimal: 1 MB = 10^6 bytes): ``3.37 MB``,
    ``512 B``, ``0.25 B`` (bytes per token may be fractions), ``1,230 TB`` past the largest."""
    if value is None or not math.isfinite(value):
        return "—"
    rounded = float(f"{value:.3g}")  # first, so that 999,999 B is 1 MB, not 1e+03 kB
    for unit, scale in _BYTE_UNITS:
        if abs(rounded) >= scale:
            return f"{fmt_sig(rounded / scale, 3)} {unit}"
    return f"{fmt_sig(rounded, 3)} B"


def fmt_num(value, digits=4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "∞" if isinstance(value, float) and value == math.inf else "—"
    return f"{value:,.{digits}f}"


def fmt_time(value) -> str:
    if value is None or not math.isfinite(value):
        return "not reached" if value is not None and math.isnan(value) else "—"
    return f"{fmt_sig(value)} s"


def fmt_seconds(value) -> str:
    """A duration that is not a time to target: ``—`` where the log lacks it (comm. exposed and
    hidden in logs written before those columns), not "not reached"."""
    if value is None or not math.isfinite(value):
        return "—"
    return fmt_time(value)


def fmt_ratio(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if value == math.inf:
        return "∞"
    return f"{fmt_sig(value, 3)}×"  # 1,760×, not 1.76e+03×


def fmt_count(value) -> str:
    """A whole number with thousands separators (``100,000``); blank where there is none."""
    if value is None or pd.isna(value):
        return ""
    return f"{int(value):,}"


def _reads_as_zero(text: str) -> bool:
    """Whether a formatted number shows no non-zero digit (``0 B``, ``0.0000``)."""
    return not any(ch in "123456789" for ch in text)


def fmt_mean_std(mean, std, fmt) -> str:
    """'4.93 ± 0.03': the mean, and the standard deviation where there is one that reads as
    more than zero (one seed has none; ``± 0 B`` says nothing the seed count does not)."""
    text = fmt(mean)
    if std is not None and isinstance(std, float) and math.isfinite(std):
        spread = fmt(std).replace(" s", "").replace("×", "")
        if not _reads_as_zero(spread):
            return f"{text} ± {spread}"
    return text


def run_display(per_run: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({
        "run": per_run["run"],
        "method": per_run["method"],
        "scenario": per_run["scenario"],
        "seed": per_run["seed"],
        "W": per_run["world_size"],
        "steps": [f"{fmt_count(s)}/{fmt_count(p)}" if p is not None and not pd.isna(p)
                  else fmt_count(s) for s, p in zip(per_run["steps"], per_run["planned_steps"])],
        "status": per_run["status"],
        "final val loss": [fmt_num(v) for v in per_run["final_val_loss"]],
        "best val loss": [fmt_num(v) for v in per_run["best_val_loss"]],
        "bytes/step/rank": [fmt_bytes(v) for v in per_run["bytes_per_step"]],
        "ratio vs dense": [fmt_ratio(v) for v in per_run["compression_ratio"]],
        "sim. time to target (val)": [fmt_time(v) for v in per_run["time_to_target_val_s"]],
        "sim. time to target (train)": [fmt_time(v) for v in per_run["time_to_target_train_s"]],
        "final sim. time": [fmt_seconds(v) for v in per_run["final_simulated_s"]],
        "comm. exposed": [fmt_seconds(v) for v in per_run["comm_exposed_s"]],
        "comm. hidden": [fmt_seconds(v) for v in per_run["comm_hidden_s"]],
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
        "final sim. time": col("final_simulated_s", fmt_seconds),
        "comm. exposed": col("comm_exposed_s", fmt_seconds),
        "comm. hidden": col("comm_hidden_s", fmt_seconds),
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


# --- the table a paper takes as it is ---------------------------------------------------------

def _compressions(frame: pd.DataFrame | None, prefix: str) -> dict:
    """(method, scenario, world size) -> a matched-loss table's target, compression and seeds
    reached, under column names starting with `prefix`."""
    if frame is None or frame.empty:
        return {}
    return {(row["method"], row["scenario"], row["world_size"]): {
        f"{prefix}target_val_loss": row["target_val_loss"],
        f"{prefix}compression": row["compression"],
        f"{prefix}reached": row["reached"], f"{prefix}n": row["n"]}
        for _, row in frame.iterrows()}


def paper_table(per_method: pd.DataFrame, matched: pd.DataFrame | None = None,
                at_target: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (method, scenario, world size) with what a paper's table reports: seeds,
    final validation loss (mean, std), bytes per step and rank, and compression at matched loss
    (`matched`: matched_loss_table at the baseline's final loss; `at_target`: at the report's
    target loss), raw, for paper.csv."""
    if per_method.empty:
        return pd.DataFrame()
    matched_cells = _compressions(matched, "matched_")
    target_cells = _compressions(at_target, "at_target_")
    rows = []
    for _, row in per_method.iterrows():
        key = (row["method"], row["scenario"], row["world_size"])
        rows.append({"method": row["method"], "scenario": row["scenario"],
                     "world_size": row["world_size"], "n": row["n"],
                     "final_val_loss_mean": row["final_val_loss_mean"],
                     "final_val_loss_std": row["final_val_loss_std"],
                     "bytes_per_step_mean": row["bytes_per_step_mean"],
                     **matched_cells.get(key, {}), **target_cells.get(key, {})})
    return pd.DataFrame(rows)


def fmt_loss_seeds(mean, std, n, digits: int = 3) -> str:
    """``4.931 ± 0.030`` over seeds; ``4.931 (n=1)`` where one seed, or seeds that do not
    differ at these digits, give no spread to show."""
    text = fmt_num(mean, digits)
    if n >= 2 and std is not None and math.isfinite(std):
        spread = fmt_num(std, digits)
        if not _reads_as_zero(spread):
            return f"{text} ± {spread}"
    return f"{text} (n={n})"


def fmt_compression_cell(ratio, reached, n, target) -> str:
    """A compression as a paper prints it: ``28.1×``, ``28.1× (1/2)`` where some seeds never
    reached the target (the mean is over those that did), ``not reached``, ``—`` without a
    target."""
    if target is None or not math.isfinite(target):
        return "—"
    if not reached:
        return "not reached"
    text = fmt_ratio(ratio)
    return text if reached == n else f"{text} ({int(reached)}/{int(n)})"


def paper_display(paper: pd.DataFrame, target: float | None = None) -> pd.DataFrame:
    """paper_table for reading: the scenario and rank-count columns only where they vary, a
    compression column for each matched-loss table the report has."""
    if paper.empty:
        return pd.DataFrame()
    shown = {"method": paper["method"]}
    if paper["scenario"].nunique() > 1:
        shown["network"] = paper["scenario"]
    if paper["world_size"].nunique() > 1:
        shown["W"] = paper["world_size"]
    shown["final val loss"] = [fmt_loss_seeds(m, s, n) for m, s, n in zip(
        paper["final_val_loss_mean"], paper["final_val_loss_std"], paper["n"])]
    shown["bytes/step/rank"] = [fmt_bytes(v) for v in paper["bytes_per_step_mean"]]
    for prefix, title in (("matched_", "compression at matched loss"),
                          ("at_target_", f"compression at loss {target:.4g}"
                           if target is not None and math.isfinite(target) else None)):
        if title is None or f"{prefix}compression" not in paper:
            continue
        shown[title] = [fmt_compression_cell(*cells) for cells in zip(
            paper[f"{prefix}compression"], paper[f"{prefix}reached"], paper[f"{prefix}n"],
            paper[f"{prefix}target_val_loss"])]
    return pd.DataFrame(shown)


_SCENARIOS = ["consumer", "1gbps", "10gbps", "100gbps", "ideal"]


def scenario_order(name: str):
    return (_SCENARIOS.index(name), name) if name in _SCENARIOS else (len(_SCENARIOS), name)


# --- writers --------------------------------------------------------------------------------

_MD_ALIGN = {"l": "---", "r": "---:", "c": ":---:"}


def to_markdown(frame: pd.DataFrame, align: str | None = None) -> str:
    """A pipe table; `align` as to_latex's (``lrr``: numbers right-aligned)."""
    if frame.empty:
        return "_(no rows)_\n"
    cols = [str(c) for c in frame.columns]
    align = align or "l" * len(cols)

    def cell(v):
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cells for cells in map(cell, cols)) + " |",
             "|" + "|".join(_MD_ALIGN[a] for a in align) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "±": r"$\pm$", "×": r"$\times$", "∞": r"$\infty$", "—": "---"}


def tex_escape(text) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(text))


def to_latex(frame: pd.DataFrame, caption: str = "", label: str = "",
             align: str | None = None) -> str:
    """A booktabs table (needs \\usepackage{booktabs}); `align` is the tabular's column
    specification (default: every column left-aligned)."""
    cols = list(frame.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{" + (align or "l" * len(cols)) + "}", r"\toprule",
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
                caption: str, align: str | None = None) -> list[Path]:
    """stem.csv (raw numbers, full precision), stem.md and stem.tex (formatted)."""
    paths = [out / f"{stem}.csv", out / f"{stem}.md", out / f"{stem}.tex"]
    frame_raw.to_csv(paths[0], index=False)
    paths[1].write_text(to_markdown(frame_display, align), encoding="utf-8")
    paths[2].write_text(to_latex(frame_display, caption, f"tab:{stem}", align), encoding="utf-8")
    return paths
