"""Failure modes (issue 16, docs/failures.md): each gives a message naming the problem and the fix, and
loses nothing already written. (NaN from a user objective: tests/test_minimize.py; bad experiment
keys: tests/test_workflow.py; altered CEC data: tests/test_cecdata.py.)"""

import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _helpers import with_path

from gpude import run_trial
from gpude.core import io
from gpude.core.errors import GpudeError, GPUOutOfMemoryError

ROOT = Path(__file__).resolve().parents[1]


def full_disk(monkeypatch):
    def fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(io.os, "fsync", fsync)


SMALL_FS = 64 * 1024


def _why_no_small_filesystem():
    """Why this machine cannot mount a 64 KiB tmpfs (None: it can; tried once, at collection)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not root"
    if not shutil.which("mount"):
        return "no mount command"
    probe = Path(tempfile.mkdtemp(prefix="gpude-tmpfs-probe."))
    try:
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_FS}", "tmpfs", str(probe)],
                             capture_output=True, text=True, timeout=30)
        if res.returncode != 0:
            return f"mount failed: {(res.stderr or res.stdout).strip()[:80] or res.returncode}"
        subprocess.run(["umount", str(probe)], check=True, timeout=30)
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        return f"mount failed: {exc}"
    finally:
        probe.rmdir()


NO_SMALL_FILESYSTEM = _why_no_small_filesystem()


@pytest.fixture(params=["real 64 KiB tmpfs" if NO_SMALL_FILESYSTEM is None
                        else f"simulated ENOSPC from fsync, no real filesystem ({NO_SMALL_FILESYSTEM})"])
def small_disk(request, tmp_path, monkeypatch):
    """A folder that runs out of space: on a real 64 KiB tmpfs where this machine can mount one
    (root), unmounted by the finalizer; otherwise on tmp_path with fsync reporting ENOSPC (the
    simulated full disk). The test id says which."""
    folder = tmp_path / "small"
    folder.mkdir()
    if NO_SMALL_FILESYSTEM is None:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_FS}", "tmpfs", str(folder)], check=True, timeout=30)
        request.addfinalizer(lambda: subprocess.run(["umount", str(folder)], check=True, timeout=30))
        stat = os.statvfs(folder)
        assert stat.f_blocks * stat.f_frsize == SMALL_FS  # really the small filesystem
    else:
        full_disk(monkeypatch)
    return folder


def test_a_full_disk_during_a_write_names_the_file_and_keeps_the_old_one(small_disk):
    path = small_disk / "trials.csv"
    path.write_text("old\n")
    with pytest.raises(io.DiskFullError, match=r"no space left on the device .* while writing .*trials.csv .* free "
                                               r"space or point the results elsewhere"):
        io.write_atomic(path, "new\n" * (SMALL_FS // 2))  # twice the filesystem
    assert path.read_text() == "old\n" and [p.name for p in small_disk.iterdir()] == ["trials.csv"]
    if NO_SMALL_FILESYSTEM is None:  # on the real one, what fits is written as ever
        io.write_atomic(path, "new\n")
        assert path.read_text() == "new\n"


def test_a_full_disk_during_a_batch_leaves_no_batch(tmp_path, monkeypatch):
    from gpude.run.rows import trial_row, write_batch

    r = run_trial(function="Q01", dim=10, popsize=8, max_fes=40, seed=1)
    full_disk(monkeypatch)
    with pytest.raises(io.DiskFullError):
        write_batch([trial_row(r, 0, 0.0)], [r], tmp_path / "b.csv", tmp_path / "b.npz")
    assert not list(tmp_path.iterdir())  # no CSV (the mark of a complete batch), no traces, no temporaries


@pytest.mark.cudasim
def test_a_gpu_out_of_memory_names_the_sizes_and_what_to_lower(monkeypatch):
    from gpude.implementations import device_loop

    class CudaAPIError(Exception):  # numba's, as the driver reports it
        code = 2

    def device_array(*args, **kwargs):
        raise CudaAPIError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")
    monkeypatch.setattr(device_loop.cuda, "device_array", device_array)
    with pytest.raises(GPUOutOfMemoryError, match=r"ran out of memory for 1 trial\(s\) of de/all_gpu at NP = 8, "
                                                  r"D = 10: about .* GB of populations and .* GB of traces .*"
                                                  r"lower trials_per_launch or max_fes"):
        run_trial(implementation="all_gpu", function="Q01", dim=10, popsize=8, max_fes=80, seed=1)


@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="a real GPU's out-of-memory (on the simulator it is simulated: the test above)")
def test_a_real_gpu_out_of_memory_names_the_sizes_and_what_to_lower():
    # a trace buffer of 10^12 / 8 generations (1 TB) on any GPU there is; then a run that fits still runs
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA GPU on this machine")
    with pytest.raises(GPUOutOfMemoryError, match=r"ran out of memory for 1 trial\(s\) of de/all_gpu at NP = 8, "
                                                  r"D = 10: about 0.00 GB of populations and 1000.00 GB of traces"):
        run_trial(implementation="all_gpu", function="Q01", dim=10, popsize=8, max_fes=10**12, seed=1)
    assert run_trial(implementation="all_gpu", function="Q01", dim=10, popsize=8, max_fes=80, seed=1).fes_used == 80


def test_a_missing_instance_file_names_the_command_that_fetches_it(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(tmp_path))  # an empty data root
    from gpude.problems import lop

    lop.get_lop.cache_clear()
    with pytest.raises(GpudeError, match=r"instance file .*be75eec is missing: run `gpude fetch-data lolib`"):
        run_trial(function="be75eec", dim=50, popsize=8, max_fes=16)
    lop.get_lop.cache_clear()


# --- the workflow ------------------------------------------------------------------------------------

# de/sequential behind a gate, so the test decides where the first run is killed instead of racing
# it: while a file `gate` exists, the first batch runs and every later run waits (saying so by
# creating `waiting`); without the file it is de/sequential, the same run per seed
GATED_PLUGIN = '''
import time
from pathlib import Path

from gpude.implementations.sequential import Sequential
from gpude.implementations.registry import register


class Gated(Sequential):
    name = "gated"

    def run(self, seed):
        if Path("gate").exists() and list(Path("results/crash/batches").rglob("*.csv")):
            Path("waiting").touch()
            while Path("gate").exists():
                time.sleep(0.05)
        return super().run(seed)


register("de", "gated", "gated_plugin:Gated", "cpu", "de/sequential behind a gate file (a test)")
'''

EXPERIMENT = """name: crash
seed: 3
trials: 4
trials_per_job: 1
plugins: [gated_plugin]
algorithms:
  de:
    implementations: [gated]
