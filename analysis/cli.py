"""``python3 -m analysis report LOGS_OR_FOLDERS... --out DIR``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from .logs import find_logs, load_runs
from .matched_loss import BaselineError, choose_baseline, matched_display, matched_loss_table, \
    targets_by_scenario
from .methods import assign_labels
from .plans import load_plans, plan_display
from . import tables


def _count(n: int, noun: str) -> str:
    """'1 run', '3 runs'."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m analysis",
                                     description="Tables and plots from lowcomm run logs.")
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="write tables (Markdown, CSV, LaTeX) and plots "
                            "(PNG, PDF) of the runs found")
    report.add_argument("inputs", nargs="+", metavar="LOG_OR_FOLDER",
                        help="log files (and `lowcomm plan --hdf5` files), or folders searched "
                             "for */log.h5 and *.h5")
    report.add_argument("--out", required=True, type=Path, help="folder for the report")
    report.add_argument("--target-loss", type=float, default=None,
                        help="loss for the time-to-target columns (default: the worst final "
                             "validation loss over the complete runs)")
    report.add_argument("--method-key", action="append", default=[], metavar="KEY",
                        help="config key whose value joins every method label, e.g. "
                             "schedule.lr (repeatable)")
    report.add_argument("--baseline", default=None, metavar="METHOD",
                        help="method label (as the tables show it) of the AdamW dense "
                             "all-reduce that compression at matched loss is measured against "
                             "(default: the only data_parallel method with compressor none and "
                             "AdamW, if there is exactly one)")
    report.add_argument("--no-plots", action="store_true", help="tables only")
    return parser


def _plan_section(plans, out: Path) -> tuple[list[str], list[Path]]:
    """The planned budgets' table and its summary lines."""
    display = plan_display(plans)
    written = tables.write_table(plans, display, out, "planned",
                                 "Planned bytes and communication time per rank and step")
    lines = ["## Planned budgets (`lowcomm plan`)", "",
             "Per rank and step, without training (docs/plan.md): payload is what a rank "
             "contributes, wire what the modelled algorithms move on its link, (W-1)x payload "
             "DisTrO's \"received per step\"; MB = 10^6 bytes.", "",
             tables.to_markdown(display)]
    return lines, written


def report(args) -> int:
    paths = find_logs(args.inputs)  # once: a missing input is reported once
    runs, skipped = load_runs(paths)
    plans, plan_skipped = load_plans(paths)
    skipped += plan_skipped
    if not runs and plans.empty:
        print("analysis: no readable run logs or plan files found", file=sys.stderr)
        return 1
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    written, lines = [], ["# lowcomm ablation report", ""]
    summary_line = "no training runs"
    if runs:
        try:
            run_lines, run_written, summary_line = _run_sections(runs, skipped, args, out)
        except BaselineError as error:
            print(f"analysis: {error}", file=sys.stderr)
            return 2
        lines += run_lines
        written += run_written
    elif skipped:
        lines += ["Skipped files:", ""] + [f"- `{p}`: {why}" for p, why in skipped] + [""]
    if not plans.empty:
        plan_lines, plan_written = _plan_section(plans, out)
        lines += plan_lines
        written += plan_written
        summary_line += f", {len(plans)} planned methods"
    summary = out / "summary.md"
    summary.write_text("\n".join(lines), encoding="utf-8")
    written.append(summary)
    print(f"analysis: {summary_line}; wrote {len(written)} files to {out}")
    return 0


def _matched_section(runs, baseline, baseline_how: str, out: Path):
    """Compression at matched loss (matched_loss.py): summary lines, files written, and the
    targets per scenario for the frontier plot. Without a baseline, only a note."""
    if baseline is None:
        print(f"analysis: {baseline_how}", file=sys.stderr)
        return ["## Compression at matched loss", "", baseline_how + ".", ""], [], {}
    matched, notes = matched_loss_table(runs, baseline)
    display = matched_display(matched)
    written = tables.write_table(matched, display, out, "matched_loss",
                                 f"Bytes to the final validation loss of {baseline}")
    lines = [
        f"## Compression at matched loss (baseline `{baseline}`, {baseline_how})", "",
        "Target: the baseline's final validation loss, mean over its seeds, per network "
        "scenario and world size. Compression = the baseline's bytes per rank until its first "
        "evaluation at or below the target / the method's (mean over the seeds that reached "
        "it, shown as reached/seeds); per token the same with bytes per token processed until "
        "then; vs bf16 all-reduce with the baseline's bytes as a 2-byte wire would send them.",
        ""]
    lines += [f"- {note}" for note in notes] + ["", tables.to_markdown(display)]
    return lines, written, targets_by_scenario(matched)


def _run_sections(runs, skipped, args, out: Path) -> tuple[list[str], list[Path], str]:
    """The training runs' tables and plots: summary lines, files written, one-line summary."""
    assign_labels(runs, args.method_key)
    target = args.target_loss if args.target_loss is not None else tables.default_target(runs)
    target_how = ("given (--target-loss)" if args.target_loss is not None else
                  "default: the worst final validation loss over the complete runs")

    # Before any table is written: a --baseline that names no method stops the report.
    baseline, baseline_how = choose_baseline(runs, args.baseline)

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
    matched_lines, matched_written, matched_targets = _matched_section(runs, baseline,
                                                                      baseline_how, out)
    written += matched_written
    plots = []
    if not args.no_plots:
        from .plots import plot_all  # matplotlib only when plotting
        plots = plot_all(runs, per_run, out, target, matched_targets)
        written += plots

    partial = int((per_run["status"] == "partial").sum())
    lines = [
        f"{_count(len(runs), 'run')} ({partial} partial), {_count(per_method.shape[0], 'method/scenario group')}; "
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
              tables.to_markdown(tables.method_display(per_method))]
    lines += matched_lines
    lines += [f"## Simulated time to validation loss ≤ {target:.4g}, per network scenario", "",
              "Cells: mean ± std over the runs that reached it (reached/runs).", "",
              tables.to_markdown(pivot),
              "## Every run", "", tables.to_markdown(tables.run_display(per_run))]
    if plots:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots
                                     if p.suffix == ".png"] + [""]
    summary_line = (f"{_count(len(runs), 'run')} ({partial} partial, {len(skipped)} skipped), "
                    f"target loss {target:.4g}")
    return lines, written, summary_line


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "report":
        return report(args)
    return 2
