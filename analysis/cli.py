"""``python3 -m analysis report LOGS_OR_FOLDERS... --out DIR``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from .best_of import BestOfError, best_of_display, choose_best_of
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
    report.add_argument("--best-of", default=None, metavar="KEY",
                        help="config key, e.g. schedule.lr: of each method's runs that differ "
                             "in KEY, keep only those of the value with the lowest mean final "
                             "validation loss (per network scenario and world size); the "
                             "value joins the label as with --method-key KEY")
    report.add_argument("--baseline", default=None, metavar="METHOD",
                        help="method label (as the tables show it) of the AdamW dense "
                             "all-reduce that compression at matched loss is measured against "
                             "(default: the only data_parallel method with compressor none and "
                             "AdamW, or the fp32-wire one of such methods that differ only in "
                             "compressor.none.value_type and the --best-of key)")
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
        except (BaselineError, BestOfError) as error:
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


def _matched_section(runs, baseline, baseline_how: str, target: float, target_how: str,
                     out: Path):
    """Compression at matched loss (matched_loss.py), at the baseline's final loss and at the
    report's target loss: summary lines, files written, and the targets per scenario for the
    frontier plot. Without a baseline, only a note."""
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
    if math.isfinite(target):
        looser, looser_notes = matched_loss_table(runs, baseline, target_loss=target)
        looser_display = matched_display(looser)
        written += tables.write_table(looser, looser_display, out, "matched_loss_at_target",
                                      f"Bytes to validation loss {target:.4g}")
        lines += [
            f"## Compression at the target loss {target:.4g} ({target_how})", "",
            "The same comparison at the report's target loss, one for every scenario: a "
            "method that never gets as low as the baseline's final loss still has a "
            "compression at a loss both reach.", ""]
        lines += [f"- {note}" for note in looser_notes[1:]]  # the bf16 note is said above
        lines += ["", tables.to_markdown(looser_display)]
    return lines, written, targets_by_scenario(matched)


def _best_of_section(choice, out: Path) -> tuple[list[str], list[Path]]:
    """The --best-of table (best_of.py) and its summary lines."""
    display = best_of_display(choice.table)
    written = tables.write_table(choice.table, display, out, "best_of",
                                 f"Each method family's candidate values of {choice.key}")
    kept, total = len(choice.kept), len(choice.kept) + len(choice.dropped)
    lines = [
        f"## Best of `{choice.key}` (--best-of)", "",
        f"Runs whose method labels agree but for `{choice.key}` form a method family (its "
        f"value shown as `*`). Per family, network scenario and world size, the value of "
        f"`{choice.key}` whose complete runs have the lowest mean final validation loss over "
        "seeds is kept (ties: the smaller value; a value with a complete run that has no "
        "validation loss, or with no complete run, ranks last). Every table and plot below "
        f"uses only the kept runs ({kept} of {total}), labelled with the chosen value. The "
        "choice is made on the same seeds the tables then report: a mild optimistic bias, "
        "alike for every method (the baseline included).", ""]
    # While a study is still running, values may be compared on different numbers of seeds.
    groups = choice.table.groupby(["family", "scenario", "world_size"])
    uneven = sum(group["n"].nunique() > 1 for _, group in groups)
    if uneven:
        lines += [f"In {uneven} of {len(groups)} (family, scenario, W) groups the values were "
                  "compared on unequal numbers of complete seeds (the seeds column).", ""]
    edges = int(choice.table["at_edge"].sum()) if len(choice.table) else 0
    if edges:
        lines += [f"In {edges} of {len(groups)} groups the chosen value is the smallest or largest "
                  f"of the three or more tried (chosen: \"the edge\"): the best may lie beyond it, "
                  f"and the sweep of `{choice.key}` should be extended there.", ""]
    lines.append(tables.to_markdown(display))
    return lines, written


def _run_sections(runs, skipped, args, out: Path) -> tuple[list[str], list[Path], str]:
    """The training runs' tables and plots: summary lines, files written, one-line summary."""
    # --best-of KEY labels the kept runs as --method-key KEY would (once, even if also given).
    method_keys = list(dict.fromkeys(args.method_key + ([args.best_of] if args.best_of else [])))
    assign_labels(runs, method_keys)
    choice = None
    if args.best_of:
        choice = choose_best_of(runs, args.best_of, method_keys)
        if args.baseline is not None and args.baseline in choice.dropped_labels:
            raise BaselineError(f"--baseline {args.baseline!r} names runs that --best-of "
                                f"{args.best_of} left out: another value of {args.best_of} "
                                "did better (best_of.md lists the values kept)")
        runs = choice.kept
    target = args.target_loss if args.target_loss is not None else tables.default_target(runs)
    target_how = ("given (--target-loss)" if args.target_loss is not None else
                  "default: the worst final validation loss over the complete runs")

    # Before any table is written: a --baseline that names no method stops the report.
    baseline, baseline_how = choose_baseline(runs, args.baseline,
                                             tuned_keys=(args.best_of,) if args.best_of else ())

    per_run = tables.run_table(runs, target)
    per_method = tables.method_table(per_run)
    pivot = tables.target_pivot(per_method)
    written, best_lines = [], []
    if choice is not None:
        best_lines, best_written = _best_of_section(choice, out)
        written += best_written
    written += tables.write_table(per_run, tables.run_display(per_run), out, "runs",
                                  "Every run")
    written += tables.write_table(per_method, tables.method_display(per_method), out, "methods",
                                  "Per method and network scenario, mean ± std over seeds")
    written += tables.write_table(pivot, pivot, out, "time_to_target",
                                  f"Simulated time to validation loss {target:.4g}")
    matched_lines, matched_written, matched_targets = _matched_section(
        runs, baseline, baseline_how, target, target_how, out)
    written += matched_written
    plots = []
    if not args.no_plots:
        from .plots import plot_all  # matplotlib only when plotting
        plots = plot_all(runs, per_run, out, target, matched_targets)
        written += plots

    partial = int((per_run["status"] == "partial").sum())
    runs_text = _count(len(runs), "run")
    if choice is not None:
        runs_text = (f"{len(runs)} of {_count(len(runs) + len(choice.dropped), 'run')} kept by "
                     f"--best-of {args.best_of}")
    lines = [
        f"{runs_text} ({partial} partial), "
        f"{_count(per_method.shape[0], 'method/scenario group')}; "
        f"target loss {target:.4g} ({target_how}).", "",
        "Bytes are bytes sent per optimizer step per rank (mean over steps and ranks); the "
        "ratio is dense / that, dense being a ring all-reduce of every fp32 parameter, "
        "2(W-1)/W · 4 · parameters. Times are the simulated wall clock (compute as measured, "
        "communication as the network model predicts). A partial run (fewer steps than "
        "train.steps) is listed but left out of its method's mean when complete runs exist.",
        ""]
    if skipped:
        lines += ["Skipped files:", ""] + [f"- `{p}`: {why}" for p, why in skipped] + [""]
    lines += best_lines
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
    summary_line = (f"{runs_text} ({partial} partial, "
                    f"{len(skipped)} skipped), target loss {target:.4g}")
    return lines, written, summary_line


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "report":
        return report(args)
    return 2
