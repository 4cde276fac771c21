"""End-to-end test of `lowcomm replay`, as a researcher would use it: replays the trace that
make_traces.py wrote for W ranks through compressor `none` and through `topk` (k = 2, error
feedback), and checks the outputs against an independent numpy implementation: the parameters
after every step, the bytes every rank sent and received (ring formulas), the reconstruction
metrics, shapes and attributes.

Usage: check_replay.py LOWCOMM MPIEXEC RANKS TRACE_FOLDER OUTPUT_FOLDER
"""
import os
import subprocess
import sys

import h5py
import numpy as np

from make_traces import SHAPES, STEPS, make_values

lowcomm, mpiexec, folder, out_folder = sys.argv[1], sys.argv[2], sys.argv[4], sys.argv[5]
W, LR = int(sys.argv[3]), 0.05
NAMES = sorted(SHAPES)
os.makedirs(out_folder, exist_ok=True)
trace = os.path.join(folder, f"trace-w{W}.h5")
initial, grads = make_values(W)


def replay(out, *settings):
    for path in (out, out + ".partial"):
        if os.path.exists(path):
            os.remove(path)
    command = [mpiexec, "-n", str(W), "--oversubscribe", lowcomm, "replay", "--trace", trace,
               "--out", out, "--set", f"replay.lr={LR}", "--set", "seed=7"]
    for s in settings:
        command += ["--set", s]
    result = subprocess.run(command, capture_output=True, text=True)
    print(result.stdout, result.stderr)
    assert result.returncode == 0, f"replay failed with exit status {result.returncode}"
    assert not os.path.exists(out + ".partial"), "the .partial file was left behind"
    return h5py.File(out, "r")


def flat(values_by_name, index=()):
    return np.concatenate([np.ravel(values_by_name[n][index]) for n in NAMES])


