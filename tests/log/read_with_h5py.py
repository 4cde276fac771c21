"""Reads lowcomm run logs with h5py alone, as analysis scripts and live monitoring do.

Usage: read_with_h5py.py <swmr_writer_child>

Starts the writer child (a log of the synthetic rows described in synthetic_rows.hpp), follows
the live file in SWMR mode while it grows, kills the writer, checks every flushed value of the
killed file, and loads /steps the way docs/log-format.md shows. Exits 77 (CTest: skipped) when
this Python lacks h5py or numpy.
"""
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as missing:
    print(f"skipped: {missing}")
    sys.exit(77)

WORLD_SIZE = 3
# Float64 columns of "steps" and their index k in the schema: they hold step + k / 8.
FLOAT_COLUMNS = {"lr": 2, "compute_s": 4, "grad_norm": 5, "compress_s": 9, "comm_measured_s": 10,
                 "comm_modelled_s": 11, "comm_exposed_s": 12, "comm_hidden_s": 13, "simulated_s": 14}


def table_columns(group):
    """The docs' loader: per-rank columns become name_0, name_1, ...; all cut to equal length."""
    rows = min(dataset.shape[0] for dataset in group.values())
    columns = {}
    for name, dataset in group.items():
        values = dataset[:rows]
        if values.ndim == 1:
            columns[name] = values
        else:
            for rank in range(values.shape[1]):
                columns[f"{name}_{rank}"] = values[:, rank]
    return columns


def check_rows(log, rows):
    steps = log["steps"]
    s = np.arange(rows)
    assert steps["step"].shape[0] >= rows, (steps["step"].shape, rows)
    np.testing.assert_array_equal(steps["step"][:rows], s)
    np.testing.assert_array_equal(steps["loss"][:rows], 1.0 / (s + 1))
    np.testing.assert_array_equal(steps["tokens"][:rows], 4096 * s)
    for name, k in FLOAT_COLUMNS.items():
        np.testing.assert_array_equal(steps[name][:rows], s + k / 8)
    ranks = np.arange(WORLD_SIZE)
    np.testing.assert_array_equal(steps["bytes_sent"][:rows], 100 * s[:, None] + ranks)
    np.testing.assert_array_equal(steps["bytes_received"][:rows], 100 * s[:, None] + 50 + ranks)
    np.testing.assert_array_equal(steps["present"][:rows], (s[:, None] + ranks) % 2)


def check_metadata(log):
    assert log.attrs["format_version"] == 2
    assert log.attrs["world_size"] == WORLD_SIZE
    assert log.attrs["seed"] == 7
    assert [str(host) for host in log.attrs["hosts"]] == ["a", "b", "c"]
    assert log.attrs["config"] == "[test]\nchild = true\n"
    assert log["steps/loss"].attrs["unit"] == "nats"
    assert log["steps/bytes_sent"].dtype == np.dtype("<i8")
    assert log["steps/loss"].dtype == np.dtype("<f8")


def next_report(writer):
    line = writer.stdout.readline()
    if not line:
        raise RuntimeError("the writer child exited early")
    return int(line.split()[1])


def wait_for_report(writer, rows):
    reported = 0
    while reported < rows:
        reported = next_report(writer)
    return reported


def main():
    writer_path = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "live.h5")
        writer = subprocess.Popen([writer_path, path, "5", "1e9", "0"], stdout=subprocess.PIPE,
                                  text=True)
        try:
            reported = wait_for_report(writer, 50)
            with h5py.File(path, "r", libver="latest", swmr=True) as log:
                check_metadata(log)
                check_rows(log, reported)
                seen = log["steps/step"].shape[0]
                reported = wait_for_report(writer, seen + 100)
                for dataset in log["steps"].values():
                    dataset.refresh()  # a live reader sees new rows only after refresh()
                assert log["steps/step"].shape[0] >= reported > seen
                check_rows(log, reported)
        finally:
            writer.kill()
            writer.wait()
            writer.stdout.close()

        with h5py.File(path, "r", libver="latest", swmr=True) as log:
            check_rows(log, reported)
            columns = table_columns(log["steps"])
        assert len({len(values) for values in columns.values()}) == 1
        assert sorted(name for name in columns if name.startswith("bytes_sent")) == [
            "bytes_sent_0", "bytes_sent_1", "bytes_sent_2"]
        try:
            import pandas
        except ImportError:
            print("pandas not available: DataFrame step not run")
        else:
            frame = pandas.DataFrame(columns).set_index("step")
            assert frame.index[reported - 1] == reported - 1
    print(f"ok: read {reported} flushed rows live and after a kill")


if __name__ == "__main__":
    main()
