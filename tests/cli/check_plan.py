"""`lowcomm plan` against numbers computed by hand (usage: check_plan.py LOWCOMM JSON_MODEL).

Each case runs the command with --csv and compares the columns with values derived here from the
wire formats (docs/plan.md) and REFERENCE.md §6's ring costs, not from lowcomm's code.
"""

import csv
import subprocess
import sys
import tempfile
from pathlib import Path

LOWCOMM, JSON_MODEL = sys.argv[1], sys.argv[2]
failures = []


def plan(*arguments):
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "plan.csv"
        subprocess.run([LOWCOMM, "plan", *arguments, "--csv", str(out)], check=True, stdout=subprocess.DEVNULL)
        return {row["method"]: row for row in csv.DictReader(out.open())}


def expect(rows, method, column, value, tolerance=0.0):
    got = float(rows[method][column])
    if abs(got - value) > tolerance * abs(value):
        failures.append(f"{method} {column}: got {got!r}, expected {value!r}")


# tiny (842,496 parameters; W = 4 divides it): a ring all-reduce sends 2(W-1) chunks of 4N/W
# bytes, each round paying 10 ms + chunk / 125 MB/s on the default 1gbps network.
n = 842_496
rows = plan("--model", "tiny", "--world-size", "4", "--method", "dense:",
            "--method", "diloco: strategy.name=diloco strategy.diloco.inner_steps=50",
            "--method", "bf16: compressor.none.value_type=bf16")
expect(rows, "dense", "parameters", n)
expect(rows, "dense", "payload_bytes", 4 * n)
expect(rows, "dense", "wire_sent_bytes", 2 * 3 / 4 * 4 * n)
expect(rows, "dense", "wire_received_bytes", 2 * 3 / 4 * 4 * n)
expect(rows, "dense", "distro_received_bytes", 3 * 4 * n)
expect(rows, "dense", "collectives", 1)
expect(rows, "dense", "comm_s", 6 * (0.010 + n / 1.25e8), 1e-12)
expect(rows, "bf16", "payload_bytes", 2 * n)
expect(rows, "diloco", "syncs_per_step", 1 / 50, 1e-15)
expect(rows, "diloco", "payload_bytes", 4 * n / 50, 1e-15)
# SparseLoCo's published accounting: 146x fewer bytes per round than DiLoCo's fp32 pseudo-gradient
# (H = 30 both). Per selected entry of 64 in 4096: 12 bits of index and 2 of code, so
# 4 / (1.75 / 64) = 146.3x, less the per-tensor codebooks (llama-1.2b: 145.8x).
rows = plan("--model", "llama-1.2b", "--world-size", "32",
            "--method", "fp32: strategy.name=diloco strategy.diloco.inner_steps=30",
            "--method", "sparseloco: strategy.name=diloco strategy.diloco.inner_steps=30 compressor.name=sparseloco")
ratio = float(rows["fp32"]["payload_bytes"]) / float(rows["sparseloco"]["payload_bytes"])
if not 145.0 < ratio < 146.4:
    failures.append(f"sparseloco's payload ratio to fp32 DiLoCo is {ratio:.2f}, not the published 146x")
# NoLoCo: every H = 50 steps each rank swaps its fp32 weights with one partner: one round of
# 10 ms + 4n / 125 MB/s, a model out and a model in (and twice that when pull != outer_lr).
rows = plan("--model", "tiny", "--world-size", "4", "--method", "noloco: strategy.name=noloco",
            "--method", "noloco2: strategy.name=noloco strategy.noloco.pull=0.5")
