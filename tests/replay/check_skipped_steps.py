"""Checks a replay run with replay.nonfinite = skip: the skipped steps left the parameters as they
were and carry no traffic and NaN metrics; the other steps moved the parameters.

Usage: check_skipped_steps.py OUT SKIPPED_STEP...
"""
import sys

import h5py
import numpy as np

out, skipped = sys.argv[1], [int(s) for s in sys.argv[2:]]
with h5py.File(out, "r") as f:
    steps = f["steps/step"].shape[0]
    for name in f["params"]:
        params = f[f"params/{name}"][:]  # [steps + 1, W, *shape]
        for s in range(steps):
            unchanged = np.array_equal(params[s + 1], params[s])
            assert unchanged == (s in skipped), (name, s, unchanged)
            assert np.isfinite(params[s + 1]).all(), (name, s)
    for s in range(steps):
        assert (f["steps/bytes_sent"][s] == 0).all() == (s in skipped), (s, f["steps/bytes_sent"][s])
        assert np.isnan(f["steps/relative_error"][s]).all() == (s in skipped), s
print(f"skipped steps {skipped}: parameters unchanged, no traffic, NaN metrics; the others applied")
