"""``python3 -m analysis report LOGS_OR_FOLDERS... --out DIR``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from .best_of import BestOfError, best_of_display, choose_best_of
from .logs import find_logs, load_runs
from .matched_loss import BaselineError, choose_baseline, matched_display, matched_loss_table, \
    names_method, targets_by_scenario, unreached_warnings
from .methods import assign_labels
from .plans import load_plans, plan_display
from . import tables, targets


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
                             "validation loss over the complete runs; summary.md names that "
                             "run and warns where it diverged or is an outlier among its seeds)")
    report.add_argument("--method-key", action="append", default=[], metavar="KEY",
                        help="config key whose value joins every method label, e.g. "
                             "schedule.lr (repeatable)")
    report.add_argument("--best-of", default=None, metavar="KEY",
                        help="config key, e.g. schedule.lr: of each method's runs that differ "
                             "in KEY, keep only those of the value with the lowest mean final "
                             "validation loss (per network scenario and world size); the "
                             "value joins the label as with --method-key KEY")
    report.add_argument("--baseline", default=None, metavar="METHOD",
                        help="method label (as the tables show it; or a method name, or a "
                             "label from the keys, that picks out one) of the AdamW dense "
                             "all-reduce that compression at matched loss is measured against "
                             "(default: the only data_parallel method with compressor none and "
                             "AdamW, or the fp32-wire one of such methods that differ only in "
                             "compressor.none.value_type and the --best-of key)")
    report.add_argument("--labels", choices=("names", "keys"), default="names",
                        help="how methods are labelled: names (default) by the method's name "
                             "in the experiment file the run came from (the log's attribute "
                             "`method` or the config's experiment.method) where it has one, "
                             "by its settings otherwise; keys by its settings always "
                             "(e.g. 'diloco H=30/sparseloco beta=0.95')")
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
    report's target loss: summary lines, files written, the targets per scenario for the
    frontier plot, the two tables (raw; None where not made) and warnings. Without a baseline,
    only a note."""
    if baseline is None:
        print(f"analysis: {baseline_how}", file=sys.stderr)
        return (["## Compression at matched loss", "", baseline_how + ".", ""], [], {}, None,
                None, [])
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
    looser = None
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
    return (lines, written, targets_by_scenario(matched), matched, looser,
            unreached_warnings(matched))


def _paper_section(per_method, matched, looser, baseline, target: float, out: Path):
    """The compact table a paper takes as it is (tables.paper_table): summary lines and files."""
    paper = tables.paper_table(per_method, matched, looser)
    display = tables.paper_display(paper, target)
    align = "".join("l" if column in ("method", "network") else "r" for column in display.columns)
    caption = ("Final validation loss (mean ± std over seeds; n where there is no spread) and "
               "bytes sent per optimizer step and rank")
    if baseline is not None:
        caption += (f"; compression at matched loss: the bytes {baseline} sent until its first "
                    "evaluation at or below its own final validation loss over the bytes each "
                    "method sent until then (reached/seeds where not every seed got there)")
    written = tables.write_table(paper, display, out, "paper", caption, align)
    lines = ["## For a paper (`paper.md`, `paper.tex`)", "",
             caption + ". The full tables follow; the CSV files hold the raw numbers.", "",
             tables.to_markdown(display, align)]
    return lines, written