expect(rows, "noloco", "payload_bytes", 4 * n / 50, 1e-15)
expect(rows, "noloco", "wire_sent_bytes", 4 * n / 50, 1e-15)
expect(rows, "noloco", "wire_received_bytes", 4 * n / 50, 1e-15)
expect(rows, "noloco", "comm_s", (0.010 + 4 * n / 1.25e8) / 50, 1e-12)
expect(rows, "noloco2", "payload_bytes", 2 * 4 * n / 50, 1e-15)
# 1-bit Adam past its freeze_step, W = 4: n is a multiple of W·lcm(W, 8) = 32, so N = n and each
# rank's chunk is N/32 bytes of signs. The all-to-all hands 3 chunks on (3 pairwise rounds), three
# ring all-gathers (worker scale, server signs, server scale) send 3 blocks each.
rows = plan("--model", "tiny", "--world-size", "4", "--method", "onebit: strategy.name=onebit_adam")
chunk = n // 32
expect(rows, "onebit", "payload_bytes", 3 * chunk + 4 + chunk + 4)
expect(rows, "onebit", "wire_sent_bytes", 3 * (2 * chunk + 8))
expect(rows, "onebit", "collectives", 4)
expect(rows, "onebit", "comm_s", 12 * 0.010 + 6 * chunk / 1.25e8 + 6 * 4 / 1.25e8, 1e-12)
# 0/1 Adam long after its freeze: the same exchange once every local_step_clipper steps.
rows = plan("--model", "tiny", "--world-size", "4", "--method", "zo: strategy.name=zero_one_adam "
            "strategy.zero_one_adam.local_step_clipper=8")
expect(rows, "zo", "payload_bytes", (3 * chunk + 4 + chunk + 4) / 8, 1e-15)
expect(rows, "zo", "syncs_per_step", 1 / 8, 1e-15)
# DES-LOC: the parameters every K_x = 16 steps, AdamW's moments every 48 and 96 (its defaults).
rows = plan("--model", "tiny", "--world-size", "4", "--method", "desloc: strategy.name=desloc")
expect(rows, "desloc", "syncs_per_step", 1 / 16 + 1 / 48 + 1 / 96, 1e-15)
expect(rows, "desloc", "payload_bytes", 4 * n * (1 / 16 + 1 / 48 + 1 / 96), 1e-15)

# The priced step: PowerSGD sends the dense gradient before its start_step, factors after.
rows = plan("--model", "tiny", "--world-size", "4", "--step", "0",
            "--method", "p: compressor.name=powersgd compressor.powersgd.start_step=10")
expect(rows, "p", "payload_bytes", 4 * n)
rows = plan("--model", "tiny", "--world-size", "4",
            "--method", "p: compressor.name=powersgd compressor.powersgd.start_step=10")
if not float(rows["p"]["payload_bytes"]) < 4 * n / 10:
    failures.append(f"powersgd past its start_step sends {rows['p']['payload_bytes']} bytes")

# A JSON model: dct_topk cuts (128, 64) into 2 x 1 blocks of 64 x 64, (64, 96) into 1 x 2 blocks
# of 64 x 48, (96) into 2 blocks of 48; k = 5 per block. Reference wire: int64 index + fp32 value.
# compact_1bit: the smallest index type that holds a block's h·w (uint16 for 4096 and 3072, uint8
# for 48) and one sign bit per value, the bits padded to whole bytes.
rows = plan("--model", JSON_MODEL, "--world-size", "3",
            "--method", "ref: strategy.name=demo compressor.dct_topk.topk=5",
            "--method", "onebit: strategy.name=demo compressor.dct_topk.topk=5 compressor.dct_topk.wire=compact_1bit",
            "--method", "topk: compressor.name=topk compressor.topk.k=10",
            "--method", "muloco: strategy.name=diloco strategy.diloco.inner_steps=30 optimizer.name=muon "
            "compressor.name=topk compressor.topk.k=10 compressor.topk.value_type=codebook "
            "compressor.topk.index_width=smallest",
            "--method", "dct2bit: strategy.name=demo compressor.dct_topk.topk=5 compressor.dct_topk.value_type=codebook "
            "compressor.dct_topk.index_width=packed12",
            "--method", "vote: compressor.name=majority_vote",
            "--method", "psyche: strategy.name=demo compressor.dct_topk.topk=5 compressor.dct_topk.wire=compact_1bit "
            "strategy.demo.pipeline=psyche")
