"""Reads a `lowcomm bench collectives --log` file with h5py, as a researcher would, and checks
that it holds the table the command printed: sizes, positive times, per-rank bytes that match
the ring formulas, and the run's metadata."""
import sys

import h5py
import numpy as np

path, world_size, min_bytes, max_bytes, factor = sys.argv[1], *map(int, sys.argv[2:6])
sizes = []
size = min_bytes
while size <= max_bytes:
    sizes.append(size)
    size *= factor

with h5py.File(path, "r", libver="latest", swmr=True) as f:
    assert f.attrs["world_size"] == world_size, f.attrs["world_size"]
    assert len(f.attrs["hosts"]) == world_size
    assert 'scenario = "consumer"' in f.attrs["config"], f.attrs["config"]
    assert f.attrs["format_version"] == 2
    for table in ("all_reduce", "all_gather"):
        g = f[table]
        w = world_size
        if table == "all_reduce":
            expected_sizes = sizes
        else:  # the gathered total is W equal float32 blocks
            expected_sizes = [max(1, s // 4 // w) * w * 4 for s in sizes]
        np.testing.assert_array_equal(g["bytes"][:], expected_sizes)
        assert (g["time_s"][:] > 0).all() and (g["raw_mpi_time_s"][:] > 0).all()
        sent = g["bytes_sent"][:]
        assert sent.shape == (len(sizes), world_size), sent.shape
        for row, n in enumerate(expected_sizes):
            if table == "all_reduce":
                # Ring: rank r sends every chunk but (r+1) and (r+2) once; chunks of whole floats.
                count = n // 4
                chunk = [(count // w + (c < count % w)) * 4 for c in range(w)]
                expected = [2 * n - chunk[(r + 1) % w] - chunk[(r + 2) % w] if w > 1 else 0
                            for r in range(w)]
            else:
                expected = [(w - 1) * n // w] * w
            np.testing.assert_array_equal(sent[row], expected)
        # The consumer scenario's ring (30 ms, 10 Mbps up): the closed forms of REFERENCE.md §6,
        # with the largest chunk of whole floats bounding each all-reduce round.
        alpha, beta = 0.030, 10e6 / 8
        for row, n in enumerate(expected_sizes):
            if w == 1:
                expected_time = 0.0
            elif table == "all_reduce":
                count = n // 4
                expected_time = 2 * (w - 1) * (alpha + -(-count // w) * 4 / beta)
            else:
                expected_time = (w - 1) * (alpha + n / w / beta)
            np.testing.assert_allclose(g["modelled_s"][row], expected_time, rtol=1e-12)
print(f"{path}: ok")
