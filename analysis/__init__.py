"""Ablation reports from lowcomm run logs (docs/log-format.md): tables and plots.

Needs only h5py, numpy, pandas and matplotlib. Entry point: ``python3 -m analysis report``.
"""

from .logs import Run, find_logs, load_runs, read_run  # noqa: F401
from .methods import method_label  # noqa: F401

__all__ = ["Run", "find_logs", "load_runs", "read_run", "method_label"]
