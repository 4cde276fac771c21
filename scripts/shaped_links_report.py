"""Modelled against measured collective times on shaped links (scripts/shaped-links.sh).

    /usr/bin/python3 scripts/shaped_links_report.py OUT [--check TOLERANCE] [--check-model]

Reads OUT/w<W>-<rate>mbit.h5 (bench collectives logs), writes OUT/shaped-links.md (one row per
collective, W, rate and size: measured and modelled seconds, their ratio, and whether the size is
bandwidth-bound: the model's latency terms are at most 10 % of its time, and each rank sends at
least 8 times tbf's burst, which a message smaller than the bucket crosses at the veth's own
speed) and OUT/shaped-links.png, and prints the worst bandwidth-bound ratio: the benchmark's
figure. With --check, exits 1 when a bandwidth-bound row's modelled time is off the measured one by
more than TOLERANCE (a fraction, e.g. 0.10): a statement about the machine's links at that moment,
for a benchmark run alone, not a test. With --check-model, exits 1 unless what does not depend on
timing holds (what the CTest cli.shaped_links checks): every log has rows for both collectives,
every measured time is positive and finite, and every modelled time is the ring's alpha-beta cost
of the bytes its busiest rank sent (REFERENCE.md section 6) at the log's rate.
"""

import argparse
import re
import sys
from pathlib import Path

import h5py
import numpy as np

LATENCY_S = 0.05e-3  # the latency shaped-links.sh gives the model (no delay can be added here)


def burst_bytes(rate_mbit: int) -> int:
    """tbf's bucket as shaped-links.sh sets it: 1 ms at the rate, at least 16000 bytes."""
    return max(rate_mbit * 125, 16000)


def rows(out: Path):
    for log in sorted(out.glob("w*-*mbit.h5")):
        match = re.fullmatch(r"w(\d+)-(\d+)mbit", log.stem)
        if not match:
            continue
        world, rate = int(match[1]), int(match[2])
        with h5py.File(log, "r", libver="latest", swmr=True) as f:
            for collective in ("all_reduce", "all_gather"):
                g = f[collective]
                sent = g["bytes_sent"][:]
                for row, (size, measured, modelled) in enumerate(zip(g["bytes"][:], g["time_s"][:],
                                                                     g["modelled_s"][:])):
                    # Latency share of the model: rounds x latency (ring: 2(W-1) or W-1 rounds).
                    rounds = 2 * (world - 1) if collective == "all_reduce" else world - 1
                    bandwidth_bound = (modelled > 0 and rounds * LATENCY_S <= 0.1 * modelled
                                       and sent[row].min() >= 8 * burst_bytes(rate))
                    yield dict(collective=collective, world=world, rate=rate, size=int(size),
                               measured=float(measured), modelled=float(modelled),
                               busiest_sent=int(sent[row].max()), bandwidth_bound=bandwidth_bound)


def model_problems(table) -> list[str]:
    """What --check-model finds wrong: the deterministic half of the comparison. The ring moves
    a rank's bytes in rounds (2(W-1) for all-reduce, W-1 for all-gather), each paying the latency,
    and the model charges the busiest rank's bytes at the link's rate."""
    problems = []
    for world in sorted({r["world"] for r in table}):
        for rate in sorted({r["rate"] for r in table if r["world"] == world}):
            got = {r["collective"] for r in table if r["world"] == world and r["rate"] == rate}
            if got != {"all_reduce", "all_gather"}:
                problems.append(f"W = {world}, {rate} Mbit/s: rows for {sorted(got)} only")
    for r in table:
        where = f"{r['collective']} W = {r['world']} {r['rate']} Mbit/s {r['size']} B"
        if not (np.isfinite(r["measured"]) and r["measured"] > 0):
            problems.append(f"{where}: measured {r['measured']}")
        rounds = 2 * (r["world"] - 1) if r["collective"] == "all_reduce" else r["world"] - 1
        expected = rounds * LATENCY_S + r["busiest_sent"] / (r["rate"] * 1e6 / 8)
        if not abs(r["modelled"] - expected) <= 1e-3 * expected:
            problems.append(f"{where}: modelled {r['modelled']:.6g} s, the ring's cost of its bytes is {expected:.6g} s")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--check", type=float, default=None, metavar="TOLERANCE")
    parser.add_argument("--check-model", action="store_true")
    args = parser.parse_args()
    table = list(rows(args.out))
    if not table:
        print(f"shaped_links_report: no w<W>-<rate>mbit.h5 logs in {args.out}", file=sys.stderr)
        return 1
    lines = ["| collective | W | Mbit/s | size (B) | measured (s) | modelled (s) | modelled / measured | bandwidth-bound |",
             "|---|---|---|---|---|---|---|---|"]
    worst = 0.0
    for r in table:
        ratio = r["modelled"] / r["measured"]
        if r["bandwidth_bound"]:
            worst = max(worst, abs(ratio - 1))
        lines.append(f"| {r['collective']} | {r['world']} | {r['rate']} | {r['size']} | {r['measured']:.4g} | "
                     f"{r['modelled']:.4g} | {ratio:.3f} | {'yes' if r['bandwidth_bound'] else 'no'} |")
    (args.out / "shaped-links.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"\nworst |modelled/measured - 1| over bandwidth-bound rows: {worst:.3f}")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 5))
    for collective, marker in (("all_reduce", "o"), ("all_gather", "s")):
        picked = [r for r in table if r["collective"] == collective]
        ax.scatter([r["measured"] for r in picked], [r["modelled"] for r in picked], marker=marker,
                   c=[np.log10(r["rate"]) for r in picked], cmap="viridis", label=collective)
    low = min(min(r["measured"], r["modelled"]) for r in table)
    high = max(max(r["measured"], r["modelled"]) for r in table)
    ax.plot([low, high], [low, high], "k--", lw=0.8, label="modelled = measured")
    ax.set(xscale="log", yscale="log", xlabel="measured (s)", ylabel="modelled (s)",
           title="Collectives on tbf-shaped veth links (colour: log10 Mbit/s)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "shaped-links.png", dpi=120)
    if args.check_model:
        problems = model_problems(table)
        for problem in problems:
            print(f"shaped_links_report: {problem}", file=sys.stderr)
        if problems:
            return 1
    if args.check is not None and worst > args.check:
        print(f"shaped_links_report: a bandwidth-bound row is {worst:.1%} off (tolerance {args.check:.0%})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
