"""Helpers shared by several test modules (tests/ is on sys.path: pytest's rootdir import mode)."""

import json
import os


def with_path(folder):
    """The environment with ``folder`` first on PYTHONPATH (kept: a host may find gpude through it)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}


def once_per_run(tmp_path_factory, name, make):
    """What ``make(folder)`` returns (JSON-able), made once per test run in a new folder: under xdist
    by the first worker that asks, in the temp folder that the workers share, the others waiting for it
    and reading it (xdist's own way, its --dist loadgroup, does not keep tests together on pytest 9.2:
    pytest-xdist issue 1386)."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's, above the workers' own (popen-gw0, ...)
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        made = root / f"{name}.json"
        if not made.exists():
            folder = root / name
            folder.mkdir()
            made.write_text(json.dumps(make(folder)))
        return json.loads(made.read_text())


def one_gpu_two_cores(monkeypatch):
    """The host the rows' labels are made for, here and in the subprocesses: one (fake) GPU, two cores,
    whatever machine runs the test (a host's GPUs and cores set the workflow's concurrency labels)."""
    monkeypatch.setenv("GPUDE_FAKE_GPUS", "1")
    monkeypatch.setenv("GPUDE_HOST_CORES", "2")
    for var in ("CUDA_VISIBLE_DEVICES", "GPUDE_GPU_DEVICES", "GPUDE_GPU_PREFETCH", "GPUDE_CPU_LANE"):
        monkeypatch.delenv(var, raising=False)