def _best_of_section(choice, out: Path) -> tuple[list[str], list[Path]]:
    """The --best-of table (best_of.py) and its summary lines."""
    display = best_of_display(choice.table)
    written = tables.write_table(choice.table, display, out, "best_of",
                                 f"Each method family's candidate values of {choice.key}")
    kept, total = len(choice.kept), len(choice.kept) + len(choice.dropped)
    lines = [
        f"## Best of `{choice.key}` (--best-of)", "",
        f"Runs whose method labels from the keys agree but for `{choice.key}` form a method "
        f"family (its value shown as `*`; a family whose runs share a method name is shown by "
        f"it). Per family, network scenario and world size, the value of "
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


def _target(runs, args) -> tuple[float, str, str, list[str]]:
    """The report's target loss, how it was chosen, the sentence saying which run set it
    (default target only), and the warnings about that run (targets.py)."""
    if args.target_loss is not None:
        return args.target_loss, "given (--target-loss)", "", []
    target, run = targets.default_target(runs)
    how = "default: the worst final validation loss over the complete runs"
    if run is None:
        return target, how, "", []
    which = (f"The default target is set by run `{run.name}` (method `{run.label}`, "
             f"scenario `{run.scenario}`, {run.path})"
             + ("" if len(run.evals) else ", by its final training loss: it has no evaluation")
             + ".")
    return target, how, which, targets.target_run_warnings(run, runs)


def _baseline_left_out(choice, requested: str | None) -> bool:
    """Whether --baseline names only runs that --best-of left out."""
    if requested is None or choice is None:
        return False
    return (not any(names_method(run, requested) for run in choice.kept)
            and any(names_method(run, requested) for run in choice.dropped))


def _run_sections(runs, skipped, args, out: Path) -> tuple[list[str], list[Path], str]:
    """The training runs' tables and plots: summary lines, files written, one-line summary."""
    # --best-of KEY labels the kept runs as --method-key KEY would (once, even if also given).
    method_keys = list(dict.fromkeys(args.method_key + ([args.best_of] if args.best_of else [])))
    names = getattr(args, "labels", "names") == "names"
    assign_labels(runs, method_keys, names=names)
    choice = None
    if args.best_of:
        choice = choose_best_of(runs, args.best_of, method_keys, names=names)
        if _baseline_left_out(choice, args.baseline):
            raise BaselineError(f"--baseline {args.baseline!r} names runs that --best-of "
                                f"{args.best_of} left out: another value of {args.best_of} "
                                "did better (best_of.md lists the values kept)")
        runs = choice.kept
    target, target_how, target_which, warnings = _target(runs, args)

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
    matched_lines, matched_written, matched_targets, matched, looser, unreached = \
        _matched_section(runs, baseline, baseline_how, target, target_how, out)
    written += matched_written
    warnings += unreached
    paper_lines, paper_written = _paper_section(per_method, matched, looser, baseline, target,
                                                out)
    written += paper_written
    plots = []
    if not args.no_plots:
        from .plots import plot_all  # matplotlib only when plotting
        plots = plot_all(runs, per_run, out, target, matched_targets)
        written += plots

    for warning in warnings:
        print(f"analysis: warning: {warning}", file=sys.stderr)
    partial = int((per_run["status"] == "partial").sum())
    runs_text = _count(len(runs), "run")
    if choice is not None:
        runs_text = (f"{len(runs)} of {_count(len(runs) + len(choice.dropped), 'run')} kept by "
                     f"--best-of {args.best_of}")
    lines = [
        f"{runs_text} ({partial} partial), "
        f"{_count(per_method.shape[0], 'method/scenario group')}; "
        f"target loss {target:.4g} ({target_how})."
        + (f" {target_which}" if target_which else ""), "",
        "Bytes are bytes sent per optimizer step per rank (mean over steps and ranks); the "
        "ratio is dense / that, dense being a ring all-reduce of every fp32 parameter, "
        "2(W-1)/W · 4 · parameters. Times are the simulated wall clock (compute as measured, "
        "communication as the network model predicts). A partial run (fewer steps than "
        "train.steps) is listed but left out of its method's mean when complete runs exist.",
        ""]
    if warnings:
        lines += ["**Warnings:**", ""] + [f"- {warning}" for warning in warnings] + [""]
    if skipped:
        lines += ["Skipped files:", ""] + [f"- `{p}`: {why}" for p, why in skipped] + [""]
    lines += best_lines
    lines += paper_lines
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
                    f"{len(skipped)} skipped), target loss {target:.4g}"
                    + (f", {_count(len(warnings), 'warning')}" if warnings else ""))
    return lines, written, summary_line


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "report":
        return report(args)
    return 2
