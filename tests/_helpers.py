"""Helpers shared by several test modules (tests/ is on sys.path: pytest's rootdir import mode)."""

import os


def with_path(folder):
    """The environment with ``folder`` first on PYTHONPATH (kept: a host may find gpude through it)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
