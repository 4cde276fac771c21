"""The figures the docs type by hand, recomputed from the tool, so that they cannot drift: the
model presets' parameter counts (docs/model.md's table and every "`tiny` ... (N M parameters)"
mention), the bytes per parameter docs/plan.md derives from the DeMo paper's AdamW figures, and
the experiment tables of docs/experiments.md and experiments/README.md (every file, its points).

usage: check_doc_figures.py LOWCOMM_EXE REPOSITORY_ROOT
"""
import glob
import os
import re
import subprocess
import sys

LOWCOMM, ROOT = sys.argv[1], sys.argv[2]


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def parameters(model):
    """The parameter count `lowcomm plan` prints for a model preset."""
    out = subprocess.run([LOWCOMM, "plan", "--model", model, "--world-size", "2", "--method",
                          "dense: strategy.name=data_parallel"], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"\(([\d,]+) parameters in", out).group(1).replace(",", ""))


failures = []


def expect(what, typed, computed):
    if typed != computed:
        failures.append(f"{what}: the docs say {typed}, the tool computes {computed}")


# The preset table of docs/model.md: "| `tiny` | ... | 0.84 M (tests) |".
counts = {}
for row in re.finditer(r"^\| `([a-z0-9.\-]+)` \|.*\| ([\d.]+) M[ |(]", read("docs/model.md"), re.M):
    name, typed = row.group(1), row.group(2)
    counts[name] = parameters(name)
    decimals = len(typed.split(".")[1]) if "." in typed else 0
    expect(f"docs/model.md, {name}", typed, f"{counts[name] / 1e6:.{decimals}f}")
if "tiny" not in counts or "small" not in counts:
    failures.append("docs/model.md: no preset table found")

# Every "the tiny GPT (N M parameters)" / "`small` GPT (N M parameters" elsewhere.
mentions = ["README.md", "apps/gpt/gpt/config.hpp"] + glob.glob("docs/*.md", root_dir=ROOT) + \
    glob.glob("experiments/*.toml", root_dir=ROOT)
found = 0
for path in mentions:
    for m in re.finditer(r"`?(tiny|small)`? (?:GPT )?\(([\d.]+) M parameters", read(path)):
        found += 1
        name, typed = m.group(1), m.group(2)
        decimals = len(typed.split(".")[1]) if "." in typed else 0
        expect(f"{path}, {name}", typed, f"{counts[name] / 1e6:.{decimals}f}")
    for m in re.finditer(r'"tiny" \([^)]*: ([\d.]+) M parameters', read(path)):
        found += 1
        expect(f"{path}, tiny", m.group(1), f"{counts['tiny'] / 1e6:.2f}")
if found < 4:
    failures.append(f"only {found} parameter-count mentions found; the patterns no longer match the docs")

# docs/plan.md: the AdamW figures' bytes per parameter (636.9 MB on OLMo 300M, 2416.6 MB on 1B).
plan = read("docs/plan.md")
m = re.search(r"imply ([\d.]+) \(300M, on its assumed shape\) and ([\d.]+) \(1B\) bytes per parameter", plan)
if not m:
    failures.append("docs/plan.md: the bytes-per-parameter sentence is gone")
else:
    expect("docs/plan.md, 300M bytes per parameter", m.group(1), f"{636.9e6 / parameters('olmo-300m'):.3f}")
    expect("docs/plan.md, 1B bytes per parameter", m.group(2), f"{2416.6e6 / parameters('olmo-1b'):.3f}")

# The experiment tables: every experiments/*.toml, with the points `lowcomm sweep --count` gives.
files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "experiments", "*.toml")))
numbers = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen", 17: "seventeen", 18: "eighteen", 19: "nineteen", 20: "twenty"}
for doc in ("docs/experiments.md", "experiments/README.md"):
    rows = dict(re.findall(r"^\| `([a-z0-9_]+\.toml)` \| (\d+) \|", read(doc), re.M))
    expect(f"{doc}, the files listed", sorted(rows), files)
    for name, typed in rows.items():
        count = subprocess.run([LOWCOMM, "sweep", "--count", os.path.join(ROOT, "experiments", name)], check=True,
                               capture_output=True, text=True).stdout.strip()
        expect(f"{doc}, points of {name}", typed, count)
shipped = re.search(r"`experiments/` ships (\w+):", read("docs/experiments.md"))
expect("docs/experiments.md, how many files ship", shipped.group(1) if shipped else None, numbers.get(len(files)))

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"doc figures: {len(counts)} presets, {found} mentions, plan's bytes per parameter, {len(files)} experiment files")