def ring_all_reduce_sent(count, w):
    """Bytes each rank sends in a ring all-reduce of `count` float32 (lib/comm's schedule)."""
    if w == 1:
        return np.zeros(1, dtype=np.int64)
    chunk = [(count // w + (c < count % w)) * 4 for c in range(w)]
    return np.array([2 * count * 4 - chunk[(r + 1) % w] - chunk[(r + 2) % w] for r in range(w)])


def check_common(f, compressor):
    """The run-log layout (docs/replay.md): root attributes, the steps table, the arrays."""
    assert f.attrs["world_size"] == W and f.attrs["kind"] == "replay"
    assert f.attrs["compressor"] == compressor
    assert f.attrs["trace"] == os.path.abspath(trace), f.attrs["trace"]
    assert f.attrs["format_version"] == 2
    assert f.attrs["seed"] == 7 and len(f.attrs["hosts"]) == W
    assert f'name = "{compressor}"' in f.attrs["config"], f.attrs["config"]
    assert "lr = 0.05" in f.attrs["config"]
    assert f.attrs["lowcomm_version"] and f.attrs["git_revision"]
    assert list(f["params"]) == NAMES, list(f["params"])
    n = sum(int(np.prod(s)) for s in SHAPES.values())
    np.testing.assert_array_equal(f["dense_bytes_sent"][:], ring_all_reduce_sent(n, W))
    for name in NAMES:
        assert f[f"params/{name}"].shape == (STEPS + 1, W) + SHAPES[name]
        assert f[f"params/{name}"].dtype == np.float32
        for w in range(W):
            np.testing.assert_array_equal(f[f"params/{name}"][0, w], initial[name])
    steps = f["steps"]
    np.testing.assert_array_equal(steps["step"][:], np.arange(STEPS))
    np.testing.assert_array_equal(steps["lr"][:], [LR] * STEPS)
    for d in ("bytes_sent", "bytes_received", "payload_bytes", "present"):
        assert steps[d].shape == (STEPS, W) and steps[d].dtype == np.int64, (d, steps[d].shape, steps[d].dtype)
    assert (steps["present"][:] == 1).all()
    for d in ("relative_error", "cosine", "cumulative_relative_error"):
        assert steps[d].shape == (STEPS, W) and steps[d].dtype == np.float64
    for d in ("compress_s", "comm_measured_s", "comm_modelled_s", "comm_exposed_s", "comm_hidden_s", "simulated_s"):
        assert steps[d].shape == (STEPS,) and steps[d].dtype == np.float64, d
    # The default network (1 Gbps, simulate) charges time for every exchange between ranks, and
    # nothing overlaps compute in a replay: the rank that waited longest waited at least that long.
    assert (steps["comm_modelled_s"][:] > 0).all() == (W > 1)
    assert (steps["comm_exposed_s"][:] >= steps["comm_modelled_s"][:] * (1 - 1e-9)).all()
    assert (np.diff(steps["simulated_s"][:]) > 0).all()


def check_params(f, aggregates):
    """aggregates[s]: the flat aggregate every rank applies at step s."""
    x = flat(initial)
    for s in range(STEPS):
        x = x - np.float32(LR) * aggregates[s]
        for w in range(W):
            got = np.concatenate([np.ravel(f[f"params/{n}"][s + 1, w]) for n in NAMES])
            np.testing.assert_allclose(got, x, rtol=1e-5, atol=1e-6)


def mean_gradient(s):
    return np.mean(np.stack([flat(grads, (s, w)) for w in range(W)]), axis=0, dtype=np.float32)


# ---- none: dense mean, one fused ring all-reduce of every tensor per step -----------------------
with replay(os.path.join(out_folder, f"none-w{W}.h5"), "compressor.name=none") as f:
    check_common(f, "none")
    check_params(f, [mean_gradient(s) for s in range(STEPS)])
    n = sum(int(np.prod(s)) for s in SHAPES.values())
    sent = ring_all_reduce_sent(n, W)
    for s in range(STEPS):
        np.testing.assert_array_equal(f["steps/bytes_sent"][s], sent)
        np.testing.assert_array_equal(f["steps/bytes_received"][s], np.roll(sent, 1))  # from rank r-1
        np.testing.assert_array_equal(f["steps/payload_bytes"][s], [4 * n] * W)
    # The metrics compare the update (x_before - x_after) / lr, recovered from fp32 parameters, with
    # the dense mean: equal up to the parameters' rounding (|x| / |lr * g| ulps) and summation order.
    assert (f["steps/relative_error"][:] <= 1e-5).all(), f["steps/relative_error"][:]
    np.testing.assert_allclose(f["steps/cosine"][:], 1.0, atol=1e-6)

# ---- topk, k = 2 with error feedback: gathered (index int32, value fp32) pairs -------------------
K = 2
with replay(os.path.join(out_folder, f"topk-w{W}.h5"), "compressor.name=topk",
            "compressor.topk.k=2", "compressor.topk.error_feedback=true") as f:
    check_common(f, "topk")
    residual = {(n, w): np.zeros(int(np.prod(SHAPES[n])), np.float32)
                for n in NAMES for w in range(W)}
    aggregates, expected_error, expected_cumulative = [], [], []
    total_a, total_m = 0.0, 0.0
    for s in range(STEPS):
        parts = []
        for n in NAMES:
            size = int(np.prod(SHAPES[n]))
            k = min(K, size)
            total = np.zeros(size, np.float32)
            for w in range(W):
                corrected = np.ravel(grads[n][s, w]) + residual[(n, w)]
                keep = np.argsort(-np.abs(corrected), kind="stable")[:k]  # ties: lower index
                sent_values = np.zeros(size, np.float32)
                sent_values[keep] = corrected[keep]
                residual[(n, w)] = corrected - sent_values
                total += sent_values
            parts.append(total / np.float32(W))
        a = np.concatenate(parts)
        aggregates.append(a)
        m = mean_gradient(s).astype(np.float64)
        expected_error.append(np.linalg.norm(a - m) / np.linalg.norm(m))
        total_a, total_m = total_a + a.astype(np.float64), total_m + m
        expected_cumulative.append(np.linalg.norm(total_a - total_m) / np.linalg.norm(total_m))
    check_params(f, aggregates)
    payload = sum(8 * min(K, int(np.prod(s))) for s in SHAPES.values())  # 16 + 16 + 8
    for s in range(STEPS):
        np.testing.assert_array_equal(f["steps/bytes_sent"][s], [(W - 1) * payload] * W)
        np.testing.assert_array_equal(f["steps/bytes_received"][s], [(W - 1) * payload] * W)
        np.testing.assert_array_equal(f["steps/payload_bytes"][s], [payload] * W)
    error = f["steps/relative_error"][:]
    assert (error > 0).all(), error
    cumulative = f["steps/cumulative_relative_error"][:]
    for w in range(W):
        np.testing.assert_allclose(error[:, w], expected_error, rtol=1e-4)
        np.testing.assert_allclose(cumulative[:, w], expected_cumulative, rtol=1e-4)
    # Error feedback sends later what it holds back: the cumulative error falls below the per-step one.
    assert cumulative[-1].mean() < error[-1].mean(), (cumulative[-1], error[-1])
    assert ((f["steps/cosine"][:] > 0) & (f["steps/cosine"][:] < 1)).all()

# ---- replay.steps, and an --out that exists ----------------------------------------------
with replay(os.path.join(out_folder, f"short-w{W}.h5"), "replay.steps=2") as f:
    assert f["steps/step"].shape == (2,) and f["params/layer.bias"].shape == (3, W, 11)
out = os.path.join(out_folder, f"short-w{W}.h5")
refused = subprocess.run([mpiexec, "-n", str(W), "--oversubscribe", lowcomm, "replay", "--trace",
                          trace, "--out", out], capture_output=True, text=True)
assert refused.returncode == 2 and "--force" in refused.stderr, (refused.returncode, refused.stderr)
with h5py.File(out, "r") as f:  # untouched
    assert f["steps/step"].shape == (2,)
forced = subprocess.run([mpiexec, "-n", str(W), "--oversubscribe", lowcomm, "replay", "--trace",
                         trace, "--out", out, "--force"], capture_output=True, text=True)
assert forced.returncode == 0, forced.stderr
with h5py.File(out, "r") as f:
    assert f["steps/step"].shape == (STEPS,)
print(f"replay at {W} ranks: ok")
