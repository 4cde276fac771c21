"""``python3 -m analysis report LOGS_OR_FOLDERS... --out DIR``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from .logs import load_runs
from .methods import assign_labels
from . import tables


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m analysis",
                                     description="Tables and plots from lowcomm run logs.")
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="write tables (Markdown, CSV, LaTeX) and plots "
                            "(PNG, PDF) of the runs found")
    report.add_argument("inputs", nargs="+", metavar="LOG_OR_FOLDER",
                        help="log files, or folders searched for */log.h5 and *.h5")
    report.add_argument("--out", required=True, type=Path, help="folder for the report")
    report.add_argument("--target-loss", type=float, default=None,
                        help="loss for the time-to-target columns (default: the worst final "
                             "validation loss over the complete runs)")
    report.add_argument("--method-key", action="append", default=[], metavar="KEY",
                        help="config key whose value joins every method label, e.g. "
                             "schedule.lr (repeatable)")
    report.add_argument("--no-plots", action="store_true", help="tables only")
    return parser


def report(args) -> int:
    runs, skipped = load_runs(args.inputs)
    if not runs:
        print("analysis: no readable run logs found", file=sys.stderr)
        return 1
    assign_labels(runs, args.method_key)
    target = args.target_loss if args.target_loss is not None else tables.default_target(runs)
    target_how = ("given (--target-loss)" if args.target_loss is not None else
                  "default: the worst final validation loss over the complete runs")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    per_run = tables.run_table(runs, target)
    per_method = tables.method_table(per_run)
    pivot = tables.target_pivot(per_method)
    written = []
    written += tables.write_table(per_run, tables.run_display(per_run), out, "runs",
                                  "Every run")
    written += tables.write_table(per_method, tables.method_display(per_method), out, "methods",
                                  "Per method and network scenario, mean ± std over seeds")
    written += tables.write_table(pivot, pivot, out, "time_to_target",
                                  f"Simulated time to validation loss {target:.4g}")
    plots = []
    if not args.no_plots:
        from .plots import plot_all  # matplotlib only when plotting
        plots = plot_all(runs, per_run, out, target)
        written += plots

    partial = int((per_run["status"] == "partial").sum())
    lines = [
        "# lowcomm ablation report", "",
        f"{len(runs)} runs ({partial} partial), {per_method.shape[0]} method/scenario groups; "
        f"target loss {target:.4g} ({target_how}).", "",
        "Bytes are bytes sent per optimizer step per rank (mean over steps and ranks); the "
        "ratio is dense / that, dense being a ring all-reduce of every fp32 parameter, "
        "2(W-1)/W · 4 · parameters. Times are the simulated wall clock (compute as measured, "
        "communication as the network model predicts). A partial run (fewer steps than "
        "train.steps) is listed but left out of its method's mean when complete runs exist.",
        ""]
    if skipped:
        lines += ["Skipped files:", ""] + [f"- `{p}`: {why}" for p, why in skipped] + [""]
    lines += ["## Per method (mean ± std over seeds)", "",
              tables.to_markdown(tables.method_display(per_method)),
              f"## Simulated time to validation loss ≤ {target:.4g}, per network scenario", "",
              "Cells: mean ± std over the runs that reached it (reached/runs).", "",
              tables.to_markdown(pivot),
              "## Every run", "", tables.to_markdown(tables.run_display(per_run))]
    if plots:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots
                                     if p.suffix == ".png"] + [""]
    summary = out / "summary.md"
    summary.write_text("\n".join(lines), encoding="utf-8")
    written.append(summary)
    print(f"analysis: {len(runs)} runs ({partial} partial, {len(skipped)} skipped), "
          f"target loss {target:.4g}; wrote {len(written)} files to {out}")
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "report":
        return report(args)
    return 2