blocks = 2 + 2 + 2
expect(rows, "ref", "payload_bytes", blocks * 5 * 12)
selected, index_bytes = [2 * 5, 2 * 5, 2 * 5], [2, 2, 1]
expect(rows, "onebit", "payload_bytes", sum(k * i + (k + 7) // 8 for k, i in zip(selected, index_bytes)))
# Psyche's pipeline delays the exchange; its bytes are the 1-bit wire's.
expect(rows, "psyche", "payload_bytes", sum(k * i + (k + 7) // 8 for k, i in zip(selected, index_bytes)))
# An all-gather on a ring: W - 1 blocks out and in.
expect(rows, "ref", "wire_sent_bytes", 2 * blocks * 5 * 12)
# topk: k int32 indices and k fp32 values per tensor.
expect(rows, "topk", "payload_bytes", 3 * 10 * 8)
# MuLoCo's 2-bit top-k, once every H = 30 steps: per tensor k = 10 indices of the smallest type
# (uint16 for 8192 and 6144 entries, uint8 for 96), 10 codes of 2 bits in 3 bytes, and the
# codebook's shift and 4 means in fp32.
expect(rows, "muloco", "payload_bytes", (10 * 2 + 10 * 2 + 10 * 1 + 3 * (3 + 20)) / 30, 1e-15)
# DeMo's coefficients on SparseLoCo's wire: per tensor 2 blocks x 5 = 10 selected, 12-bit indices
# in 15 bytes, 2-bit codes in 3 bytes and the 20-byte codebook.
expect(rows, "dct2bit", "payload_bytes", 3 * (15 + 3 + 20))
# signSGD with majority vote: one sign bit per entry, each tensor's bits padded to whole bytes,
# gathered (W - 1 payloads in on a ring).
expect(rows, "vote", "payload_bytes", 8192 // 8 + 6144 // 8 + 96 // 8)
expect(rows, "vote", "wire_received_bytes", 2 * (8192 // 8 + 6144 // 8 + 96 // 8))

# gTop-k (topk's tree) on the JSON model, k = 10 per tensor: 80-byte payloads, all three fused in
# one pair exchange per butterfly round. W = 4: two rounds of 10 ms + 240 B / 125 MB/s; W = 5 adds a
# fold and an unfold, which rank 0 and rank 4 take part in.
for world, rounds, busiest in ((4, 2, 2), (5, 4, 4)):
    rows = plan("--model", JSON_MODEL, "--world-size", str(world),
                "--method", "tree: compressor.name=topk compressor.topk.k=10 compressor.topk.exchange=tree")
    expect(rows, "tree", "payload_bytes", 240)
    expect(rows, "tree", "collectives", rounds)
    expect(rows, "tree", "wire_sent_bytes", busiest * 240)
    expect(rows, "tree", "comm_s", rounds * (0.010 + 240 / 1.25e8), 1e-12)
# Regional (compressor.merge_groups = 3) at W = 6: groups {0, 1, 2} and {3, 4, 5}; reduce (1 -> 0,
# 4 -> 3; then 2 -> 0, 5 -> 3), the representatives 0 and 3 swap, broadcast (0 -> 2, 3 -> 5; then
# 0 -> 1, 3 -> 4): five rounds, ranks 0 and 3 send in three and receive in three.
rows = plan("--model", JSON_MODEL, "--world-size", "6",
            "--method", "regional: compressor.name=topk compressor.topk.k=10 compressor.topk.exchange=tree "
            "compressor.merge_groups=\"3\"",
            "--method", "dense-regional: compressor.none.value_type=bf16 compressor.none.exchange=tree "
            "compressor.merge_groups=3")  # a number as docs/network-model.md writes n, or its text as above
expect(rows, "regional", "collectives", 5)
expect(rows, "regional", "wire_sent_bytes", 3 * 240)
expect(rows, "regional", "wire_received_bytes", 3 * 240)
expect(rows, "regional", "comm_s", 5 * (0.010 + 240 / 1.25e8), 1e-12)
# The dense tree on the same rounds: the whole model (14432 bf16 values) in every message.
dense = 2 * (8192 + 6144 + 96)
expect(rows, "dense-regional", "payload_bytes", dense)
expect(rows, "dense-regional", "collectives", 5)
expect(rows, "dense-regional", "wire_sent_bytes", 3 * dense)
expect(rows, "dense-regional", "comm_s", 5 * (0.010 + dense / 1.25e8), 1e-12)

# A step's time with --step-compute-ms c: c plus what the exchanges leave exposed. Dense blocks;
# Psyche's pipeline waits for a step's exchange one step later, so c of it is hidden; streaming
# DiLoCo (F = 2 fragments, H = 10, tau = 2) hides 2c of each fragment's sync, F/H syncs a step.
methods = ["--method", "dense:", "--method", "psyche: strategy.name=demo strategy.demo.pipeline=psyche",
           "--method", "streaming: strategy.name=diloco strategy.diloco.inner_steps=10 strategy.diloco.fragments=2 "
           "strategy.diloco.overlap_steps=2"]
c = 0.001  # below every exchange's time here: nothing is hidden whole
rows = plan("--model", "tiny", "--world-size", "4", "--step-compute-ms", "1", *methods)
for method, hidden in (("dense", 0.0), ("psyche", c), ("streaming", 2 / 10 * 2 * c)):
    comm = float(rows[method]["comm_s"])
    expect(rows, method, "compute_s", c, 1e-15)
    expect(rows, method, "exposed_s", comm - hidden, 1e-12)
rows = plan("--model", "tiny", "--world-size", "4", "--step-compute-ms", "60000", *methods)  # a minute
expect(rows, "dense", "exposed_s", float(rows["dense"]["comm_s"]), 1e-12)
for method in ("psyche", "streaming"):
    if float(rows[method]["exposed_s"]) != 0:
        failures.append(f"{method}: a minute of compute leaves {rows[method]['exposed_s']} s exposed, not 0")

# Without --step-compute-ms, a method's modelled compute (cluster.step_compute_ms) prices its step.
rows = plan("--model", "tiny", "--world-size", "4",
            "--method", "modelled: cluster.step_compute_ms=1", "--method", "measured:")
expect(rows, "modelled", "compute_s", 0.001, 1e-15)
expect(rows, "modelled", "exposed_s", float(rows["modelled"]["comm_s"]), 1e-12)
if rows["measured"].get("compute_s") not in (None, "", "0", "0.0"):
    failures.append(f"measured: compute_s {rows['measured']['compute_s']!r} without a compute time")

# The published figures (REFERENCE.md §5), as docs/plan.md reproduces them.
rows = plan("--model", "olmo-1b", "--world-size", "64",
            "--method", "demo: strategy.name=demo compressor.dct_topk.topk=16",
            "--method", "adamw: compressor.none.value_type=bf16")
expect(rows, "demo", "parameters", 1_176_764_416)
expect(rows, "demo", "payload_bytes", 287_296 * 16 * 12)  # 55.16 MB
expect(rows, "adamw", "payload_bytes", 2 * 1_176_764_416)
rows = plan("--model", "olmo-300m", "--world-size", "64",
            "--method", "demo: strategy.name=demo compressor.dct_topk.topk=8")
expect(rows, "demo", "payload_bytes", 78_112 * 8 * 12)  # 7.50 MB
rows = plan("--model", "llama-1.2b", "--world-size", "32",
            "--method", "adamw: compressor.none.value_type=bf16")
expect(rows, "adamw", "distro_received_bytes", 31 * 2 * 1_204_881_408)  # 74.7 GB

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("plan: every hand-computed figure matches")