functions: [Q01]
dims: [10]
popsizes: [20]
max_fes: 2000
timing: exclusive
"""


def workflow_copy(tmp_path, name):
    work = tmp_path / name
    work.mkdir()
    for part in ("Snakefile", "workflow", "config", "profiles"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / part)
    (work / "config/experiments/crash.yaml").write_text(EXPERIMENT)
    (work / "gated_plugin.py").write_text(GATED_PLUGIN)
    return work


SNAKEMAKE = [sys.executable, "-m", "snakemake", "--cores", "1", "--configfile", "config/experiments/crash.yaml"]


def snakemake(work, *args):
    return subprocess.run([*SNAKEMAKE, *args, "--", "results/crash/trials.csv"], cwd=work, capture_output=True,
                          text=True, timeout=600, env=with_path(work))


@pytest.mark.io
@pytest.mark.slow
def test_kill_9_mid_run_and_a_second_run_on_the_same_folder(tmp_path):
    work = workflow_copy(tmp_path, "crashed")
    (work / "gate").touch()
    first = subprocess.Popen([*SNAKEMAKE, "--", "results/crash/trials.csv"], cwd=work, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True,
                             env=with_path(work))
    deadline = time.time() + 300
    while time.time() < deadline and not (work / "waiting").exists() and first.poll() is None:
        time.sleep(0.1)
    assert (work / "waiting").exists(), "the first run should have finished one batch and be waiting in the next"
    # a second run on the same folder while the first holds it: refused, names the fix
    second = snakemake(work)
    assert second.returncode != 0 and "cannot be locked" in second.stdout + second.stderr
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    batches = work / "results/crash/batches"
    assert len(list(batches.rglob("*.csv"))) == 1  # the finished batch; the killed one left no CSV
    (work / "gate").unlink()
    # after kill -9 the lock stays: Snakemake says to unlock; then the run resumes where it stopped
    again = snakemake(work)
    assert again.returncode != 0 and "--unlock" in again.stdout + again.stderr
    assert snakemake(work, "--unlock").returncode == 0
    resumed = snakemake(work)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    trials = io.read_csv(work / "results/crash/trials.csv")  # (every float as written: gpude.core.io.read_csv)
    assert sorted(trials["trial"]) == list(range(4))  # no partial and no duplicate rows
    # identical to uninterrupted runs of the same seeds (the gated implementation is de/sequential)
    from gpude.core.rng import trial_seed

    for row in trials.to_dict("records"):
        assert row["seed"] == trial_seed(3, "Q01", 10, 20, row["trial"])
        r = run_trial(implementation="sequential", function="Q01", dim=10, popsize=20, max_fes=2000,
                      seed=row["seed"])
        assert r.best_error == row["best_error"] and r.fes_used == row["fes_used"]


FAILING_PLUGIN = '''
from gpude.implementations.sequential import Sequential
from gpude.implementations.registry import register


class Failing(Sequential):
    name = "failing"

    def run(self, seed):
        if seed % 2:
            raise RuntimeError("boom at seed %d" % seed)
        return super().run(seed)


register("de", "failing", "failing_plugin:Failing", "cpu", "fails on odd seeds (a test)")
'''


def test_a_trial_that_raises_is_a_row_with_its_error_and_the_batch_says_so(tmp_path):
    # in a subprocess: the plugin never enters this process's registry
    (tmp_path / "failing_plugin.py").write_text(FAILING_PLUGIN)
    res = subprocess.run([sys.executable, "-m", "gpude", "run", "--plugin", "failing_plugin", "--implementation",
                          "failing", "--function", "Q01", "--dim", "10", "--popsize", "8", "--max-fes", "40",
                          "--seeds", "2,3,4", "--out-csv", "b.csv", "--out-traces", "b.npz"],
                         cwd=tmp_path, env=with_path(tmp_path),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1 and "FAILED RuntimeError: boom at seed 3" in res.stderr
    rows = pd.read_csv(tmp_path / "b.csv")
    assert list(rows["seed"]) == [2, 3, 4]  # kept, in order
    assert rows["status"].tolist()[1] == "error:RuntimeError: boom at seed 3"
    assert rows["status"].tolist()[0] == rows["status"].tolist()[2] == "budget"


def test_with_path_puts_the_folder_first_and_keeps_what_was_there(tmp_path, monkeypatch):
    # the one PYTHONPATH helper (tests/_helpers.py) that test_tutorial.py and these tests share
    import test_tutorial

    assert test_tutorial.with_path is with_path
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert with_path(tmp_path)["PYTHONPATH"] == os.pathsep.join([str(tmp_path), "/elsewhere"])
    monkeypatch.delenv("PYTHONPATH")
    assert with_path(tmp_path)["PYTHONPATH"] == str(tmp_path)


@pytest.mark.io
def test_floats_come_back_from_a_csv_as_they_were_written(tmp_path):
    # every table is written with 17 digits and read through gpude.core.io.read_csv: on the H100 host
    # (pandas 3.0.6) a merged trials.csv's best error came back 1 ulp off its run's
    values = io._probe_values()[::-1] * 3.0  # not the probe's own numbers
    io.write_csv_atomic(pd.DataFrame({"best_error": values, "trial": np.arange(values.size)}), tmp_path / "t.csv")
    got = io.read_csv(tmp_path / "t.csv")
    np.testing.assert_array_equal(got["best_error"].to_numpy(), values)
    assert got["trial"].dtype.kind == "i"


def _inexact_parser(monkeypatch, request, round_trip_exact):
    """pandas.read_csv made to read floats 1 ulp high (the round-trip parser too, unless
    ``round_trip_exact``), as pandas 2.2's and 3.0's default parsers do for some numbers."""
    real = pd.read_csv
    calls = []

    def read_csv(path, **kw):
        calls.append(kw)
        frame = real(path, **kw)
        if round_trip_exact and kw.get("float_precision") == "round_trip":
            return frame
        for c in frame.columns:
            if frame[c].dtype.kind == "f":
                frame[c] = np.nextafter(frame[c].to_numpy(), np.inf)
        return frame

    monkeypatch.setattr(pd, "read_csv", read_csv)
    io.float_options.cache_clear()  # probe again, and once more for the real parser afterwards
    request.addfinalizer(io.float_options.cache_clear)
    return calls


@pytest.mark.io
@pytest.mark.parametrize("round_trip_exact", [True, False])
def test_the_float_parser_is_chosen_by_what_it_does(tmp_path, monkeypatch, request, round_trip_exact):
    # an inexact default parser: the round-trip one where it is exact, else the floats parsed by Python
    values = np.array([0.5772087835620993, 0.1 + 0.2, 1e-300, 12345.678901234567, np.nan])
    io.write_csv_atomic(pd.DataFrame({"best_error": values, "status": ["budget"] * 5}), tmp_path / "t.csv")
    calls = _inexact_parser(monkeypatch, request, round_trip_exact)
    got = io.read_csv(tmp_path / "t.csv", comment="#")
    assert io.float_options() == ({"float_precision": "round_trip"} if round_trip_exact else None)
    np.testing.assert_array_equal(got["best_error"].to_numpy(), values)
    assert list(got["status"]) == ["budget"] * 5 and calls[-1]["comment"] == "#"


@pytest.mark.io
def test_the_package_reads_every_csv_through_the_exact_reader():
    # a table read with pandas' default parser and written again would change committed numbers
    src = Path(io.__file__).parent
    direct = [f"{p.relative_to(src)}:{n}" for p in sorted(src.rglob("*.py")) if p.name != "io.py"
              for n, line in enumerate(p.read_text().splitlines(), 1)
              if re.search(r"\b(pd|pandas)\.read_csv\(", line)]
    assert direct == [], "read CSV tables with gpude.core.io.read_csv: " + ", ".join(direct)
