"""Writes the gradient traces the replay tests read, with h5py (independently of lowcomm's own
writer): a valid one per world size, and one per mistake the reader must explain.

Usage: make_traces.py FOLDER
"""
import os
import sys

import h5py
import numpy as np

STEPS = 4
# Deliberately not in sorted order: replay orders tensors (and so units) by name.
SHAPES = {"scale": (), "layer.weight": (5, 7), "layer.bias": (11,)}


def make_values(world_size):
    rng = np.random.default_rng(1234 + world_size)
    initial = {n: rng.standard_normal(s).astype(np.float32) for n, s in SHAPES.items()}
    grads = {n: rng.standard_normal((STEPS, world_size) + s).astype(np.float32)
             for n, s in SHAPES.items()}
    return initial, grads


def write_trace(path, world_size, initial, grads, attributes=True):
    with h5py.File(path, "w") as f:
        if attributes:
            f.attrs["world_size"] = world_size
        for n in initial:
            f[f"params/{n}"] = initial[n]
        for n in grads:
            f[f"grads/{n}"] = grads[n]


def main(folder):
    os.makedirs(folder, exist_ok=True)
    for w in (1, 2, 3):
        write_trace(os.path.join(folder, f"trace-w{w}.h5"), w, *make_values(w))
    initial, grads = make_values(3)
    write_trace(os.path.join(folder, "missing-grads.h5"), 3, initial,
                {n: g for n, g in grads.items() if n != "layer.bias"})
    write_trace(os.path.join(folder, "bad-shape.h5"), 3, initial,
                {**grads, "layer.weight": np.swapaxes(grads["layer.weight"], 2, 3)})
    write_trace(os.path.join(folder, "step-mismatch.h5"), 3, initial,
                {**grads, "scale": grads["scale"][:3]})
    write_trace(os.path.join(folder, "no-world-size.h5"), 3, initial, grads, attributes=False)
    write_trace(os.path.join(folder, "int-grads.h5"), 3, initial,
                {**grads, "layer.bias": grads["layer.bias"].astype(np.int32)})
    # NaN in rank 1's gradient of layer.weight at step 1, Inf in rank 0's of scale at step 2.
    initial, grads = make_values(2)
    grads["layer.weight"][1, 1, 2, 3] = np.nan
    grads["scale"][2, 0] = np.inf
    write_trace(os.path.join(folder, "nonfinite-w2.h5"), 2, initial, grads)
    with open(os.path.join(folder, "not-hdf5.h5"), "w") as f:
        f.write("step,loss\n0,1.0\n")


if __name__ == "__main__":
    main(sys.argv[1])
